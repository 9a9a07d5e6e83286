import pg from 'pg';
import Database from 'better-sqlite3';

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
 * Inserts many `_Installation` rows in one statement, straight into the objects table, so tests
 * and benchmarks can have 100,000 devices in seconds (the REST path is tested elsewhere).
 * Object ids sort in the same order as i.
 */
export async function seedInstallations(options: SeedOptions): Promise<void> {
  const now = options.now ?? Date.now();
  if (options.env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: options.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, acl, readers, installation_id)
         SELECT $1, '_Installation', $2 || lpad(i::text, 10, '0'), $3, $3,
           jsonb_build_object('installationId', $2 || i, 'deviceType', 'android', 'channels', jsonb_build_array($4::text),
             'deviceProfile', '_default'),
           NULL, ARRAY['*'], $2 || i
         FROM generate_series(0, $5 - 1) AS i`,
        [options.appId, options.prefix, now, options.channel, options.count],
      );
      // Fresh statistics, as a live database has them: without them the planner may sort instead of paging by key.
      await client.query('ANALYZE objects');
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(options.env.SQLITE_PATH);
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare(
      `WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < @count)
       INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, acl, readers, installation_id)
       SELECT @appId, '_Installation', @prefix || substr('0000000000' || i, -10), @now, @now,
         json_object('installationId', @prefix || i, 'deviceType', 'android', 'channels', json_array(@channel),
           'deviceProfile', '_default'),
         NULL, '["*"]', @prefix || i
       FROM seq`,
    ).run({ appId: options.appId, prefix: options.prefix, now, channel: options.channel, count: options.count });
  } finally {
    db.close();
  }
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
