import { createHash, type Hash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * MD5 of an upload's bytes (metaData._checksum, as the hosted service kept it) computed on a worker thread.
 * On the event loop it cost ~130 ms of a 100 MiB upload's ~340 ms (bench:files) and stalled every other
 * request meanwhile; Node has no asynchronous MD5 (WebCrypto knows none), so a worker it is.
 *
 * Bytes go over in batches of `batchBytes` (copied once and transferred, so the uploader's chunks stay its own);
 * at most `inFlightBytes` of an upload wait on the worker, after which the upload waits for it (memory stays
 * bounded whatever the file's size). A file smaller than one batch never leaves the event loop: hashing it
 * there costs less than the round trip.
 */
const batchBytes = 1024 * 1024;
const inFlightBytes = 8 * batchBytes;

// Plain CommonJS, evaluated: runs the same from the sources (tsx, vitest) and from dist/.
const workerSource = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (message) => {
  const { id } = message;
  if (message.chunk) {
    let hash = hashes.get(id);
    if (!hash) hashes.set(id, (hash = createHash('md5')));
    hash.update(message.chunk);
    parentPort.postMessage({ id, hashed: message.chunk.byteLength });
  } else if (message.end) {
    const hash = hashes.get(id);
    hashes.delete(id);
    parentPort.postMessage({ id, md5: hash ? hash.digest('hex') : null });
  } else {
    hashes.delete(id);
  }
});
`;

type Reply = { id: number; hashed?: number; md5?: string | null; error?: Error };

/** The one worker every upload of the process shares (MD5 runs at several hundred MiB/s on one core). */
class HashWorker {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly listeners = new Map<number, (reply: Reply) => void>();

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerSource, { eval: true });
    worker.on('message', (reply: Reply) => this.listeners.get(reply.id)?.(reply));
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const [id, listener] of this.listeners) listener({ id, error });
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the MD5 worker stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  open(listener: (reply: Reply) => void): number {
    const worker = this.started();
    const id = this.nextId++;
    this.listeners.set(id, listener);
    // Held only while an upload waits on it, so the worker never keeps a finished process alive.
    if (this.listeners.size === 1) worker.ref();
    return id;
  }

  send(id: number, message: { chunk: Uint8Array } | { end: true } | { drop: true }): void {
    const worker = this.worker;
    if (!worker) return this.listeners.get(id)?.({ id, error: new Error('the MD5 worker stopped') });
    if ('chunk' in message) worker.postMessage({ id, chunk: message.chunk }, [message.chunk.buffer as ArrayBuffer]);
    else worker.postMessage({ id, ...message });
  }

  close(id: number): void {
    this.listeners.delete(id);
    if (this.listeners.size === 0) this.worker?.unref();
  }
}

const shared = new HashWorker();

/** The MD5 of one stream of bytes: `update` each chunk in order (awaiting what it returns), then `digest`. */
export class Md5 {
  private local: Hash | null = createHash('md5');
  private id = 0;
  private batch = Buffer.allocUnsafe(batchBytes);
  private filled = 0;
  private pending = 0;
  private failure: Error | null = null;
  private aborted = false;
  private resume: (() => void) | null = null;
  private finished: ((reply: Reply) => void) | null = null;

  /** Takes a chunk; answers a promise when the upload should wait for the worker to catch up. */
  update(chunk: Uint8Array): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    let offset = 0;
    while (offset < chunk.length) {
      const taken = Math.min(chunk.length - offset, batchBytes - this.filled);
      this.batch.set(chunk.subarray(offset, offset + taken), this.filled);
      this.filled += taken;
      offset += taken;
      if (this.filled === batchBytes) this.ship();
    }
    if (this.pending <= inFlightBytes) return undefined;
    return new Promise((resolve) => (this.resume = resolve));
  }

  /** Sends the full batch to the worker, which from the first batch on holds the running hash. */
  private ship(): void {
    if (this.local) {
      // Nothing was hashed here yet (a batch is only ever shipped whole): the worker starts the hash.
      this.local = null;
      this.id = shared.open((reply) => this.onReply(reply));
    }
    const chunk = this.batch.subarray(0, this.filled);
    this.pending += chunk.length;
    shared.send(this.id, { chunk: new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length) });
    this.batch = Buffer.allocUnsafe(batchBytes);
    this.filled = 0;
  }

  private onReply(reply: Reply): void {
    if (reply.error) this.failure = reply.error;
    if (reply.hashed) this.pending -= reply.hashed;
    if ((this.failure || this.pending <= inFlightBytes) && this.resume) {
      const resume = this.resume;
      this.resume = null;
      resume();
    }
    if ((reply.md5 !== undefined || reply.error) && this.finished) this.finished(reply);
  }

  /** The hex MD5 of every byte given. */
  async digest(): Promise<string> {
    if (this.aborted) throw new Error('the upload was abandoned');
    if (this.local) return this.local.update(this.batch.subarray(0, this.filled)).digest('hex');
    if (this.failure) throw this.failure;
    if (this.filled > 0) this.ship();
    const reply = await new Promise<Reply>((resolve) => {
      this.finished = resolve;
      shared.send(this.id, { end: true });
    });
    shared.close(this.id);
    this.id = 0;
    if (reply.error) throw reply.error;
    if (typeof reply.md5 !== 'string') throw new Error('the MD5 worker lost an upload');
    return reply.md5;
  }

  /** An upload that failed: the worker forgets its hash. */
  abort(): void {
    this.aborted = true;
    if (this.local || this.id === 0) return;
    shared.send(this.id, { drop: true });
    shared.close(this.id);
    this.id = 0;
  }
}
