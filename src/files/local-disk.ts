import { randomBytes } from 'node:crypto';
import { Md5 } from './md5.ts';
import { SyncedFile } from './synced-file.ts';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { makeThumbnail, maxThumbnailsPerFile, thumbnailName, type ThumbnailRefusal, type ThumbnailSpec } from './thumbnails.ts';
import { checkKey, TooLarge, type ByteRange, type FileBackend, type StoredBytes } from './backend.ts';

/** Counts (`counted`: not `size`, which lib-storage would read as the length) and hashes the bytes going through, failing with TooLarge past `maxBytes`. */
export function measuring(maxBytes: number): Transform & { counted: number; md5(): Promise<string> } {
  const hash = new Md5();
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      meter.counted += chunk.length;
      if (meter.counted > maxBytes) return done(new TooLarge(maxBytes));
      meter.push(chunk);
      // The bytes go on at once; only the next chunk waits while the hashing worker catches up.
      const wait = hash.update(chunk);
      if (wait) wait.then(() => done(), done);
      else done();
    },
    destroy(error, done) {
      // Destroyed after the last byte (autoDestroy) the hash is still wanted; otherwise the upload failed.
      if (error || !meter.writableFinished) hash.abort();
      done(error);
    },
  }) as Transform & { counted: number; md5(): Promise<string> };
  meter.counted = 0;
  meter.md5 = () => hash.digest();
  return meter;
}

/**
 * Files under a folder (the embedded default, `<DATA_DIR>/files`), served by Roost itself at
 * `<public URL>/files/<key>` (src/http/routes/file-serving.ts). Bytes are written to `.partial/` and
 * renamed into place once complete, so a reader or a crash never sees half a file.
 */
/**
 * Bytes buffered per read and write of a file on disk: the fs defaults (64 KiB reads, 16 KiB writes) cost a
 * 100 MiB download 1,600 reads and socket writes and held it to 27% of a plain copy (63% at 1 MiB).
 */
export const diskChunkBytes = 1024 * 1024;

/**
 * Flushes a folder's names to the disk. An upload is answered once its bytes (SyncedFile) and its name would
 * survive a power cut, as an object store answers a PUT: without it the record (on PostgreSQL, committed
 * durably) could outlive a file that came back missing or empty.
 */
async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class LocalDiskBackend implements FileBackend {
  readonly provider = 'local';
  readonly bucket = null;

  constructor(
    readonly root: string,
    private readonly publicUrl: () => string,
  ) {}

  path(key: string): string {
    return join(this.root, checkKey(key));
  }

  async put(key: string, body: Readable, options: { contentType: string; maxBytes: number }): Promise<StoredBytes> {
    const target = this.path(key);
    const partial = join(this.root, '.partial', randomBytes(12).toString('hex'));
    await mkdir(dirname(partial), { recursive: true });
    const meter = measuring(options.maxBytes);
    try {
      // The file is on the disk when the pipeline ends; the MD5 worker finished its last blocks meanwhile.
      await pipeline(body, meter, new SyncedFile(partial, diskChunkBytes));
      const md5 = await meter.md5();
      const folder = dirname(target);
      await mkdir(folder, { recursive: true });
      await rename(partial, target);
      // The name is kept by its folder, a folder made for it by the one above, up to the root.
      for (let kept = folder; ; kept = dirname(kept)) {
        await syncFolder(kept);
        if (relative(this.root, kept) === '') break;
      }
      return { size: meter.counted, md5 };
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async head(key: string): Promise<{ size: number } | null> {
    try {
      const found = await stat(this.path(key));
      return found.isFile() ? { size: found.size } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable | null> {
    if ((await this.head(key)) === null) return null;
    return createReadStream(this.path(key), range ? { start: range.start, end: range.end, highWaterMark: diskChunkBytes } : { highWaterMark: diskChunkBytes });
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
    await rm(join(this.thumbnailRoot, key), { recursive: true, force: true });
    // A kept name's key (`<appId>/<random>/<name>`) has a folder of its own, emptied now.
    if (key.split('/').length === 3) {
      await rmdir(dirname(this.path(key))).catch(() => undefined);
      await rmdir(dirname(join(this.thumbnailRoot, key))).catch(() => undefined);
    }
  }

  async deleteApp(appId: string): Promise<void> {
    const folder = checkKey(`${appId}/x`).split('/')[0];
    await rm(join(this.root, folder), { recursive: true, force: true });
    await rm(join(this.thumbnailRoot, folder), { recursive: true, force: true });
  }

  /**
   * The path under `thumbnailRoot` of a thumbnail of the key's image, made once and kept (`.thumbs/`, atomic as
   * put is); null when the key holds nothing.
   */
  async thumbnail(key: string, spec: ThumbnailSpec): Promise<string | null | ThumbnailRefusal> {
    const relative = `${checkKey(key)}/${thumbnailName(spec)}`;
    const target = join(this.thumbnailRoot, relative);
    if ((await stat(target).catch(() => null))?.isFile()) return relative;
    if ((await this.head(key)) === null) return null;
    const kept = await readdir(dirname(target)).catch(() => []);
    if (kept.length >= maxThumbnailsPerFile) return 'tooMany';
    const made = await makeThumbnail(() => this.get(key), spec);
    if (made === null || typeof made === 'string') return made;
    const partial = join(this.root, '.partial', randomBytes(12).toString('hex'));
    await mkdir(dirname(partial), { recursive: true });
    try {
      await writeFile(partial, made, { flag: 'wx' });
      await mkdir(dirname(target), { recursive: true });
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
    return relative;
  }

  get thumbnailRoot(): string {
    return join(this.root, '.thumbs');
  }

  url(key: string): string {
    return `${this.publicUrl()}/files/${key.split('/').map(encodeURIComponent).join('/')}`;
  }
}
