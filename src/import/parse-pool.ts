import { Worker } from 'node:worker_threads';
import { SessionTokens } from '../accounts/sessions.ts';
import type { SessionSeal } from '../storage/account-store.ts';
import { prepareImportBatch } from '../storage/import-batch.ts';
import type { FieldType } from '../storage/schema-store.ts';
import { collectFieldTypes } from '../objects/field-types.ts';
import type { ImportBatch, ImportRecord } from '../storage/ops-store.ts';
import type { Store } from '../storage/store.ts';
import { parseExportLine, sealSession } from './export-format.ts';

/** A chunk of export lines to parse: where they go (store kind, application, class) and their texts. */
export interface ParseJob {
  store: Store['kind'];
  appId: string;
  className: string;
  now: number;
  lines: string[];
  /** Ask which objectIds are stored already before sealing and encoding (a re-run). */
  probe: boolean;
}

/** Answers which of the chunk's objectIds are stored already. */
export type Probe = (objectIds: string[]) => Promise<Set<string>>;

/** A parsed chunk: its problems and its good records, ready for the store. Positions are within the chunk. */
export interface ParsedChunk {
  problems: Array<{ line: number; kind: 'bad' | 'warning'; message: string }>;
  /** Lines whose objectId is stored already: neither sealed nor encoded. */
  present: number[];
  /** The position of each record of `batch`. */
  lines: number[];
  batch: ImportBatch;
  /** The type of each field the chunk's records hold, as its first non-null value has it: the class schema learns them. */
  fields: Array<[string, FieldType]>;
}

/** A chunk between the two steps: every line parsed and validated, session tokens not yet sealed. */
export interface ValidChunk {
  problems: ParsedChunk['problems'];
  lines: number[];
  records: Array<{ record: ImportRecord; sessionToken: string | null }>;
}

export function validateChunk(job: ParseJob): ValidChunk {
  const chunk: ValidChunk = { problems: [], lines: [], records: [] };
  job.lines.forEach((text, line) => {
    const parsed = parseExportLine(text, { className: job.className, now: job.now });
    if ('error' in parsed) {
      chunk.problems.push({ line, kind: 'bad', message: parsed.error });
      return;
    }
    for (const message of parsed.warnings) chunk.problems.push({ line, kind: 'warning', message });
    chunk.records.push(parsed);
    chunk.lines.push(line);
  });
  return chunk;
}

export function objectIdsOf(chunk: ValidChunk): string[] {
  return chunk.records.map((parsed) => parsed.record.object.objectId);
}

/** Seals the session tokens of the records not present and shapes them for the store (src/storage/import-batch.ts). */
export function finishChunk(job: ParseJob, chunk: ValidChunk, present: Set<string>, seal: (token: string) => SessionSeal): ParsedChunk {
  const presentLines: number[] = [];
  const lines: number[] = [];
  const records: ImportRecord[] = [];
  const fields = new Map<string, FieldType>();
  chunk.records.forEach((parsed, i) => {
    collectFieldTypes(job.className, parsed.record.object.data, fields);
    if (present.has(parsed.record.object.objectId)) {
      presentLines.push(chunk.lines[i]);
      return;
    }
    records.push(sealSession(parsed, seal));
    lines.push(chunk.lines[i]);
  });
  const batch = prepareImportBatch(job.store, job.appId, job.className, records);
  return { problems: chunk.problems, present: presentLines, lines, batch, fields: [...fields] };
}

/** What a parse thread hands back without copying: the encoded rows. */
export function transferable(chunk: ParsedChunk): ArrayBuffer[] {
  return chunk.batch.kind === 'encoded' ? [chunk.batch.rows.buffer as ArrayBuffer] : [];
}

type Waiting = { probe: Probe; resolve: (chunk: ParsedChunk) => void; reject: (error: unknown) => void };

/**
 * Parses chunks of lines, on worker threads when `workers` > 0 (parsing, validating, sealing
 * session tokens and encoding rows is most of an import's CPU time; the database works
 * meanwhile), else in this thread. A chunk with `probe` set takes two steps: the thread parses
 * and validates, `probe` (on this thread) says which objectIds are stored already, and the thread
 * seals and encodes only the others. Results come back per chunk; the caller keeps them in file order.
 */
export class ParsePool {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<number, Waiting>();
  private readonly sessions: SessionTokens;
  private next = 0;
  private failure: Error | null = null;

  constructor(options: { secret: string; workers: number }) {
    this.sessions = new SessionTokens({ secret: options.secret });
    // From the TypeScript sources (tsx), a worker registers the same loader first.
    const source = import.meta.url.endsWith('.ts') ? 'parse-worker-tsx.mjs' : 'parse-worker.js';
    for (let i = 0; i < options.workers; i++) {
      const worker = new Worker(new URL(source, import.meta.url), { workerData: { secret: options.secret } });
      worker.on('message', (message: { id: number; chunk: ParsedChunk } | { id: number; objectIds: string[] }) => {
        const waiting = this.waiting.get(message.id);
        if (!waiting) return;
        if ('chunk' in message) {
          this.waiting.delete(message.id);
          waiting.resolve(message.chunk);
          return;
        }
        waiting.probe(message.objectIds).then(
          (present) => worker.postMessage({ id: message.id, present }),
          (error) => {
            this.waiting.delete(message.id);
            waiting.reject(error);
          },
        );
      });
      worker.on('error', (error) => {
        this.failure = error instanceof Error ? error : new Error(String(error));
        for (const waiting of this.waiting.values()) waiting.reject(this.failure);
        this.waiting.clear();
      });
      this.workers.push(worker);
    }
  }

  async parse(job: ParseJob, probe: Probe): Promise<ParsedChunk> {
    if (this.failure) throw this.failure;
    if (this.workers.length === 0) {
      const chunk = validateChunk(job);
      const present = job.probe ? await probe(objectIdsOf(chunk)) : new Set<string>();
      return finishChunk(job, chunk, present, (token) => this.sessions.seal(token));
    }
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { probe, resolve, reject });
      this.workers[id % this.workers.length].postMessage({ id, job });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
