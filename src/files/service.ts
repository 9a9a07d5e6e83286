import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { lookup as mimeOf } from 'mime-types';
import type { AppRecord } from '../objects/types.ts';
import type { Clock } from '../lib/clock.ts';
import { isoDate } from '../lib/clock.ts';
import { ApiError, fail } from '../lib/errors.ts';
import { newObjectId } from '../lib/ids.ts';
import type { Caller } from '../objects/acl.ts';
import { parseWriteBody, type ObjectService } from '../objects/service.ts';
import type { JsonObject, StoredObject } from '../objects/types.ts';
import { isObject } from '../objects/values.ts';
import { masterCallerOf } from '../objects/query-reach.ts';
import { checkKey, maxKeyNameBytes, TooLarge, type FileBackend } from './backend.ts';
import { maxGrantBytes, openGrant, sealGrant, type UploadGrant } from './upload-tokens.ts';

export const fileClass = '_File';
type AppCaller = Caller & { app: AppRecord };

export interface FileServiceOptions {
  objects: ObjectService;
  backend: FileBackend;
  /** The application of an upload's token (an SDK's PUT of the bytes carries no keys). */
  app(appId: string): Promise<AppRecord | null>;
  secret: string;
  clock: Clock;
  /** Largest file the server takes from any app (FILE_MAX_BYTES); an app may set less (fileMaxBytes). */
  maxBytes: number;
  /** How long the upload URL POST /1.1/fileTokens gives is good for. */
  tokenTtlMs: number;
  /** The address the SDK PUTs the bytes to, for a token. */
  uploadUrl(token: string): string;
  /** The address the SDK's qiniu uploader starts from when the size is unknown (src/files/upload-parts.ts). */
  partsUploadUrl(token: string): string;
}

/** The bytes of an upload as the route hands them over. */
export interface IncomingBytes {
  body: Readable;
  /** Content-Length, when the client sent one. */
  length: number | null;
  /** Whether the sender's connection is gone: it will never learn the upload succeeded (and an SDK takes it as failed). */
  gone?(): boolean;
}

/** A file's name: what the record keeps and the key's extension comes from. */
function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 255 || /[\u0000-\u001f/\\]/.test(name)) fail('invalidFileName');
  return name;
}

/** The extension of a name, as a key may hold it. */
function extensionOf(name: string): string {
  const match = /\.([A-Za-z0-9]{1,16})$/.exec(name);
  return match ? `.${match[1].toLowerCase()}` : '';
}

/**
 * Keys as the hosted service made them, under the app's folder: 40 random characters and the name's extension,
 * or with keepFileName (`keep_file_name`) a random folder and the name itself, so the URL ends with the name.
 */
function newKey(appId: string, name: string, keepName: boolean): string {
  if (!keepName) return `${appId}/${randomBytes(30).toString('base64url')}${extensionOf(name)}`;
  try {
    return checkKey(`${appId}/${randomBytes(15).toString('base64url')}/${name}`);
  } catch {
    fail('invalidFileName', `With keepFileName the name ends the file's URL: it may not start with a dot nor hold more than ${maxKeyNameBytes} bytes.`);
  }
}

const masterOf = (caller: Caller): Caller => ({ appId: caller.appId, master: true, userId: null });

/**
 * Files (`_File` records and their bytes): the SDKs' upload (POST /1.1/fileTokens, a PUT of the bytes
 * to the URL it gives, POST /1.1/fileCallback), the REST upload, external URLs and deletion
 * (docs/files.md). The record is written only once its bytes are all kept, so an interrupted upload
 * leaves neither; bytes whose record could not be written are removed again.
 */
export class FileService {
  constructor(private readonly options: FileServiceOptions) {}

  get backend(): FileBackend {
    return this.options.backend;
  }

  private limitFor(app: AppRecord): number {
    const own = app.settings.fileMaxBytes;
    return own === null || own === undefined ? this.options.maxBytes : Math.min(own, this.options.maxBytes);
  }

  private mimeTypeFor(app: AppRecord, name: string, sent: unknown): string {
    const given = typeof sent === 'string' && /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+/.test(sent) ? sent.split(';')[0].trim().toLowerCase() : null;
    const type = given && given !== 'application/octet-stream' ? given : mimeOf(name) || 'application/octet-stream';
    const allowed = app.settings.fileMimeTypes ?? [];
    const [major] = type.split('/');
    if (allowed.length > 0 && !allowed.some((pattern) => pattern === type || pattern === `${major}/*`)) {
      throw new ApiError('unsupportedMediaType', `Files of type ${type} are not accepted by this application.`);
    }
    return type;
  }

  private tooLarge(limit: number): ApiError {
    return new ApiError('payloadTooLarge', `A file may hold at most ${limit} bytes.`);
  }

