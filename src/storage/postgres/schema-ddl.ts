import { sql, type Kysely } from 'kysely';
import type { ClassIndexDdl } from '../sql/dialect.ts';
import type { BuildProgress, IndexKey } from '../class-index-store.ts';
import { quoteLiteral } from '../sql/literal.ts';

/** "roostmig": the advisory lock only migrations take. */
const migrationLockKey = '8245931984403917159';

/** The first key of the advisory locks a declared index's builder holds ("cix" in ASCII); the second is the name's hash. */
const buildLockSpace = 6515064;
/** The first key of the advisory lock that makes builds across processes run one at a time. */
const oneBuildAtATime = buildLockSpace + 1;

/**
 * Declared indexes are partial (the class's rows only), built CONCURRENTLY so writes go on, with keys
 * as the where compiler spells them (data #> '{path}') in jsonOrder's NULLS placement, so ORDER BY
 * reads them either way; a non-unique one ends with the default order (created_at, id). Beside it, on
 * the first key's strings, the text in byte order (`<name>_s`): string ranges compare that way, as
 * SQLite does, where jsonb orders strings by the database's collation (postgresDialect.jsonCompare).
 */
export const postgresClassIndexes: ClassIndexDdl = {
  create(indexName, appId, className, keys, unique) {
    const pathOf = (key: IndexKey) => quoteLiteral(`{${key.path.map((segment) => `"${segment}"`).join(',')}}`);
    const columns = keys.map((key) => `(data #> ${pathOf(key)}::text[]) ${key.descending ? 'DESC NULLS LAST' : 'NULLS FIRST'}`);
    // The default order last, so an equality on the keys reads its rows already in that order (findStatement).
    if (!unique) columns.push('created_at', 'id');
    const ofClass = `app_id = ${quoteLiteral(appId)} AND class_name = ${quoteLiteral(className)}`;
    const first = `${pathOf(keys[0])}::text[]`;
    return [
      `${unique ? 'CREATE UNIQUE INDEX' : 'CREATE INDEX'} CONCURRENTLY "${indexName}" ON objects (${columns.join(', ')}) WHERE ${ofClass}`,
      `CREATE INDEX CONCURRENTLY "${indexName}_s" ON objects (((data #>> ${first}) COLLATE "C"))
        WHERE ${ofClass} AND jsonb_typeof(data #> ${first}) = 'string'`,
      // Statistics of the first key's expression (PostgreSQL 14 and later; of the whole table: a partial index
      // gives the planner none), so it estimates a value's rows and the range of arrays an equality's split
      // reads (findStatement) instead of guessing 0.5%: with the guess it read that range as a bitmap AND of
      // the GIN index's matches of the value, 0.3 of 0.4 ms a page (bench/RESULTS.md, Objects).
      `DO $$ BEGIN IF current_setting('server_version_num')::int >= 140000 THEN
        EXECUTE ${quoteLiteral(`CREATE STATISTICS IF NOT EXISTS "${indexName}_x" ON ((data #> ${first})) FROM objects`)}; END IF; END $$`,
      `ANALYZE objects`,
    ];
  },
  // One statement each: CONCURRENTLY drops one index at a time.
  drop: (indexName) => [
    `DROP INDEX CONCURRENTLY IF EXISTS "${indexName}"`,
    `DROP INDEX CONCURRENTLY IF EXISTS "${indexName}_s"`,
    `DROP STATISTICS IF EXISTS "${indexName}_x"`,
  ],
  // Session advisory locks (the server frees them when the builder's connection ends, however it ends),
  // and no statement timeout: CONCURRENTLY runs outside a transaction and may outlast STATEMENT_TIMEOUT_MS.
  async exclusively(db, indexName, work, options) {
    return db.connection().execute(async (connection) => {
      const claim = sql`${sql.lit(buildLockSpace)}, hashtext(${indexName})`;
      const { rows } = await sql<{ held: boolean }>`SELECT pg_try_advisory_lock(${claim}) AS held`.execute(connection);
      if (!rows[0].held) return false;
      await sql`SET statement_timeout = 0`.execute(connection);
      try {
        // Two CREATE INDEX CONCURRENTLY on one table each wait for the other's transaction: a deadlock.
        if (options?.oneAtATime) await sql`SELECT pg_advisory_lock(${sql.lit(oneBuildAtATime)}, 0)`.execute(connection);
        await work(connection);
      } finally {
        await sql`RESET statement_timeout`.execute(connection).catch(() => undefined);
        await sql`SELECT pg_advisory_unlock_all()`.execute(connection).catch(() => undefined);
      }
      return true;
    });
  },
  async builder(connection) {
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(connection);
    return String(rows[0].pid);
  },
  async progress(db, builders) {
    const found = new Map<string, BuildProgress>();
    if (builders.length === 0) return found;
    const { rows } = await sql<Record<string, string>>`SELECT pid::text AS pid, phase, blocks_done::text AS blocks_done,
        blocks_total::text AS blocks_total, tuples_done::text AS tuples_done, tuples_total::text AS tuples_total
      FROM pg_stat_progress_create_index WHERE pid = ANY(${builders.map(Number)}::int[])`.execute(db);
    for (const row of rows) {
      found.set(row.pid, {
        phase: row.phase,
        blocks: { done: Number(row.blocks_done), total: Number(row.blocks_total) },
        tuples: { done: Number(row.tuples_done), total: Number(row.tuples_total) },
      });
    }
    return found;
  },
  transient(error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code !== 'string') return /Connection terminated/i.test((error as Error)?.message ?? '');
    // Deadlock, serialization failure, cancelled (a node shutting down), the server shutting down, connection errors.
    return ['40P01', '40001', '57014', '57P01', '57P02', '57P03'].includes(code) || code.startsWith('08')
      || ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT'].includes(code);
  },
  async cancel(db, builders) {
    if (builders.length === 0) return;
    await sql`SELECT pg_cancel_backend(pid) FROM unnest(${builders.map(Number)}::int[]) AS pid`.execute(db);
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
