import Database from 'better-sqlite3';
import pg from 'pg';
import type { TestDatabase } from './harness.ts';

/**
 * Another connection takes the write lock until the returned function releases it: SQLite's one
 * write lock (BEGIN IMMEDIATE), or on PostgreSQL an EXCLUSIVE lock on `table`. Readers still read.
 */
export async function holdWriteLock(database: TestDatabase, table: string): Promise<() => Promise<void>> {
  if (database.kind === 'sqlite') {
    const other = new Database(database.env.SQLITE_PATH);
    other.exec('BEGIN IMMEDIATE');
    return async () => {
      other.exec('ROLLBACK');
      other.close();
    };
  }
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
  return async () => {
    await client.query('ROLLBACK');
    await client.end();
  };
}
