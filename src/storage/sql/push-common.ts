import { sql, type Kysely } from 'kysely';
import type { JobView, NewPush, PushContent } from '../../push/types.ts';
import type { Readers, Where } from '../../objects/types.ts';
import type { SqlDialect } from './dialect.ts';

/** A push_notifications row: the record and its fan-out job's cursor. */
export interface NotificationRow {
  app_id: string;
  id: string;
  created_at: number | string;
  updated_at: number | string;
  status: string;
  push_time: number | string;
  expires_at: number | string | null;
  request: string;
  content: string;
  selector: string;
  last_key: string;
  pages: number | string;
  paged: number | string;
}

/**
 * push_notifications.selector: the where tree alone for the master key (as every row before client pushes
 * kept their readers), or {where, readers} for a client push, whose subqueries read only what its caller may.
 */
export function storedSelector(push: Pick<NewPush, 'selector' | 'readers'>): string {
  return JSON.stringify(push.readers == null ? push.selector : { where: push.selector, readers: push.readers });
}

export function selectorOf(text: string): { where: Where; readers: Readers } {
  const stored = JSON.parse(text) as Where | { where: Where; readers: string[] };
  return 'readers' in stored ? stored : { where: stored, readers: null };
}

export const num = (value: number | string | null): number | null => (value === null ? null : Number(value));

export function jobOf(row: NotificationRow): JobView {
  return {
    appId: row.app_id,
    notificationId: row.id,
    createdAt: Number(row.created_at),
    expiresAt: num(row.expires_at),
    content: JSON.parse(row.content) as PushContent,
  };
}

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
  if (dialect.relaxedCommit) await dialect.relaxedCommit.execute(trx);
}

/**
 * Adds to a notification's counters atomically (one row per counter). Keys are written in sorted
 * order: pages of one job are routed and finished in parallel, and two transactions locking the
 * same counter rows in different orders would deadlock.
 */
export async function addCounts(db: Kysely<any>, appId: string, notificationId: string, counts: Record<string, number>) {
  const entries = Object.entries(counts)
    .filter(([, n]) => n !== 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return;
  await sql`INSERT INTO push_counts (app_id, notification_id, key, n)
    VALUES ${sql.join(entries.map(([key, n]) => sql`(${appId}, ${notificationId}, ${key}, ${n})`))}
    ON CONFLICT (app_id, notification_id, key) DO UPDATE SET n = push_counts.n + excluded.n`.execute(db);
}
