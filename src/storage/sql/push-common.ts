import { sql, type Kysely } from 'kysely';
import type { SqlDialect } from './dialect.ts';

/** Rows per INSERT statement: well under both databases' bound-parameter limits. */
export const insertChunk = 1000;

export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Page results and acknowledgements may be lost if PostgreSQL itself crashes (never when Roost
 * does): the cost is a redelivery the device filters by id, so they skip the WAL flush wait.
 */
export async function relaxedCommit(trx: Kysely<any>, dialect: SqlDialect): Promise<void> {
  if (dialect.kind === 'postgres') await sql`SET LOCAL synchronous_commit = off`.execute(trx);
}

/** Adds to a notification's counters atomically (one row per counter). */
export async function addCounts(db: Kysely<any>, appId: string, notificationId: string, counts: Record<string, number>) {
  const entries = Object.entries(counts).filter(([, n]) => n !== 0);
  if (entries.length === 0) return;
  await sql`INSERT INTO push_counts (app_id, notification_id, key, n)
    VALUES ${sql.join(entries.map(([key, n]) => sql`(${appId}, ${notificationId}, ${key}, ${n})`))}
    ON CONFLICT (app_id, notification_id, key) DO UPDATE SET n = push_counts.n + excluded.n`.execute(db);
}
