import { close, fdatasync, fsync, open, writev } from 'node:fs';
import { Writable } from 'node:stream';

/** Bytes written between two flushes while the file grows. */
const flushBytes = 16 * 1024 * 1024;

/**
 * A new file (`wx`: never one that exists) written from a stream, on the disk once the stream finishes: 'finish'
 * comes after its fsync. An upload is answered once its bytes would survive a power cut, as an object store
 * answers a PUT. Flushing a whole 100 MiB upload after its last byte took 33–50 ms, in series before the answer
 * (bench:files; the MD5 worker was done by then); so every `flushBytes` written, what is on file so far is
 * flushed (fdatasync) in the background while the next bytes arrive, and the last fsync has only the tail left.
 */
export class SyncedFile extends Writable {
  private fd = -1;
  private unflushed = 0;
  private flushing: Promise<void> | null = null;
  /** A background flush's failure: Linux reports a write-back error once, so it is kept for the last fsync. */
  private flushError: Error | null = null;

  constructor(
    private readonly path: string,
    highWaterMark: number,
  ) {
    super({ highWaterMark });
  }

  override _construct(done: (error?: Error | null) => void): void {
    open(this.path, 'wx', (error, fd) => {
      this.fd = error ? -1 : fd;
      done(error);
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.writeAll([chunk], done);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, done: (error?: Error | null) => void): void {
    this.writeAll(
      chunks.map((each) => each.chunk),
      done,
    );
  }

  private writeAll(buffers: Buffer[], done: (error?: Error | null) => void): void {
    writev(this.fd, buffers, (error, written) => {
      if (error) return done(error);
      this.unflushed += written;
      if (this.unflushed >= flushBytes && this.flushing === null) this.flushInBackground();
      let rest = buffers;
      for (let left = written; left > 0 && rest.length > 0; ) {
        if (rest[0].length <= left) {
          left -= rest[0].length;
          rest = rest.slice(1);
        } else {
          rest = [rest[0].subarray(left), ...rest.slice(1)];
          left = 0;
        }
      }
      if (rest.length > 0) this.writeAll(rest, done);
      else done();
    });
  }

  private flushInBackground(): void {
    this.unflushed = 0;
    this.flushing = new Promise((resolve) =>
      fdatasync(this.fd, (error) => {
        this.flushError ??= error;
        this.flushing = null;
        resolve();
      }),
    );
  }

  /** After the background flush (if one runs), the rest and the file's size. */
  private afterFlush(then: () => void): void {
    if (this.flushing) void this.flushing.then(then);
    else then();
  }

  override _final(done: (error?: Error | null) => void): void {
    this.afterFlush(() => {
      if (this.flushError) return done(this.flushError);
      fsync(this.fd, (error) => done(error));
    });
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.afterFlush(() => {
      if (this.fd < 0) return done(error);
      close(this.fd, (closing) => done(error ?? closing));
      this.fd = -1;
    });
  }
}
