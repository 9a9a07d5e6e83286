import { Worker } from 'node:worker_threads';
import { SessionTokens } from '../accounts/sessions.ts';
import type { SessionSeal } from '../storage/account-store.ts';
import { prepareImportBatch } from '../storage/import-batch.ts';
import type { ImportBatch, ImportRecord } from '../storage/ops-store.ts';
import type { Store } from '../storage/store.ts';
import { parseExportLine } from './export-format.ts';

/** A chunk of export lines to parse: where they go (store kind, application, class) and their texts. */
export interface ParseJob {
  store: Store['kind'];
  appId: string;
  className: string;
  now: number;
  lines: string[];
}

/** A parsed chunk: its problems and its good records, ready for the store. Positions are within the chunk. */
export interface ParsedChunk {
  problems: Array<{ line: number; kind: 'bad' | 'warning'; message: string }>;
  /** The position of each record of `batch`. */
  lines: number[];
  batch: ImportBatch;
}

/** Parses, validates and seals a chunk, then shapes its records for the store (src/storage/import-batch.ts). */
export function parseChunk(job: ParseJob, seal: (token: string) => SessionSeal): ParsedChunk {
  const problems: ParsedChunk['problems'] = [];
  const lines: number[] = [];
  const records: ImportRecord[] = [];
  job.lines.forEach((text, line) => {
    const parsed = parseExportLine(text, { className: job.className, now: job.now, seal });
    if ('error' in parsed) {
      problems.push({ line, kind: 'bad', message: parsed.error });
      return;
    }
    for (const message of parsed.warnings) problems.push({ line, kind: 'warning', message });
    records.push(parsed.record);
    lines.push(line);
  });
  return { problems, lines, batch: prepareImportBatch(job.store, job.appId, job.className, records) };
}

/** What a parse thread hands back without copying: the encoded rows. */
export function transferable(chunk: ParsedChunk): ArrayBuffer[] {
  return chunk.batch.kind === 'encoded' ? [chunk.batch.rows.buffer as ArrayBuffer] : [];
}

/**
 * Parses chunks of lines, on worker threads when `workers` > 0 (parsing, validating, sealing
 * session tokens and encoding rows is most of an import's CPU time; the database works
 * meanwhile), else in this thread. Results come back per chunk; the caller keeps them in file order.
 */
export class ParsePool {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<number, (chunk: ParsedChunk | null) => void>();
  private readonly sessions: SessionTokens;
  private next = 0;
  private failure: Error | null = null;

  constructor(options: { secret: string; workers: number }) {
    this.sessions = new SessionTokens({ secret: options.secret });
    // From the TypeScript sources (tsx), a worker registers the same loader first.
    const source = import.meta.url.endsWith('.ts') ? 'parse-worker-tsx.mjs' : 'parse-worker.js';
    for (let i = 0; i < options.workers; i++) {
      const worker = new Worker(new URL(source, import.meta.url), { workerData: { secret: options.secret } });
      worker.on('message', (message: { id: number; chunk: ParsedChunk }) => {
        this.waiting.get(message.id)?.(message.chunk);
        this.waiting.delete(message.id);
      });
      worker.on('error', (error) => {
        this.failure = error instanceof Error ? error : new Error(String(error));
        for (const resolve of this.waiting.values()) resolve(null);
        this.waiting.clear();
      });
      this.workers.push(worker);
    }
  }

  parse(job: ParseJob): Promise<ParsedChunk> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.workers.length === 0) return Promise.resolve(parseChunk(job, (token) => this.sessions.seal(token)));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (chunk) => (chunk === null ? reject(this.failure) : resolve(chunk)));
      this.workers[id % this.workers.length].postMessage({ id, job });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
