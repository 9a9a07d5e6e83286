import type { Readers } from '../../objects/types.ts';
import type { ObjectRef } from '../store.ts';
import type { SelectedRow } from '../sql/object-row.ts';

/** Ids one statement looks up at most; the rest go in the next one. */
const maxIdsPerStatement = 200;

/** One statement: the rows among `ids` of one class that the readers may read. */
export type SelectByIds = (appId: string, className: string, ids: readonly string[], readers: Readers) => Promise<SelectedRow[]>;

interface Waiting {
  objectId: string;
  resolve: (row: SelectedRow | null) => void;
  reject: (error: unknown) => void;
}

interface Group {
  appId: string;
  className: string;
  readers: Readers;
  waiting: Waiting[];
}

/**
 * Get-by-id on PostgreSQL, coalesced: the lookups a node receives in one turn of its event loop for
 * the same class and the same readers become one statement, run at the end of that turn
 * (setImmediate: after the turn's I/O, so a lone request waits for nothing). Each statement is a
 * round trip that wakes a database process, and that round trip, not the lookup, is most of a
 * get-by-id's cost on both sides (bench/RESULTS.md, "Objects"). The readers rule stays the store's
 * own, inside the statement. test/storage/get-by-id-paths.test.ts holds its answers to SqlStore's.
 */
export class GetByIdBatcher {
  private groups = new Map<string, Group>();
  private scheduled = false;

  constructor(private readonly selectByIds: SelectByIds) {}

  find(ref: ObjectRef, readers: Readers): Promise<SelectedRow | null> {
    const key = readers === null ? `${ref.appId}\u0000${ref.className}` : `${ref.appId}\u0000${ref.className}\u0000\u0001${readers.join('\u0000')}`;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { appId: ref.appId, className: ref.className, readers, waiting: [] };
      this.groups.set(key, group);
    }
    const waiting = group.waiting;
    const found = new Promise<SelectedRow | null>((resolve, reject) => waiting.push({ objectId: ref.objectId, resolve, reject }));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return found;
  }

  private flush(): void {
    const groups = [...this.groups.values()];
    this.groups.clear();
    this.scheduled = false;
    for (const group of groups) {
      for (let start = 0; start < group.waiting.length; start += maxIdsPerStatement) {
        void this.run(group, group.waiting.slice(start, start + maxIdsPerStatement));
      }
    }
  }

  private async run(group: Group, waiting: Waiting[]): Promise<void> {
    try {
      const ids = [...new Set(waiting.map((w) => w.objectId))];
      const rows = await this.selectByIds(group.appId, group.className, ids, group.readers);
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const w of waiting) w.resolve(byId.get(w.objectId) ?? null);
    } catch (error) {
      for (const w of waiting) w.reject(error);
    }
  }
}
