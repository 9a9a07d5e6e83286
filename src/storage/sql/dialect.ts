import type { RawBuilder } from 'kysely';
import type { Regex } from '../../objects/regex.ts';
import type { Json, OrderKey } from '../../objects/types.ts';

export type Sql = RawBuilder<unknown>;
export type Comparison = 'lt' | 'lte' | 'gt' | 'gte';
/** PostgreSQL names the index (or constraint); SQLite lists its table and columns. */
export type ViolatedIndex = { name: string } | { table: string; columns: string[] };

/**
 * What differs between the databases: how JSON fields are reached and compared, how the
 * readers of a row are matched, and how a driver error names a unique index.
 * Everything else (statements, transactions, row mapping) is shared in SqlStore.
 */
export interface SqlDialect {
  readonly kind: 'sqlite' | 'postgres';
  /** A JSON field of o.data equals the value or, being an array, contains it. */
  jsonEquals(path: string[], value: Json): Sql;
  /** jsonEquals of any of the values, with the list bound as one parameter (a long $in stays one short expression). */
  jsonIn(path: string[], values: Json[]): Sql;
  /** A promoted column equals one of the values, bound as one parameter. */
  columnIn(column: Sql, kind: 'time' | 'string', values: Array<string | number>): Sql;
  jsonCompare(path: string[], op: Comparison, value: string | number): Sql;
  jsonExists(path: string[]): Sql;
  /** A string field matches a validated pattern (src/objects/regex.ts). */
  jsonRegex(path: string[], regex: Regex): Sql;
  jsonSize(path: string[], size: number): Sql;
  jsonContainsAll(path: string[], values: Json[]): Sql;
  jsonOrder(key: OrderKey): Sql;
  /** The row's readers column shares a principal with the list. */
  readableBy(readers: readonly string[]): Sql;
  /** Value to bind for the JSON columns (data, acl). */
  encodeJson(value: unknown): unknown;
  decodeJson<T>(raw: unknown): T;
  encodeReaders(readers: string[]): unknown;
  /** FOR UPDATE where the database has row locks. */
  readonly rowLock: Sql;
  /** The unique index a driver error says a write violated, in the driver's words (object-row.ts reads it); null for any other error. */
  uniqueViolation(error: unknown): ViolatedIndex | null;
}
