import { sql, type Kysely } from 'kysely';
import { updateFromSet, type ObjectRow } from '../sql/object-row.ts';
import { Flushes } from './flushes.ts';
import { prepared } from './prepared.ts';

/** Rows one statement writes at most; the rest go in the next. */
const maxRowsPerStatement = 100;

interface Pending {
  key: string;
  row: ObjectRow;
  version: string;
  resolve: (written: boolean) => void;
  reject: (error: unknown) => void;
}

/** One write alone: true when the row was still at `version` and is now `row`. */
export type WriteOne = (row: ObjectRow, version: string) => Promise<boolean>;

/**
 * The versioned writes of PostgresStore.updateUnlocked (a row written only if it is still at the version it
 * was read at), coalesced: those a node makes in one turn of its loop, or while earlier ones are in flight,
 * go as one UPDATE and one commit. A write is a statement, a round trip and a WAL flush on its own; under
 * load these were most of an update's cost on both sides (bench/RESULTS.md, Accounts). Each row keeps its
 * own version check inside the statement, so a row changed since it was read is not written and answers
 * false, as alone. A statement that fails (a unique value taken by one of its rows, a lost connection)
 * wrote nothing, and its writes then run one by one through `one`, each getting the answer or the error it
 * gets alone. A row is in at most one statement in flight, so two statements never wait on each other's rows.
 */
export class RowWrites {
  private pending: Pending[] = [];
  private readonly writing = new Set<string>();
  private readonly flushes = new Flushes(
    () => this.flush(),
    () => this.pending.length > 0,
  );

  constructor(
    private readonly db: Kysely<any>,
    private readonly one: WriteOne,
  ) {}

  write(row: ObjectRow, version: string): Promise<boolean> {
    const key = `${row.app_id}\u0000${row.class_name}\u0000${row.id}`;
    const written = new Promise<boolean>((resolve, reject) => this.pending.push({ key, row, version, resolve, reject }));
    this.flushes.request();
    return written;
  }

  /** The pending writes of rows not being written, one per row and up to the statement's size; the others wait. */
  private flush(): void {
    const batch: Pending[] = [];
    const waiting: Pending[] = [];
    for (const write of this.pending) {
      if (batch.length < maxRowsPerStatement && !this.writing.has(write.key)) {
        this.writing.add(write.key);
        batch.push(write);
      } else {
        waiting.push(write);
      }
    }
    this.pending = waiting;
    if (batch.length > 0) void this.flushes.run(() => this.run(batch));
  }

  private async run(batch: Pending[]): Promise<void> {
    try {
      if (batch.length === 1) {
        await settleAlone(batch[0], this.one);
        return;
      }
      let written: Set<string>;
      try {
        written = await this.writeAll(batch);
      } catch {
        for (const write of batch) await settleAlone(write, this.one);
        return;
      }
      for (const write of batch) write.resolve(written.has(write.key));
    } finally {
      for (const write of batch) this.writing.delete(write.key);
    }
  }

  /** The keys of the rows written: each row as JSON, read back as a row of objects (jsonb_populate_record). */
  private async writeAll(batch: readonly Pending[]): Promise<Set<string>> {
    const rows = JSON.stringify(batch.map((write) => ({ row: write.row, version: write.version })));
    const { rows: written } = await sql<{ app_id: string; class_name: string; id: string }>`${prepared('roost_object_updates', sql`UPDATE objects o
      SET ${updateFromSet('v')}
      FROM (SELECT r.*, (e ->> 'version')::xid AS version
        FROM jsonb_array_elements(${rows}::jsonb) AS e, jsonb_populate_record(NULL::objects, e -> 'row') AS r) v
      WHERE o.app_id = v.app_id AND o.class_name = v.class_name AND o.id = v.id AND o.xmin = v.version
      RETURNING o.app_id, o.class_name, o.id`)}`.execute(this.db);
    return new Set(written.map((row) => `${row.app_id}\u0000${row.class_name}\u0000${row.id}`));
  }
}

async function settleAlone(write: Pending, one: WriteOne): Promise<void> {
  try {
    write.resolve(await one(write.row, write.version));
  } catch (error) {
    write.reject(error);
  }
}
