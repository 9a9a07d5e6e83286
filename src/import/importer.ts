import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Clock } from '../lib/clock.ts';
import { builtInClasses, classNamePattern } from '../objects/values.ts';
import type { ImportBatch, ImportStatus } from '../storage/ops-store.ts';
import type { Store } from '../storage/store.ts';
import { ParsePool, type ParsedChunk } from './parse-pool.ts';

/** A line that was skipped (bad, or its unique value taken) or imported with a caveat. */
export interface ImportProblem {
  file: string;
  line: number;
  kind: 'bad' | 'conflict' | 'warning';
  message: string;
}

export interface FileReport {
  file: string;
  className: string;
  lines: number;
  inserted: number;
  /** objectId already present: skipped (a re-run is idempotent). */
  existing: number;
  conflicts: number;
  bad: number;
}

export interface ImportOptions {
  store: Store;
  clock: Clock;
  appId: string;
  /** The server secret: exported session tokens are sealed with it as Roost seals its own. */
  secret: string;
  /** Rows per store call (one transaction). */
  batchSize?: number;
  /** Parse threads (0: parse in this thread). */
  workers?: number;
  /** Forces the class of a single file instead of taking it from the file name. */
  className?: string;
  onProblem?: (problem: ImportProblem) => void;
  /** Bytes of the export files read so far, of `total`. */
  onProgress?: (done: number, total: number) => void;
}

const exportFile = /\.(jsonl|json|ndjson)(\.gz)?$/;

/** `_User.json`, `_User.0.jsonl`, `Post.jsonl.gz` → the class before the first dot. */
export function classOfFile(path: string): string {
  return basename(path).split('.')[0];
}

export function importableClass(className: string): boolean {
  return classNamePattern.test(className) || builtInClasses.has(className);
}

/** The export files under a path: the file itself, or a folder's files, users and devices first. */
export async function exportFiles(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const names = (await readdir(path)).filter((name) => exportFile.test(name)).sort();
  const rank = (name: string) => ({ _User: 0, _Installation: 1 })[classOfFile(name)] ?? 2;
  return names.sort((a, b) => rank(a) - rank(b)).map((name) => join(path, name));
}

/**
 * Streams export files into the store: lines are parsed while the previous batch is being
 * written, so reading, parsing and the database overlap. Never stops on a bad line.
 */
export class Importer {
  private readonly options: ImportOptions;
  private readonly batchSize: number;
  private bytesDone = 0;
  private bytesTotal = 0;

  constructor(options: ImportOptions) {
    this.options = options;
    this.batchSize = options.batchSize ?? 2000;
  }

  async run(path: string): Promise<FileReport[]> {
    const files = await exportFiles(path);
    if (files.length === 0) throw new Error(`no export files (*.json, *.jsonl, *.ndjson, optionally .gz) in ${path}`);
    for (const file of files) this.bytesTotal += (await stat(file)).size;
    const pool = new ParsePool({ secret: this.options.secret, workers: this.options.workers ?? 0 });
    try {
      const reports: FileReport[] = [];
      for (const file of files) reports.push(await this.importFile(file, pool));
      // ANALYZE during a CREATE INDEX CONCURRENTLY deadlocks with it (40P01): the builds this process runs end first.
      await this.options.store.classIndexes.idle();
      await this.options.store.ops.finishImport();
      return reports;
    } finally {
      await pool.close();
    }
  }

  private problem(problem: ImportProblem): void {
    this.options.onProblem?.(problem);
  }

  private async importFile(file: string, pool: ParsePool): Promise<FileReport> {
    const className = this.options.className ?? classOfFile(file);
    const report: FileReport = { file, className, lines: 0, inserted: 0, existing: 0, conflicts: 0, bad: 0 };
    if (!importableClass(className)) {
      this.problem({ file, line: 0, kind: 'warning', message: `class ${className} is not imported (only _User, _Installation, _Role and your own classes)` });
      this.bytesDone += (await stat(file)).size;
      this.options.onProgress?.(this.bytesDone, this.bytesTotal);
      return report;
    }
    const raw = createReadStream(file);
    raw.on('data', (chunk) => {
      this.bytesDone += chunk.length;
      this.options.onProgress?.(this.bytesDone, this.bytesTotal);
    });
    const input: Readable = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
    const lines = createInterface({ input, crlfDelay: Infinity });
    const now = this.options.clock.now();
    const { appId, store } = this.options;
    // While chunks hold objectIds stored already (a re-run, or the part an interrupted run
    // loaded), each is probed before its tokens are sealed and its rows encoded; the first
    // chunk of a file always is. One probe of a new chunk finding none stops it.
    let probing = true;
    const probe = async (objectIds: string[]) => {
      const present = await store.ops.presentObjectIds(appId, className, objectIds);
      probing = present.size > 0;
      return present;
    };
    // Chunks being parsed, in file order; the oldest is written while later ones parse.
    const parsing: Array<{ numbers: number[]; results: Promise<ParsedChunk> }> = [];
    const depth = Math.max(2, 2 * (this.options.workers ?? 0));
    let writing: Promise<void> = Promise.resolve();
    // The class schema learns each field once a file: the first type the data shows, unless the class has one.
    const learned = new Set<string>();
    const writeOldest = async () => {
      const chunk = parsing.shift()!;
      const parsed = await chunk.results;
      const fresh = parsed.fields.filter(([name]) => !learned.has(name));
      if (fresh.length > 0) {
        await store.schemas.learn(appId, className, fresh.map(([name, type]) => ({ name, type })));
        for (const [name] of fresh) learned.add(name);
      }
      for (const { line, kind, message } of parsed.problems) {
        if (kind === 'bad') report.bad++;
        this.problem({ file, line: chunk.numbers[line], kind, message });
      }
      report.existing += parsed.present.length;
      await writing;
      writing = this.write(file, parsed.batch, parsed.lines.map((line) => chunk.numbers[line]), report).then((existing) => {
        if (existing > 0) probing = true;
      });
    };
    let texts: string[] = [];
    let numbers: number[] = [];
    const flush = async () => {
      if (texts.length === 0) return;
      parsing.push({ numbers, results: pool.parse({ store: store.kind, appId, className, now, lines: texts, probe: probing }, probe) });
      texts = [];
      numbers = [];
      while (parsing.length > depth) await writeOldest();
    };
    for await (const line of lines) {
      report.lines++;
      const text = line.trim();
      if (text === '') continue;
      texts.push(text);
      numbers.push(report.lines);
      if (texts.length >= this.batchSize) await flush();
    }
    await flush();
    while (parsing.length > 0) await writeOldest();
    await writing;
    return report;
  }

  /** Stores a batch whose records came from these line numbers and reports what became of each; answers how many were there already. */
  private async write(file: string, batch: ImportBatch, numbers: number[], report: FileReport): Promise<number> {
    if (numbers.length === 0) return 0;
    const statuses = await this.options.store.ops.importObjects(batch);
    statuses.forEach((status: ImportStatus, i) => {
      if (status.kind === 'inserted') {
        report.inserted++;
        for (const platform of status.droppedAuthData) {
          this.problem({
            file,
            line: numbers[i],
            kind: 'warning',
            message: `authData.${platform} is already bound to another user: left out of this user`,
          });
        }
      } else if (status.kind === 'exists') {
        report.existing++;
      } else {
        report.conflicts++;
        const what = status.field ?? 'a unique value';
        this.problem({ file, line: numbers[i], kind: 'conflict', message: `${what} is already taken by another object: skipped` });
      }
    });
    return statuses.filter((status) => status.kind === 'exists').length;
  }
}
