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
 * go as one UPDATE and one commit per application and class. A write is a statement, a round trip and a WAL flush on its own; under
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
      await Promise.all(groupsOf(batch).map((group) => this.runGroup(group)));
    } finally {
      for (const write of batch) this.writing.delete(write.key);
    }
  }

  /** The writes of one application and class: one statement, or each alone when it fails. */
  private async runGroup(group: Pending[]): Promise<void> {
    if (group.length === 1) {
      await settleAlone(group[0], this.one);
      return;
    }
    let written: Set<string>;
    try {
      written = await this.writeAll(group);
    } catch {
      for (const write of group) await settleAlone(write, this.one);
      return;
    }
    for (const write of group) write.resolve(written.has(write.key));
  }

  /**
   * The keys of the rows written: each row as JSON, read back as a row of objects (jsonb_populate_record). The rows
   * are found by the primary key's probes (application, class and ids bound apart): joined on the JSON's rows alone,
   * whose count PostgreSQL cannot know (100 by default), the plan hashed a scan of the whole table, so an update's
   * cost grew with every row of every class (bench/RESULTS.md, Accounts, 2026-11-27 22:44).
   */
  private async writeAll(group: readonly Pending[]): Promise<Set<string>> {
    const { app_id: appId, class_name: className } = group[0].row;
    const rows = JSON.stringify(group.map((write) => ({ row: write.row, version: write.version })));
    const ids = group.map((write) => write.row.id);
    const { rows: written } = await sql<{ app_id: string; class_name: string; id: string }>`${prepared('roost_object_updates', sql`UPDATE objects o
      SET ${updateFromSet('v')}
      FROM (SELECT r.*, (e ->> 'version')::xid AS version
        FROM jsonb_array_elements(${rows}::jsonb) AS e, jsonb_populate_record(NULL::objects, e -> 'row') AS r) v
      WHERE o.app_id = ${appId} AND o.class_name = ${className} AND o.id = ANY(${sql.val(ids)}::text[])
        AND o.id = v.id AND o.xmin = v.version
      RETURNING o.app_id, o.class_name, o.id`)}`.execute(this.db);
    return new Set(written.map((row) => `${row.app_id}\u0000${row.class_name}\u0000${row.id}`));
  }
}

/** The writes of a batch by application and class, in order. */
function groupsOf(batch: readonly Pending[]): Pending[][] {
  const groups = new Map<string, Pending[]>();
  for (const write of batch) {
    const key = `${write.row.app_id}\u0000${write.row.class_name}`;
    const group = groups.get(key);
    if (group) group.push(write);
    else groups.set(key, [write]);
  }
  return [...groups.values()];
}

async function settleAlone(write: Pending, one: WriteOne): Promise<void> {
  try {
    write.resolve(await one(write.row, write.version));
  } catch (error) {
    write.reject(error);
  }
}
