// The schema is one ordered folder of migrations (src/storage/sql/migrations, issue #14): the loader
// lists exactly the folder's files, in name order, and a fresh database migrates to the schema
// named here, on the store under test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrations } from '../src/storage/sql/migrations/migrate.ts';
import { sqliteValueSamples } from '../src/storage/sql/migrations/0012_sqlite_value_samples.ts';
import { testDatabase } from './helpers/databases.ts';

test('the loader lists every migration file of the folder, in name order', () => {
  const files = readdirSync('src/storage/sql/migrations')
    .filter((file) => file !== 'migrate.ts')
    .map((file) => file.replace(/\.ts$/, ''));
  for (const file of files) assert.match(file, /^\d{4}_[a-z0-9_]+$/, `${file}: migrations are named NNNN_what_it_does.ts`);
  const listed = migrations.map(([name]) => name);
  assert.deepEqual(listed, files.sort());
  assert.deepEqual(listed, [...listed].sort());
});

const tables = [
  'apps', 'auth_identities', 'class_fields', 'class_indexes', 'kysely_migration', 'kysely_migration_lock',
  'leaderboard_archives', 'leaderboard_statistics', 'leaderboards', 'login_attempts', 'mail_tokens', 'meta', 'objects',
  'operator_audit', 'operator_recovery_codes', 'operator_sessions', 'operators',
  'push_counts', 'push_mailbox', 'push_notifications', 'push_pages', 'push_req_ids', 'push_schedule', 'push_vendor_outbox', 'relations',
  'sms_codes', 'sms_numbers', 'sms_sends', 'stat_buckets', 'status_inbox_counters', 'status_inboxes', 'vendor_pauses',
];
/** Named indexes; primary keys and unique constraints are left to each database's naming. */
const indexes = [
  'auth_identities_user_idx', 'leaderboard_member', 'leaderboard_ranking', 'mail_tokens_user_idx', 'objects_created_id_idx', 'objects_email_key', 'objects_geo_cell_idx', 'objects_installation_id_key',
  'objects_mobile_phone_key', 'objects_role_name_key', 'objects_session_digest_key', 'objects_updated_idx', 'objects_username_key',
  'operator_audit_at_idx', 'operator_sessions_operator_idx',
  'push_notifications_due', 'push_notifications_list', 'push_notifications_sending', 'push_pages_pending', 'relations_target_idx',
  'sms_codes_digest_idx', 'sms_sends_phone_idx', 'status_inboxes_status',
];

test('a fresh database migrates to the whole schema, and a second start applies nothing', async () => {
  const database = await testDatabase();
  try {
    await (await database.open()).close();
    await (await database.open()).close();
    let schema: { tables: string[]; indexes: string[]; applied: string[] };
    if (database.kind === 'sqlite') {
      const db = new Database(database.env.SQLITE_PATH, { readonly: true });
      const names = (type: string) =>
        (db.prepare(`SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name`).all(type) as Array<{ name: string }>).map((r) => r.name);
      schema = {
        tables: names('table'),
        indexes: names('index'),
        applied: (db.prepare('SELECT name FROM kysely_migration ORDER BY name').all() as Array<{ name: string }>).map((r) => r.name),
      };
      db.close();
    } else {
      const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
      await client.connect();
      const names = async (query: string) => (await client.query<{ name: string }>(query)).rows.map((r) => r.name);
      schema = {
        tables: await names(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`),
        indexes: await names(`SELECT i.indexname AS name FROM pg_indexes i WHERE i.schemaname = 'public' AND NOT EXISTS
          (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname) ORDER BY 1`),
        applied: await names('SELECT name FROM kysely_migration ORDER BY name'),
      };
      await client.end();
    }
    // The GIN index on objects.data (0002) is PostgreSQL's only; SQLite keeps 0007's geo index (0019).
    const expected = [...indexes, ...(database.kind === 'postgres' ? ['objects_data_gin'] : ['objects_geo_idx'])].sort();
    assert.deepEqual(schema, { tables, indexes: expected, applied: migrations.map(([name]) => name) });
  } finally {
    await database.drop();
  }
});

// Regression (11bbb94): a SQLite database imported before imports dropped ANALYZE's value samples kept them,
// and every page's statement was planned again at each run. 0012 drops them and keeps the row counts.
test('0012 drops the value samples an older import left in a SQLite database, keeping its row counts', { skip: process.env.DATABASE_URL ? 'SQLite only' : false }, async () => {
  const database = await testDatabase();
  try {
    await (await database.open()).close();
    const db = new Database(database.env.SQLITE_PATH);
    db.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 50)
      INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT 'stats-app', 'Item', printf('%024x', i), i, i, json_object('n', i), '["*"]' FROM s`);
    db.exec('ANALYZE');
    assert.ok((db.prepare('SELECT count(*) AS n FROM sqlite_stat4').get() as { n: number }).n > 0);
    // 0012's statements as the migrator runs them (removing its row to rerun it would put it after later migrations, which Kysely refuses).
    for (const statement of sqliteValueSamples.sqlite) db.exec(statement);
    db.close();
    await (await database.open()).close();
    const after = new Database(database.env.SQLITE_PATH, { readonly: true });
    try {
      assert.equal((after.prepare('SELECT count(*) AS n FROM sqlite_stat4').get() as { n: number }).n, 0);
      assert.ok((after.prepare(`SELECT count(*) AS n FROM sqlite_stat1 WHERE tbl = 'objects'`).get() as { n: number }).n > 0);
    } finally {
      after.close();
    }
  } finally {
    await database.drop();
  }
});

// 0014: relation fields are recorded once, in class_fields; relation_keys' fields are copied over and it goes.
test('0014 moves the relation fields relation_keys alone knew into class_fields, keeps those it has, and drops relation_keys', { skip: process.env.DATABASE_URL ? 'SQLite only' : false }, async () => {
  const database = await testDatabase();
  try {
    await (await database.open()).close();
    const db = new Database(database.env.SQLITE_PATH);
    db.exec(`CREATE TABLE relation_keys (app_id TEXT NOT NULL, class_name TEXT NOT NULL, key TEXT NOT NULL, target_class TEXT NOT NULL,
      PRIMARY KEY (app_id, class_name, key))`);
    db.exec(`INSERT INTO relation_keys VALUES ('a', '_User', 'favourites', 'Post'), ('a', 'Post', 'likes', '_User')`);
    db.exec(`INSERT INTO class_fields (app_id, class_name, name, type) VALUES ('a', 'Post', 'likes', '{"type":"Relation","className":"_User"}'),
      ('a', 'Post', 'title', '{"type":"String"}')`);
    // 0014's statements run again by hand: un-recording it would make the migrator refuse the later ones.
    for (const statement of migrations.find(([name]) => name === '0014_relation_fields_in_class_fields')![1].sqlite) db.exec(statement);
    db.close();
    const after = new Database(database.env.SQLITE_PATH, { readonly: true });
    try {
      const rows = after.prepare('SELECT class_name, name, type FROM class_fields ORDER BY class_name, name').all();
      assert.deepEqual(rows, [
        { class_name: 'Post', name: 'likes', type: '{"type":"Relation","className":"_User"}' },
        { class_name: 'Post', name: 'title', type: '{"type":"String"}' },
        { class_name: '_User', name: 'favourites', type: '{"type":"Relation","className":"Post"}' },
      ]);
      assert.equal((after.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'relation_keys'`).get() as { n: number }).n, 0);
    } finally {
      after.close();
    }
  } finally {
    await database.drop();
  }
});
