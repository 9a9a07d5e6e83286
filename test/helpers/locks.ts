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

/**
 * PostgreSQL: waits until `count` sessions of the database wait for a lock on `table` or for an
 * advisory lock (so each has done what comes before its write), or until timeoutMs passed.
 */
export async function waitForLockWaiters(database: TestDatabase, table: string, count: number, timeoutMs = 25_000): Promise<void> {
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (let waiting = 0; waiting < count && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const { rows } = await client.query(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE NOT l.granted AND a.datname = current_database() AND (l.relation = $1::regclass OR l.locktype = 'advisory')`,
        [table],
      );
      waiting = rows[0].n;
    }
  } finally {
    await client.end();
  }
}
