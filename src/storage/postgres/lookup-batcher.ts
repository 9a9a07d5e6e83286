import { Flushes } from './flushes.ts';

/** Keys one statement looks up at most; the rest go in the next one. */
const maxKeysPerStatement = 200;

interface Waiting<Row> {
  key: string;
  resolve: (row: Row | null) => void;
  reject: (error: unknown) => void;
}

interface Group<Scope, Row> {
  scope: Scope;
  waiting: Array<Waiting<Row>>;
}

export interface LookupStatement<Scope, Row> {
  /** Lookups with the same group key share a statement (same application, class, readers…). */
  groupKey(scope: Scope): string;
  /** One statement: the rows among `keys` in `scope`, in any order. */
  select(scope: Scope, keys: readonly string[]): Promise<Row[]>;
  /** The key a row answers. */
  keyOf(row: Row): string;
  /** Keys one statement looks up at most (200 unless given). */
  maxKeys?: number;
}

/**
 * Single-row lookups on PostgreSQL, coalesced: the lookups a node receives in one turn of its event
 * loop with the same group key become one statement, run at the end of that turn (setImmediate:
 * after the turn's I/O, so a lone request waits for nothing), or, while two statements are in flight,
 * when one comes back (Flushes). Each statement is a round trip that
 * wakes a database process, and that round trip, not the lookup, is most of a get-by-id's or a
 * session's cost on both sides (bench/RESULTS.md, "Objects"). Whatever rule the statement applies
 * (the readers of an object) stays inside it. Used by get-by-id (PostgresStore) and session lookup
 * (PostgresAccountStore); test/storage/get-by-id-paths.test.ts and the account store's conformance
 * suite hold their answers to one lookup at a time.
 */
export class LookupBatcher<Scope, Row> {
  private groups = new Map<string, Group<Scope, Row>>();
  private readonly flushes = new Flushes(
    () => this.flush(),
    () => this.groups.size > 0,
  );

  constructor(private readonly statement: LookupStatement<Scope, Row>) {}

  find(scope: Scope, key: string): Promise<Row | null> {
    const groupKey = this.statement.groupKey(scope);
    let group = this.groups.get(groupKey);
    if (group === undefined) {
      group = { scope, waiting: [] };
      this.groups.set(groupKey, group);
    }
    const waiting = group.waiting;
    const found = new Promise<Row | null>((resolve, reject) => waiting.push({ key, resolve, reject }));
    this.flushes.request();
    return found;
  }

  private flush(): void {
    const groups = [...this.groups.values()];
    this.groups.clear();
    for (const group of groups) {
      const max = this.statement.maxKeys ?? maxKeysPerStatement;
      for (let start = 0; start < group.waiting.length; start += max) {
        void this.flushes.run(() => this.run(group.scope, group.waiting.slice(start, start + max)));
      }
    }
  }

  private async run(scope: Scope, waiting: Array<Waiting<Row>>): Promise<void> {
    try {
      const rows = await this.statement.select(scope, [...new Set(waiting.map((w) => w.key))]);
      const byKey = new Map(rows.map((row) => [this.statement.keyOf(row), row]));
      for (const w of waiting) w.resolve(byKey.get(w.key) ?? null);
    } catch (error) {
      for (const w of waiting) w.reject(error);
    }
  }
}
