import type { Kysely, RawBuilder } from 'kysely';
import type { Regex } from '../../objects/regex.ts';
import type { Json, OrderKey } from '../../objects/types.ts';
import type { ImportBatch, ImportRecord } from '../ops-store.ts';
import type { BuildProgress, IndexKey } from '../class-index-store.ts';

export type Sql = RawBuilder<unknown>;
export type Comparison = 'lt' | 'lte' | 'gt' | 'gte';
/** PostgreSQL names the index (or constraint); SQLite lists its table and columns. */
export type ViolatedIndex = { name: string } | { table: string; columns: string[] };

/**
 * Everything that differs between the databases: how JSON fields are reached, compared and
 * updated, how the readers of a row are matched, row and advisory locks, how many values a
 * statement binds, the shape of an import batch, and how a driver error names a unique index.
 * The shared code (src/storage/sql) reads the same for both and never asks which database it has.
 */
/** The DDL of the indexes users declare (src/storage/sql/class-index-store.ts), which differs per database. */
export interface ClassIndexDdl {
  /**
   * The CREATE [UNIQUE] INDEX statements of a declared index (PostgreSQL adds one for string ranges), each
   * key spelt as the where compiler spells the field, so the planner matches it.
   */
  create(indexName: string, appId: string, className: string, keys: IndexKey[], unique: boolean): string[];
  /** Statements dropping whatever of the index exists, each harmless when nothing does. */
  drop(indexName: string): string[];
  /**
   * Runs `work` on one connection as the only builder of the index among all processes, however long it
   * takes; false at once, `work` not run, when another holds it. A process that stops during `work`
   * leaves it to be run again. `oneAtATime`: `work` waits for any other process's that asked the same.
   */
  exclusively(db: Kysely<any>, indexName: string, work: (connection: Kysely<any>) => Promise<void>, options?: { oneAtATime: boolean }): Promise<boolean>;
  /** Names the build running on the connection, to read its progress by; null where none can be read. */
  builder(connection: Kysely<any>): Promise<string | null>;
  /** The progress of the named builds the database reports. */
  progress(db: Kysely<any>, builders: string[]): Promise<Map<string, BuildProgress>>;
  /**
   * The build failed for a reason of the moment, not of the index (a deadlock with an ANALYZE, a
   * serialization failure, a lost connection): built again later rather than marked failed.
   */
  transient(error: unknown): boolean;
  /** Stops the named builds where the database can (a node shutting down leaves them to the next). */
  cancel(db: Kysely<any>, builders: string[]): Promise<void>;
}

export interface EqualitySides {
  value: Sql;
  valueFrom?: Sql;
  arrays: Sql;
  arraysFrom?: Sql;
}

