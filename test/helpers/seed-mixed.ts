import pg from 'pg';
import Database from 'better-sqlite3';

export interface MixedSeedOptions {
  /** DATABASE_URL (PostgreSQL) or SQLITE_PATH, as a Roost process would get them. */
  env: Record<string, string>;
  appId: string;
  count: number;
  /** installationId of device i is `${prefix}${i}`; object ids sort in the same order as i. */
  prefix: string;
  channel: string;
  /** Device i goes to routes[i % routes.length]: a maker name, or 'lc' (no vendor, own channel). */
  routes: string[];
  now?: number;
}

/** The registration id device i gets (when its route is a maker). */
export const seededToken = (prefix: string, i: number) => `tok-${prefix}${i}`;

/**
 * Inserts many `_Installation` rows in one INSERT … SELECT (generate_series on PostgreSQL, a
 * recursive CTE on SQLite), spread round-robin over the makers and the own channel, so tests and
 * benchmarks have a million devices without a million requests (the REST path is tested elsewhere).
 */
export async function seedMixedInstallations(options: MixedSeedOptions): Promise<void> {
  const now = options.now ?? Date.now();
  const routes = JSON.stringify(options.routes);
  if (options.env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: options.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(
        `WITH r AS (SELECT array_agg(v ORDER BY o) AS a FROM jsonb_array_elements_text($6::jsonb) WITH ORDINALITY AS t(v, o))
         INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, acl, readers, installation_id)
         SELECT $1, '_Installation', $2 || lpad(i::text, 10, '0'), $3, $3,
           jsonb_build_object('installationId', $2 || i, 'deviceType', 'android', 'channels', jsonb_build_array($4::text),
             'deviceProfile', '_default')
           || CASE WHEN r.a[i % cardinality(r.a) + 1] = 'lc' THEN '{}'::jsonb
              ELSE jsonb_build_object('vendor', r.a[i % cardinality(r.a) + 1], 'registrationId', 'tok-' || $2 || i) END,
           NULL, ARRAY['*'], $2 || i
         FROM r, generate_series(0, $5 - 1) AS i`,
        [options.appId, options.prefix, now, options.channel, options.count, routes],
      );
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
      `WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < @count),
       d AS (SELECT i, json_extract(@routes, '$[' || (i % json_array_length(@routes)) || ']') AS route FROM seq)
       INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, acl, readers, installation_id)
       SELECT @appId, '_Installation', @prefix || substr('0000000000' || i, -10), @now, @now,
         CASE WHEN route = 'lc' THEN
           json_object('installationId', @prefix || i, 'deviceType', 'android', 'channels', json_array(@channel), 'deviceProfile', '_default')
         ELSE
           json_object('installationId', @prefix || i, 'deviceType', 'android', 'channels', json_array(@channel), 'deviceProfile', '_default',
             'vendor', route, 'registrationId', 'tok-' || @prefix || i)
         END,
         NULL, '["*"]', @prefix || i
       FROM d`,
    ).run({ appId: options.appId, prefix: options.prefix, now, channel: options.channel, count: options.count, routes });
  } finally {
    db.close();
  }
}
