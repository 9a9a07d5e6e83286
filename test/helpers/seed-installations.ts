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
  const text = `SELECT count(*) AS n, count(DISTINCT installation_id) AS d FROM push_mailbox WHERE app_id = $1 AND notification_id = $2`;
  if (env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query(text, [appId, notificationId]);
      return { rows: Number(rows[0].n), devices: Number(rows[0].d) };
    } finally {
      await client.end();
    }
  }
  const db = new Database(env.SQLITE_PATH, { readonly: true });
  try {
    const row = db.prepare(text.replace('$1', '?').replace('$2', '?')).get(appId, notificationId) as { n: number; d: number };
    return { rows: row.n, devices: row.d };
  } finally {
    db.close();
  }
}