export interface SqlDialect {
  readonly kind: 'sqlite' | 'postgres';
  readonly classIndexes: ClassIndexDdl;
  /** Runs `work` on `connection` while no other process migrates this database. */
  underMigrationLock(connection: Kysely<any>, work: () => Promise<void>): Promise<void>;
  /** A JSON field of o.data equals the value or, being an array, contains it. */
  jsonEquals(path: string[], value: Json): Sql;
  /**
   * An equality on a scalar (one value) or an $in of scalars as two disjoint sides, the field being one
   * of the values (`value`, which a declared index reads: in the page's order for one value) and the field
   * an array holding one (`arrays`), each read from `valueFrom` / `arraysFrom` in place of `objects o` where
   * the database needs the rows it reads named (SQLite), for findStatement; null: no split.
   */
  jsonEqualsBranches(path: string[], values: Array<string | number | boolean>, scope: { appId: string; className: string }): EqualitySides | null;
  /** jsonEquals of any of the values, with the list bound as one parameter (a long $in stays one short expression). */
  jsonIn(path: string[], values: Json[]): Sql;
  /**
   * A value bound with its type written in the text on PostgreSQL (`$n::bigint`: a time column's milliseconds; float8 and
   * text: geo.ts), so PageBatcher can read it from a batch's JSON as the page alone binds it; SQLite binds it as it is.
   */
  typedValue(value: number | string, type: 'bigint' | 'float8' | 'text'): Sql;
  /** A promoted column equals one of the values, bound as one parameter. */
  columnIn(column: Sql, kind: 'time' | 'string', values: Array<string | number>): Sql;
  jsonCompare(path: string[], op: Comparison, value: string | number): Sql;
  jsonExists(path: string[]): Sql;
  /** A string field matches a validated pattern (src/objects/regex.ts). */
  jsonRegex(path: string[], regex: Regex): Sql;
  jsonSize(path: string[], size: number): Sql;
  jsonContainsAll(path: string[], values: Json[]): Sql;
  jsonOrder(key: OrderKey): Sql;
  /**
   * The field is a Pointer to an object of `className` whose id `ids` (a one-column query of object ids)
   * lists, for a row of `scope`'s class; never NULL, so NOT keeps its meaning. Spelled so that an index on
   * the field's objectId serves it.
   */
  pointerIn(path: string[], className: string, ids: Sql, scope: { appId: string; className: string }): Sql;
  /**
   * pointerIn as the rows a page reads (findStatement, for an $inQuery among the where's top-level
   * conditions): `from` in place of `objects o`, holding exactly the rows whose field's objectId `ids`
   * lists, and the rest of the test; null where pointerIn alone reads well.
   */
  pointerSource(path: string[], className: string, ids: Sql, scope: { appId: string | Sql; className: string | Sql }): { from: Sql; condition: Sql } | null;
  /** pointerIn of a field typed Array: one of its elements is a pointer to `className` whose objectId `ids` lists. */
  pointerInArray(path: string[], className: string, ids: Sql, scope: { appId: string; className: string }): Sql;
  /** A field's value in the one form $select compares (JSON equality); NULL when the field is missing. */
  jsonValue(path: string[]): Sql;
  /** A text column (the object id) as jsonValue gives a string field. */
  textAsValue(text: Sql): Sql;
  /** A time column (milliseconds) as jsonValue gives a date field: {"__type":"Date","iso":…}. */
  timeAsValue(ms: Sql): Sql;
  /** The value (of jsonValue) is one of `values` (a one-column query of them); never NULL. */
  valueIn(value: Sql, values: Sql): Sql;
  /** The field (jsonValue) is one of `values` or, being an array, holds one of them ($select); never NULL. */
  jsonValueIn(path: string[], values: Sql): Sql;
  /**
   * The row's readers column shares a principal with the list or, `roles` given, with what that query
   * selects (`SELECT principal`, the roles of the users in the list: src/storage/sql/roles.ts), which the
   * database runs at most once a statement and only for a row the list does not already grant.
   */
  readableBy(readers: readonly string[], roles: Sql | null): Sql;
  /**
   * readableBy's `roles` for these users as a query the database plans once (PostgreSQL: roost_member_roles,
   * migration 0020), or null to read them inline (rolePrincipals), planned with each statement.
   */
  memberRoles(appId: string, members: readonly string[]): Sql | null;
  /** Value to bind for the JSON columns (data, acl). */
  encodeJson(value: unknown): unknown;
  decodeJson<T>(raw: unknown): T;
  /** The `data` column as dataJson reads it (objectJsonColumns): its text where the driver would decode it. */
  storedText(data: Sql): Sql;
  /** A row's `data` read through storedText, as the text JSON.stringify gives its decoded object ({} for none). */
  dataJson(raw: unknown): string;
  encodeReaders(readers: string[]): unknown;
  /** FOR UPDATE where the database has row locks. */
  readonly rowLock: Sql;
  /** The unique index a driver error says a write violated, in the driver's words (object-row.ts reads it); null for any other error. */
  uniqueViolation(error: unknown): ViolatedIndex | null;

