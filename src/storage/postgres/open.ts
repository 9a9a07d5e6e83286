import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { SqlStore } from '../sql/sql-store.ts';
import { postgresDialect } from './dialect.ts';

// BIGINT columns hold epoch milliseconds, well inside the exact range of a JS number.
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export async function openPostgresStore(options: { url: string; poolSize?: number }): Promise<SqlStore> {
  const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10, types });
  // An idle connection dropped by the server (restart, failover) is replaced on next use; without
  // a listener the pool's 'error' event would crash the process.
  pool.on('error', () => undefined);
  const store = new SqlStore({ db: new Kysely({ dialect: new PostgresDialect({ pool }) }), dialect: postgresDialect });
  await store.migrate();
  return store;
}
