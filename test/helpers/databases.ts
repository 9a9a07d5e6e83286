import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openPostgresStore } from '../../src/storage/postgres/open.ts';
import { openSqliteStore } from '../../src/storage/sqlite/open.ts';
import type { Store } from '../../src/storage/store.ts';
import { newSecretKeyText, SecretBox } from '../../src/lib/secret-box.ts';
import { loadSecretKeys } from '../../src/secret-keys.ts';

/** The PostgreSQL server under test, when the suite runs against PostgreSQL (DATABASE_URL set). */
export const postgresUrl = process.env.DATABASE_URL || null;
export const storeKind: 'sqlite' | 'postgres' = postgresUrl ? 'postgres' : 'sqlite';

/** Creates an empty database on the test server, so test files running at once never share tables. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!postgresUrl) throw new Error('DATABASE_URL is not set');
  const name = `roost_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A database for one test file: a private PostgreSQL database or a temporary SQLite file. */
export interface TestDatabase {
  kind: 'sqlite' | 'postgres';
  /** What a Roost process needs in its environment to use this database. */
  env: Record<string, string>;
  open(): Promise<Store>;
  drop(): Promise<void>;
}

/** sqliteBusyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS for the server and any process given `env` (SQLite only). */
export async function testDatabase(options: { sqliteBusyTimeoutMs?: number } = {}): Promise<TestDatabase> {
  if (storeKind === 'postgres') {
    const db = await freshPostgresDatabase();
    const secretKey = newSecretKeyText();
    return {
      kind: 'postgres',
      env: { DATABASE_URL: db.url, ROOST_SECRET_KEY: secretKey },
      open: () => openPostgresStore({ url: db.url, poolSize: 5, secrets: SecretBox.fromText(secretKey) }),
      drop: db.drop,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'roost-test-'));
  const path = join(dir, 'roost.sqlite');
  return {
    kind: 'sqlite',
    env: { SQLITE_PATH: path, ...(options.sqliteBusyTimeoutMs === undefined ? {} : { SQLITE_BUSY_TIMEOUT_MS: String(options.sqliteBusyTimeoutMs) }) },
    // What a Roost process does on this database: the key file next to it, created on first open.
    open: () => openSqliteStore({ path, busyTimeoutMs: options.sqliteBusyTimeoutMs, secrets: loadSecretKeys({ databaseUrl: null, sqlitePath: path, dataDir: dirname(path), secretKey: null, secretKeyFile: null }).box }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
