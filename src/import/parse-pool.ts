import { Worker } from 'node:worker_threads';
import { SessionTokens } from '../accounts/sessions.ts';
import { parseExportLine, type ParsedLine } from './export-format.ts';

/** A chunk of export lines to parse: the class they belong to and their texts. */
export interface ParseJob {
  className: string;
  now: number;
  lines: string[];
}

/**
 * Parses chunks of lines, on worker threads when `workers` > 0 (parsing, validating and sealing
 * session tokens is most of an import's CPU time; the database works meanwhile), else in this
 * thread. Results come back per chunk; the caller keeps them in file order.
 */
export class ParsePool {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<number, (results: ParsedLine[]) => void>();
  private readonly sessions: SessionTokens;
  private next = 0;
  private failure: Error | null = null;

  constructor(options: { secret: string; workers: number }) {
    this.sessions = new SessionTokens({ secret: options.secret });
    // From the TypeScript sources (tsx), a worker registers the same loader first.
    const source = import.meta.url.endsWith('.ts') ? 'parse-worker-tsx.mjs' : 'parse-worker.js';
    for (let i = 0; i < options.workers; i++) {
      const worker = new Worker(new URL(source, import.meta.url), { workerData: { secret: options.secret } });
      worker.on('message', (message: { id: number; results: ParsedLine[] }) => {
        this.waiting.get(message.id)?.(message.results);
        this.waiting.delete(message.id);
      });
      worker.on('error', (error) => {
        this.failure = error instanceof Error ? error : new Error(String(error));
        for (const resolve of this.waiting.values()) resolve([]);
        this.waiting.clear();
      });
      this.workers.push(worker);
    }
  }

  parse(job: ParseJob): Promise<ParsedLine[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.workers.length === 0) {
      const seal = (token: string) => this.sessions.seal(token);
      return Promise.resolve(job.lines.map((line) => parseExportLine(line, { className: job.className, now: job.now, seal })));
    }
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (results) => (this.failure ? reject(this.failure) : resolve(results)));
      this.workers[id % this.workers.length].postMessage({ id, job });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