  /** The metaData a record keeps: what the client sent, with the size, owner and checksum the server knows. */
  private metaDataOf(sent: unknown, caller: Caller, extra: JsonObject): JsonObject {
    const given = isObject(sent) ? (sent as JsonObject) : {};
    const owner = caller.userId ?? (typeof given.owner === 'string' ? given.owner : 'unknown');
    return { ...given, owner, ...extra };
  }

  /** Writes the record of kept bytes; if it cannot be written, the bytes go again. */
  private async record(caller: AppCaller, fields: JsonObject, acl: unknown, objectId?: string): Promise<StoredObject> {
    const body = parseWriteBody(acl === undefined || acl === null ? fields : { ...fields, ACL: acl });
    return this.options.objects.create(caller, fileClass, body, objectId ? { objectId } : undefined);
  }

  private async store(key: string, bytes: IncomingBytes, contentType: string, limit: number) {
    if (bytes.length !== null && bytes.length > limit) throw this.tooLarge(limit);
    try {
      return await this.options.backend.put(key, bytes.body, { contentType, maxBytes: limit });
    } catch (error) {
      if (error instanceof TooLarge) throw this.tooLarge(limit);
      throw error;
    }
  }

  /**
   * POST /1.1/fileTokens: where and how the SDK uploads the bytes. With the size known, the `s3` provider: one PUT
   * to `upload_url`. Without it (a Node stream, `{base64}`), the SDK's s3 uploader refuses to start, so Roost
   * answers `qiniu`, whose uploader needs no size: parts of a stream, a form POST of the rest (docs/files.md).
   */
  async grantUpload(caller: AppCaller, body: JsonObject): Promise<JsonObject> {
    // A chosen key needs the master key, in the hosted words (the PHP SDK's FileTest pins them); Roost then
    // chooses the key all the same (docs/files.md).
    if (body.key !== undefined && body.key !== null && !caller.master) fail('fileKeyNeedsMaster');
    const name = checkName(body.name);
    const mimeType = this.mimeTypeFor(caller.app, name, body.mime_type);
    const sent = isObject(body.metaData) ? (body.metaData as JsonObject) : {};
    const limit = this.limitFor(caller.app);
    const sized = typeof sent.size === 'number';
    if (sized && (sent.size as number) > limit) throw this.tooLarge(limit);
    // Checked now, so a bad ACL or field fails here rather than after the bytes were sent.
    parseWriteBody({ metaData: sent, ...(body.ACL ? { ACL: body.ACL } : {}) });
    const objectId = newObjectId(this.options.clock.now());
    const key = newKey(caller.appId, name, body.keep_file_name === true);
    const grant: UploadGrant = {
      appId: caller.appId,
      objectId,
      key,
      name,
      mimeType,
      metaData: sent,
      acl: isObject(body.ACL) ? (body.ACL as UploadGrant['acl']) : null,
      userId: caller.userId,
      expiresAt: this.options.clock.now() + this.options.tokenTtlMs,
    };
    if (JSON.stringify(grant).length > maxGrantBytes) fail('objectTooLarge', `A file's metaData and ACL may hold at most ${maxGrantBytes} bytes.`);
    const token = sealGrant(this.options.secret, grant);
    const backend = this.options.backend;
    return {
      objectId,
      createdAt: isoDate(this.options.clock.now()),
      token,
      url: this.options.objects.fileUrl(backend.url(key)),
      mime_type: mimeType,
      provider: sized ? 's3' : 'qiniu',
      upload_url: sized ? this.options.uploadUrl(token) : this.options.partsUploadUrl(token),
      bucket: backend.bucket ?? backend.provider,
      key,
    };
  }

  private grantOf(token: unknown, fresh: boolean): UploadGrant {
    const grant = typeof token === 'string' ? openGrant(this.options.secret, token) : null;
    if (!grant || (fresh && grant.expiresAt < this.options.clock.now())) fail('fileTokenInvalid');
    return grant;
  }

  /** An upload a token grants and has not made yet, with the most bytes it may carry; refused otherwise. */
  async openUpload(token: string): Promise<{ grant: UploadGrant; app: AppRecord; limit: number }> {
    const grant = this.grantOf(token, true);
    const app = await this.options.app(grant.appId);
    if (!app) fail('fileTokenInvalid');
    // A token is good for one upload: a second one is refused before it could replace the bytes.
    const existing = await this.options.objects.get(masterCallerOf(app), fileClass, grant.objectId);
    if (existing !== null && existing !== 'noClass') fail('fileTokenInvalid', 'This upload token was used already.');
    const declared = typeof grant.metaData.size === 'number' ? grant.metaData.size : null;
    return { grant, app, limit: Math.min(this.limitFor(app), declared ?? Infinity) };
  }

