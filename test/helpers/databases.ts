import pg from 'pg';
import { randomBytes } from 'node:crypto';

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
