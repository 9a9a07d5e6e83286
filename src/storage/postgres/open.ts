import pg from 'pg';
import type { SecretBox } from '../../lib/secret-box.ts';
import { Kysely, PostgresDialect } from 'kysely';
import { PostgresStore } from './postgres-store.ts';
import { surviveLostConnections } from './lost-connections.ts';
import { runPreparedByName } from './prepared.ts';

// BIGINT columns hold epoch milliseconds, well inside the exact range of a JS number.
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export async function openPostgresStore(options: { url: string; poolSize?: number; statementTimeoutMs?: number; secrets?: SecretBox }): Promise<PostgresStore> {
  await migrate(options.url);
  // A server that does not answer fails a checkout after 5 s (a 503), instead of holding the request.
  // No JIT: a page is a few milliseconds of work, and a plan whose estimate passes jit_above_cost (an
  // $inQuery's probes, estimated from default selectivities) spent 75 ms compiling for 2.5 ms of execution.
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    types,
    statement_timeout: options.statementTimeoutMs || false,
    connectionTimeoutMillis: 5000,
    options: '-c jit=off',
  });
  const checkouts = surviveLostConnections(pool);
  runPreparedByName(pool);
  const store = new PostgresStore({ db: new Kysely({ dialect: new PostgresDialect({ pool: checkouts }) }), pool, checkout: checkouts.connect, secrets: options.secrets });
  // Values from before secrets were sealed are sealed now (once: the next start finds none).
  await store.resealSecrets(true);
  return store;
}

/**
 * Migrations run on a connection of their own, without the statement timeout that guards requests:
 * an index built over a big table, or the wait for another node's migrations, may well take longer.
 */
async function migrate(url: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1, types });
  pool.on('error', () => undefined);
  const store = new PostgresStore({ db: new Kysely({ dialect: new PostgresDialect({ pool }) }), pool });
  try {
    await store.migrate();
  } finally {
    await store.close();
  }
}