  /** The bytes of an upload (the PUT to `upload_url`, or parts joined): kept, then the record written under the promised objectId. */
  async receiveUpload(token: string, bytes: IncomingBytes): Promise<{ md5: string }> {
    const { grant, app, limit } = await this.openUpload(token);
    const caller: AppCaller = { appId: grant.appId, master: false, userId: grant.userId, app };
    const declared = typeof grant.metaData.size === 'number' ? grant.metaData.size : null;
    const kept = await this.store(grant.key, bytes, grant.mimeType, limit);
    if (declared !== null && kept.size !== declared) {
      await this.options.backend.delete(grant.key);
      fail('incorrectType', `The upload sent ${kept.size} bytes where metaData.size said ${declared}.`);
    }
    // A sender gone before the answer (a stream longer than its Content-Length ends in a malformed request that
    // closes the connection) failed as far as it knows, and the SDK says so at fileCallback, maybe before the
    // record exists: nothing is kept once it is gone, whether it went before the record was written or during.
    const abandon = async () => {
      await this.options.backend.delete(grant.key);
      fail('other', 'The uploader went away before the upload was answered: nothing was kept.');
    };
    if (bytes.gone?.()) await abandon();
    const fields = this.fieldsOf(grant.name, grant.key, grant.mimeType, this.metaDataOf(grant.metaData, caller, { size: kept.size, _checksum: kept.md5 }));
    try {
      await this.record(caller, fields, grant.acl ?? undefined, grant.objectId);
    } catch (error) {
      // The same token PUT twice at once: the other upload's record stands, and its bytes with it.
      if (error instanceof ApiError && error.kind === 'duplicateValue') fail('fileTokenInvalid', 'This upload token was used already.');
      await this.options.backend.delete(grant.key);
      throw error;
    }
    if (bytes.gone?.()) {
      await this.options.objects.remove(masterCallerOf(app), fileClass, grant.objectId).catch(() => undefined);
      await abandon();
    }
    return { md5: kept.md5 };
  }

  /** POST /1.1/fileCallback: a failed upload (result false) leaves neither record nor bytes. */
  async settleUpload(body: JsonObject): Promise<void> {
    const grant = this.grantOf(body.token, false);
    if (body.result !== false) return;
    const app = await this.options.app(grant.appId);
    if (!app) fail('fileTokenInvalid');
    await this.options.objects.remove(masterCallerOf(app), fileClass, grant.objectId);
    await this.options.backend.delete(grant.key);
  }

  private fieldsOf(name: string, key: string | null, mimeType: string, metaData: JsonObject, url?: string): JsonObject {
    const backend = this.options.backend;
    if (key === null) return { name, url: url ?? '', mime_type: mimeType, metaData, bucket: null };
    return { name, url: backend.url(key), mime_type: mimeType, key, provider: backend.provider, bucket: backend.bucket ?? backend.provider, metaData };
  }

  /** POST /1.1/files/<name> with the bytes as the body. */
  async uploadDirect(caller: AppCaller, rawName: string, contentType: string | undefined, bytes: IncomingBytes): Promise<JsonObject> {
    const name = checkName(rawName);
    const mimeType = this.mimeTypeFor(caller.app, name, contentType);
    const key = newKey(caller.appId, name, false);
    const kept = await this.store(key, bytes, mimeType, this.limitFor(caller.app));
    const fields = this.fieldsOf(name, key, mimeType, this.metaDataOf({}, caller, { size: kept.size, _checksum: kept.md5 }));
    let saved: StoredObject;
    try {
      saved = await this.record(caller, fields, undefined);
    } catch (error) {
      await this.options.backend.delete(key);
      throw error;
    }
    return { size: kept.size, bucket: fields.bucket, url: this.options.objects.fileUrl(fields.url as string), name, createdAt: isoDate(saved.createdAt), objectId: saved.objectId };
  }

  /** POST /1.1/files with {name, url, metaData, mime_type, ACL}: a record of bytes kept elsewhere (AV.File.withURL). */
  async saveExternal(caller: AppCaller, body: JsonObject): Promise<StoredObject> {
    const name = checkName(body.name);
    if (typeof body.url !== 'string' || !/^https?:\/\/[^\s]+$/i.test(body.url) || body.url.length > 4096) {
      fail('incorrectType', 'An external file needs an http:// or https:// url.');
    }
    const mimeType = this.mimeTypeFor(caller.app, name, body.mime_type);
    const metaData = this.metaDataOf(body.metaData, caller, { __source: 'external' });
    if (typeof metaData.size !== 'number') metaData.size = 0;
    return this.record(caller, this.fieldsOf(name, null, mimeType, metaData, body.url), body.ACL);
  }

  /** DELETE /1.1/files/<id>: the record under its ACL, then the bytes when this server keeps them. */
  async remove(caller: AppCaller, objectId: string): Promise<void> {
    const found = await this.options.objects.get(masterOf(caller), fileClass, objectId);
    await this.options.objects.remove(caller, fileClass, objectId);
    if (found === null || found === 'noClass') return;
    const { key, provider } = found.data;
    if (typeof key === 'string' && provider === this.options.backend.provider) await this.options.backend.delete(key);
  }
}
