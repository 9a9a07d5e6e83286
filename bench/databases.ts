// The benchmarks' PostgreSQL databases: one fresh database a run, made and dropped through the admin URL.
import pg from 'pg';

/** Local PostgreSQL server (trust auth) that the PostgreSQL runs create their databases on. */
export const pgAdminUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function databaseUrl(name: string): string {
  const url = new URL(pgAdminUrl);
  url.pathname = '/' + name;
  return url.toString();
}

export async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: pgAdminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh database (dropped first if a crashed run left it). */
export async function createDatabase(name: string): Promise<string> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bad database name ${name}`);
  await withAdmin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  });
  return databaseUrl(name);
}

/**
 * Refreshes the planner's statistics of a database after seeding, as autovacuum would within a
 * minute on a default server. Without it (autovacuum is off on this machine's PostgreSQL) the
 * planner knows nothing of the seeded rows and may scan a whole class for a get-by-id.
 */
export function analyzeDatabase(url: string): Promise<void> {
  return maintainDatabase(url, 'ANALYZE');
}

/**
 * Clears the dead rows and pending index entries a run of writes left, as autovacuum would between two
 * of a default server's runs: with it off here, each scenario would otherwise pay for every earlier one's
 * updates (bench:accounts' update ran after the sign-ups over a growing GIN backlog).
 */
export function vacuumDatabase(url: string): Promise<void> {
  return maintainDatabase(url, 'VACUUM (ANALYZE)');
}

async function maintainDatabase(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function dropDatabase(name: string): Promise<void> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bad database name ${name}`);
  await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
