import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, fail } from '../lib/errors.ts';
import type { FileService, IncomingBytes } from './service.ts';
import type { UploadGrant } from './upload-tokens.ts';

/** qiniu's own ceiling on the number of parts of one upload. */
export const maxParts = 10_000;
const uploadIdPattern = /^[0-9a-f]{32}$/;

/** A part kept on disk: `<number>.<md5>` once all its bytes arrived, `<number>.partial` while they do. */
interface KeptPart {
  partNumber: number;
  etag: string;
  path: string;
}

function noSuchUpload(): never {
  throw new ApiError('objectNotFound', 'No such upload: it was completed, aborted, expired or never started.');
}

/**
 * The upload of bytes whose size the SDK does not know (a Node stream), in qiniu's multipart protocol (v2), which
 * the SDK's qiniu uploader speaks: start, parts numbered from 1 sent one after another, complete or abort. Parts are
 * streamed to files under a folder of their own (`<dir>/<objectId>.<uploadId>/`), and on completion streamed, in
 * order, through FileService.receiveUpload into the backend, which writes the record as for a single PUT. The
 * token of POST /1.1/fileTokens is the permission for every step, for its one key, until it expires; parts of an
 * upload never completed are removed on abort, on completion and, once the token has expired, by the next start
 * of an upload and when the server starts (a deleted application's parts, which no upload of its own will sweep).
 */
export class UploadParts {
  constructor(
    private readonly files: FileService,
    private readonly dir: string,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** The grant of a token for the key a URL names (qiniu's URL-safe base64 of the key). */
  private async open(token: string, encodedKey: string): Promise<{ grant: UploadGrant; limit: number }> {
    const { grant, limit } = await this.files.openUpload(token);
    if (Buffer.from(encodedKey, 'base64url').toString('utf8') !== grant.key) fail('fileTokenInvalid', 'This upload token grants another key.');
    return { grant, limit };
  }

  private folder(grant: UploadGrant, uploadId: string): string {
    if (!uploadIdPattern.test(uploadId)) noSuchUpload();
    return join(this.dir, `${grant.objectId}.${uploadId}`);
  }

  private async kept(folder: string): Promise<{ parts: KeptPart[]; sending: boolean }> {
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      noSuchUpload();
    }
    const parts: KeptPart[] = [];
    let sending = false;
    for (const name of names) {
      const [number, etag] = name.split('.');
      if (etag === 'partial') sending = true;
      else parts.push({ partNumber: Number(number), etag, path: join(folder, name) });
    }
    parts.sort((a, b) => a.partNumber - b.partNumber);
    return { parts, sending };
  }

  private async sizeOf(parts: KeptPart[]): Promise<number> {
    let total = 0;
    for (const part of parts) total += (await stat(part.path)).size;
    return total;
  }

  /** POST …/uploads: a new upload of the token's key. */
  async start(token: string, encodedKey: string): Promise<{ uploadId: string; expireAt: number }> {
    const { grant } = await this.open(token, encodedKey);
    await this.sweep();
    const uploadId = randomBytes(16).toString('hex');
    await mkdir(this.folder(grant, uploadId), { recursive: true });
    return { uploadId, expireAt: Math.ceil(grant.expiresAt / 1000) };
  }

  /** PUT …/uploads/<id>/<n>: part n, only after parts 1 to n-1 and none being sent. */
  async putPart(token: string, encodedKey: string, uploadId: string, rawNumber: string, bytes: IncomingBytes): Promise<{ etag: string; md5: string }> {
    const { grant, limit } = await this.open(token, encodedKey);
    const folder = this.folder(grant, uploadId);
    const { parts, sending } = await this.kept(folder);
    const partNumber = /^[1-9][0-9]{0,4}$/.test(rawNumber) ? Number(rawNumber) : 0;
    if (partNumber < 1 || partNumber > maxParts) fail('incorrectType', `A part number is 1 to ${maxParts}.`);
    if (sending || partNumber !== parts.length + 1) {
      fail('incorrectType', `Parts are sent one after another from 1: the next part of this upload is ${parts.length + 1}${sending ? ', once the one being sent has arrived' : ''}.`);
    }
    const room = limit - (await this.sizeOf(parts));
    const tooLarge = new ApiError('payloadTooLarge', `A file may hold at most ${limit} bytes.`);
    if (bytes.length !== null && bytes.length > room) throw tooLarge;
    const partial = join(folder, `${partNumber}.partial`);
    const md5 = createHash('md5');
    let received = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        if (received > room) return done(tooLarge);
        md5.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(bytes.body, meter, createWriteStream(partial, { flags: 'wx' }));
      const etag = md5.digest('hex');
      await rename(partial, join(folder, `${partNumber}.${etag}`));
      return { etag, md5: etag };
    } catch (error) {
      await rm(partial, { force: true });
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') fail('incorrectType', `Part ${partNumber} is being sent already.`);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') noSuchUpload();
      throw error;
    }
  }

  /** POST …/uploads/<id> with `{parts: [{partNumber, etag}]}`: the parts, all and in order, become the file. */
  async complete(token: string, encodedKey: string, uploadId: string, body: unknown, gone: () => boolean): Promise<{ hash: string; key: string }> {
    const { grant } = await this.open(token, encodedKey);
    const folder = this.folder(grant, uploadId);
    const { parts, sending } = await this.kept(folder);
    const listed = (body as { parts?: unknown } | null)?.parts;
    if (!Array.isArray(listed) || listed.length === 0) fail('incorrectType', 'Completing an upload needs its parts: {"parts": [{"partNumber", "etag"}…]}.');
    if (sending) fail('incorrectType', 'A part of this upload is still being sent.');
    listed.forEach((part: { partNumber?: unknown; etag?: unknown } | null, index) => {
      const kept = parts[index];
      if (!kept || part?.partNumber !== index + 1 || part.etag !== kept.etag) {
        fail('incorrectType', `Part ${index + 1} is missing or not as it was received: parts are listed from 1, in order, with the etag each PUT answered.`);
      }
    });
    if (listed.length !== parts.length) fail('incorrectType', `This upload received ${parts.length} parts, not ${listed.length}.`);
    const joined = Readable.from(
      (async function* () {
        for (const part of parts) yield* createReadStream(part.path);
      })(),
      { objectMode: false },
    );
    try {
      const kept = await this.files.receiveUpload(token, { body: joined, length: await this.sizeOf(parts), gone });
      return { hash: kept.md5, key: grant.key };
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }

  /** DELETE …/uploads/<id>: the parts go; nothing was kept of the file. */
  async abort(token: string, encodedKey: string, uploadId: string): Promise<void> {
    const { grant } = await this.open(token, encodedKey);
    const folder = this.folder(grant, uploadId);
    await this.kept(folder);
    await rm(folder, { recursive: true, force: true });
  }

  /** Removes the parts of uploads whose token has expired (their folder untouched for longer than a token lives). */
  async sweep(): Promise<void> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const before = this.now() - this.ttlMs;
    for (const name of names) {
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => null);
      if (info && info.mtimeMs < before) await rm(path, { recursive: true, force: true });
    }
  }
}
