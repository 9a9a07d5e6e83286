import { sql, type Kysely } from 'kysely';
import type { CatalogueEntry, ClassIndexDdl } from '../sql/dialect.ts';
import { quoteLiteral } from '../sql/literal.ts';

/** "roostmig": the advisory lock only migrations take. */
const migrationLockKey = '8245931984403917159';

/**
 * Declared indexes are partial (the class's rows only), built CONCURRENTLY so writes go on, with keys
 * as the where compiler spells them (data #> '{path}') in jsonOrder's NULLS placement, so ORDER BY
 * reads them either way; a non-unique one ends with the default order (created_at, id).
 */
export const postgresClassIndexes: ClassIndexDdl = {
  create(indexName, appId, className, keys, unique) {
    const columns = keys.map((key) => {
      const array = `{${key.path.map((segment) => `"${segment}"`).join(',')}}`;
      return `(data #> ${quoteLiteral(array)}::text[]) ${key.descending ? 'DESC NULLS LAST' : 'NULLS FIRST'}`;
    });
    // The default order last, so an equality on the keys reads its rows already in that order (findStatement).
    if (!unique) columns.push('created_at', 'id');
    return `${unique ? 'CREATE UNIQUE INDEX' : 'CREATE INDEX'} CONCURRENTLY "${indexName}" ON objects (${columns.join(', ')})
      WHERE app_id = ${quoteLiteral(appId)} AND class_name = ${quoteLiteral(className)}`;
  },
  drop: (indexName) => `DROP INDEX CONCURRENTLY IF EXISTS "${indexName}"`,
  // CONCURRENTLY runs outside a transaction and may outlast STATEMENT_TIMEOUT_MS: one connection, the timeout lifted.
  async run(db, statement) {
    await db.connection().execute(async (connection) => {
      await sql`SET statement_timeout = 0`.execute(connection);
      try {
        await sql.raw(statement).execute(connection);
      } finally {
        await sql`RESET statement_timeout`.execute(connection);
      }
    });
  },
  // Valid is ready; an invalid one is building while pg_stat_progress_create_index reports it, else failed.
  async catalogue(db, indexNames) {
    const found = new Map<string, CatalogueEntry>();
    if (indexNames.length === 0) return found;
    const { rows } = await sql<{ name: string; valid: boolean; unique: boolean; building: boolean }>`SELECT c.relname AS name,
        i.indisvalid AS valid, i.indisunique AS unique,
        EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid) AS building
      FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ANY(${indexNames}::text[])`.execute(db);
    for (const row of rows) found.set(row.name, { state: row.valid ? 'ready' : row.building ? 'building' : 'failed', unique: row.unique });
    return found;
  },
};

/** A session advisory lock on the migrating connection (the server frees it if the process dies). */
export async function postgresMigrationLock(connection: Kysely<any>, work: () => Promise<void>): Promise<void> {
  await sql`SELECT pg_advisory_lock(${sql.lit(migrationLockKey)}::bigint)`.execute(connection);
  try {
    await work();
  } finally {
    // A lost connection took the lock with it.
    await sql`SELECT pg_advisory_unlock(${sql.lit(migrationLockKey)}::bigint)`.execute(connection).catch(() => undefined);
  }
}
