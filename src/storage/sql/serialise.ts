import type { Kysely } from 'kysely';
import type { SqlDialect } from './dialect.ts';

/**
 * Makes transactions that name the same key run one after another, on every node, until the
 * holder commits: for a check-then-insert that no unique index can guard (a count, "none yet").
 * How is the dialect's: SQLite's write transactions already run one at a time.
 */
export async function serialiseOn(trx: Kysely<any>, dialect: SqlDialect, key: string): Promise<void> {
  const lock = dialect.serialiseOn(key);
  if (lock) await lock.execute(trx);
}
