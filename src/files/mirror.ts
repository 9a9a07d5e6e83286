import { randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { parseOrder, parseWhere } from '../objects/query.ts';
import type { JsonObject, StoredObject } from '../objects/types.ts';
import { isObject } from '../objects/values.ts';
import type { Store } from '../storage/store.ts';
import type { FileBackend } from './backend.ts';
import { fileClass } from './service.ts';

export interface MirrorOptions {
  store: Store;
  backend: FileBackend;
  appId: string;
  /** Downloads at once. */
  parallel: number;
  /** A download that passes no byte for this long is given up (and reported). */
  idleTimeoutMs: number;
  /** Also copy files saved with AV.File.withURL (`metaData.__source: "external"`), which were never the hosted service's. */
  external: boolean;
  now(): number;
  onProgress(progress: MirrorProgress): void;
}

export interface MirrorProgress {
  /** `_File` records looked at so far. */
  seen: number;
  mirrored: number;
  /** Already in this backend (a run before this one got them), or external and not asked for. */
  skipped: number;
  failed: number;
}

export interface MirrorFailure {
  objectId: string;
  url: string;
  error: string;
}

export interface MirrorReport extends MirrorProgress {
  failures: MirrorFailure[];
}

const pageSize = 200;

/** Why a record is not to be copied, or null when it is. */
function skipReason(record: StoredObject, backend: FileBackend, external: boolean): string | null {
  const { url, provider, key, metaData } = record.data;
  if (provider === backend.provider && typeof key === 'string') return 'kept here';
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return 'no url';
  if (!external && isObject(metaData) && metaData.__source === 'external') return 'external';
  return null;
}

function extensionOf(record: StoredObject): string {
  const source = [record.data.name, record.data.key].find((value) => typeof value === 'string') as string | undefined;
  const match = source ? /\.([A-Za-z0-9]{1,16})$/.exec(source) : null;
  return match ? `.${match[1].toLowerCase()}` : '';
}

/** A response body that fails when it passes no byte for `idleMs` (a server that stalls mid-file). */
function withIdleLimit(body: Readable, idleMs: number, abort: () => void): Readable {
  let timer = setTimeout(abort, idleMs);
  const watched = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      clearTimeout(timer);
      timer = setTimeout(abort, idleMs);
      done(null, chunk);
    },
  });
  body.once('error', (error) => watched.destroy(error));
  watched.once('close', () => clearTimeout(timer));
  // The backend starts reading after an await of its own (a folder made, an upload begun): a connection dropped
  // in between would otherwise throw from an 'error' event nobody listens to yet and stop the whole run. The
  // error stays on the stream (`errored`), so the backend's pipeline still fails with it.
  watched.on('error', () => {});
  return body.pipe(watched);
}

/**
 * `roost files mirror`: copies the bytes of an application's `_File` records whose URL points elsewhere (the
 * hosted service's CDN) into this server's backend and points the record at them. A record is updated only
 * after its bytes are all kept, so a run stopped at any moment is resumed by running it again (records
 * already here are skipped). Files in other objects follow, as File values are answered from their records.
 */
export async function mirrorFiles(options: MirrorOptions): Promise<MirrorReport> {
  const { store, backend, appId } = options;
  const report: MirrorReport = { seen: 0, mirrored: 0, skipped: 0, failed: 0, failures: [] };

  async function copy(record: StoredObject): Promise<void> {
    const url = record.data.url as string;
    const key = `${appId}/${randomBytes(30).toString('base64url')}${extensionOf(record)}`;
    const controller = new AbortController();
    try {
      // The same limit for the answer's headers as for each stretch of its body: not for the whole download.
      const waiting = setTimeout(() => controller.abort(new Error('no answer')), options.idleTimeoutMs);
      const response = await fetch(url, { signal: controller.signal }).finally(() => clearTimeout(waiting));
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        throw new Error(`HTTP ${response.status}`);
      }
      const body = withIdleLimit(Readable.fromWeb(response.body as WebReadableStream), options.idleTimeoutMs, () => controller.abort(new Error('stalled')));
      const contentType = typeof record.data.mime_type === 'string' ? record.data.mime_type : 'application/octet-stream';
      const kept = await backend.put(key, body, { contentType, maxBytes: Number.MAX_SAFE_INTEGER });
      const outcome = await store.updateObject({ appId, className: fileClass, objectId: record.objectId }, (current) => {
        const metaData = isObject(current.data.metaData) ? (current.data.metaData as JsonObject) : {};
        const data: JsonObject = { ...current.data, url: backend.url(key), key, provider: backend.provider, bucket: backend.bucket ?? backend.provider };
        data.metaData = { ...metaData, size: kept.size, _checksum: kept.md5, mirroredFrom: url };
        return { ...current, data, updatedAt: Math.max(options.now(), current.updatedAt) };
      });
      if (!outcome.ok) {
        await backend.delete(key);
        throw new Error(`the record could not be updated (${outcome.reason})`);
      }
      report.mirrored++;
    } catch (error) {
      report.failed++;
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      report.failures.push({ objectId: record.objectId, url, error: reason });
    }
  }

  let after = '';
  for (;;) {
    const page = await store.findObjects(appId, fileClass, {
      where: parseWhere(after ? { objectId: { $gt: after } } : {}),
      order: parseOrder('objectId'),
      limit: pageSize,
      skip: 0,
      readers: null,
    });
    if (page.length === 0) break;
    after = page[page.length - 1].objectId;
    const todo = page.filter((record) => {
      report.seen++;
      if (skipReason(record, backend, options.external) === null) return true;
      report.skipped++;
      return false;
    });
    let next = 0;
    const worker = async () => {
      while (next < todo.length) {
        await copy(todo[next++]);
        options.onProgress({ ...report });
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.parallel, todo.length) }, worker));
    options.onProgress({ ...report });
  }
  return report;
}
