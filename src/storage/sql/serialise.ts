import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.ts';

/**
 * Makes transactions that name the same key run one after another, on every node, until the
 * holder commits: for a check-then-insert that no unique index can guard (a count, "none yet").
 * SQLite needs nothing: its write transactions begin IMMEDIATE, one writer at a time across
 * processes. PostgreSQL takes a transaction-scoped advisory lock on the key's hash.
 */
export async function serialiseOn(trx: Kysely<any>, dialect: SqlDialect, key: string): Promise<void> {
  if (dialect.kind === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}
