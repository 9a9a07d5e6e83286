import pg from 'pg';
import Database from 'better-sqlite3';
import { seedMixedInstallations } from './seed-mixed.ts';

export interface SeedOptions {
  /** DATABASE_URL (PostgreSQL) or SQLITE_PATH, as a Roost process would get them. */
  env: Record<string, string>;
  appId: string;
  count: number;
  /** installationId of device i is `${prefix}${i}` (i from 0). */
  prefix: string;
  channel: string;
  now?: number;
}

/**
 * Inserts many own-channel `_Installation` rows in one statement, so tests and benchmarks can have
 * 100,000 devices in seconds (the REST path is tested elsewhere). Object ids sort in the same order as i.
 */
export function seedInstallations(options: SeedOptions): Promise<void> {
  return seedMixedInstallations({ ...options, routes: ['lc'] });
}

/** Counts own-channel mailbox rows of one notification: one per targeted device, never two. */
export async function mailboxRows(env: Record<string, string>, appId: string, notificationId: string): Promise<{ rows: number; devices: number }> {
  const row = await oneRow(env, `SELECT count(*) AS n, count(DISTINCT installation_id) AS d FROM push_mailbox WHERE app_id = $1 AND notification_id = $2`, [appId, notificationId]);
  return { rows: Number(row.n), devices: Number(row.d) };
}

/**
 * A notification's fan-out as the database holds it, read straight from the store so a test can
 * act at a point of the job without waiting on the (busy) nodes' HTTP answers.
 */
export async function fanOutProgress(env: Record<string, string>, appId: string, notificationId: string): Promise<{ status: string; pagesDone: number; pagesOpen: number } | null> {
  const row = await oneRow(env, `SELECT n.status AS status,
      (SELECT count(*) FROM push_pages p WHERE p.app_id = n.app_id AND p.notification_id = n.id AND p.done = 1) AS done,
      (SELECT count(*) FROM push_pages p WHERE p.app_id = n.app_id AND p.notification_id = n.id AND p.done = 0) AS open
    FROM push_notifications n WHERE n.app_id = $1 AND n.id = $2`, [appId, notificationId]);
  return row ? { status: String(row.status), pagesDone: Number(row.done), pagesOpen: Number(row.open) } : null;
}

async function oneRow(env: Record<string, string>, text: string, values: unknown[]): Promise<Record<string, unknown>> {
  if (env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(text, values)).rows[0];
    } finally {
      await client.end();
    }
  }
  const db = new Database(env.SQLITE_PATH, { readonly: true });
  try {
    return db.prepare(text.replace(/\$\d+/g, '?')).get(...values) as Record<string, unknown>;
  } finally {
    db.close();
  }
}