  /** rowLock on the rows of one table of a join only (FOR UPDATE OF alias). */
  rowLockOf(alias: string): Sql;
  /** rowLock that passes over rows another transaction holds, for workers claiming work. */
  readonly rowLockSkipLocked: Sql;
  /**
   * A statement that makes transactions naming the same key run one after another until the
   * holder commits, or null where write transactions already do.
   */
  serialiseOn(key: string): Sql | null;
  /** A statement letting this transaction's commit skip the wait for durable storage, or null. */
  readonly relaxedCommit: Sql | null;
  /** How many ids one statement takes (idsPresent, IN lists) within the database's parameter limit. */
  readonly idsPerStatement: number;
  /** A top-level scalar field of a JSON column (`document`, as `data` or `o.data`), to compare with strings. */
  jsonField(document: Sql, field: string): Sql;
  /** The JSON column `document` with its top-level `field` set to `value`. */
  jsonSet(document: Sql, field: string, value: Json): Sql;
  /**
   * Parallel text arrays as a table t(v, v2, v3, …) bound as one parameter per column: a page of
   * a thousand rows is one short statement instead of thousands of placeholders to parse and plan.
   */
  textRows(columns: Array<Array<string | null>>): Sql;
  /**
   * An include level's (class, id) pairs, each id a plausible one (isPlausibleId), as a table t(v = class, v2 = id), bound
   * as `parameters` (the relation's only ones, in order; `rows()` builds it): IncludeLevelStatements (include-levels.ts)
   * keeps its statement's text and binds only these anew.
   */
  refRows(refs: ReadonlyArray<{ className: string; objectId: string }>): { rows: () => Sql; parameters: unknown[] };
  /** A query of the `id` of each of `ids` (at most idsPerStatement) that the class holds. */
  idsPresent(appId: string, className: string, ids: string[]): RawBuilder<{ id: string }>;
  /**
   * Shapes records for this store's `ops.importObjects`. Pure and synchronous, so the import's
   * parse threads run it (src/storage/import-batch.ts).
   */
  importBatch(appId: string, className: string, records: ImportRecord[]): ImportBatch;
  /**
   * An application id or class name bound into a read of `objects` (`o.app_id = ${boundScope(appId)}`, `o.class_name
   * = ${boundScope(name)}`), the leading columns of every index on it. SQLite re-plans a prepared statement at every
   * run once a bound value took part in its plan: comparing a bound class with a partial index's `class_name = '_Role'`
   * does, and so does a bound application looked up in ANALYZE's value samples (sqlite_stat4), which an operator's
   * own ANALYZE (or PRAGMA optimize) writes even though an import drops them (afterAnalyze).
   */
  boundScope(value: string): Sql;
  /** Statements run after ANALYZE: keep only the statistics that do not tie plans to bound values (boundScope). */
  readonly afterAnalyze: readonly Sql[];
  /**
   * A read that plans alike for every value (an include level's primary-key probes, a page with its scope pinned:
   * where.ts pageStatement) marked to be parsed once per connection and shape (the text, values bound) and, on
   * PostgreSQL, planned once where the database would otherwise parse and plan it at every run; SQLite's
   * statements are already kept by text (src/storage/sqlite/open.ts), so there it is the statement itself.
   */
  reusedShape(statement: Sql): Sql;
  /**
   * The application, class and (for the public readers alone, `['*']`) the readers' test written into the text of
   * a page read in one plan for every value (an equality split in insertion order, findStatement), where the
   * database can then plan a shape once and reuse it; null keeps them bound. PostgreSQL: a generic plan can use
   * a declared index only when the text names its class (the index is partial), and estimates `readers && $n`
   * at 1%, which made it sort all of a value's rows.
   */
  pinnedScope(appId: string, className: string, readers: readonly string[] | null): PinnedScope | null;
  /**
   * The column of `objects o` that finds a row again by itself (SQLite's rowid), for an $inQuery page that picks its
   * rows from the declared index alone and reads the rest of only those it keeps (where.ts lateRows); null reads the
   * rows as they are picked (PostgreSQL: its planner reads no index on an expression of data alone).
   */
  readonly rowKey: Sql | null;
}

export interface PinnedScope {
  appId: Sql;
  className: Sql;
  /** The readers' test, or null to keep the bound one (readableSql). */
  readable: Sql | null;
}
