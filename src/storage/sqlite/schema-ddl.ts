import { sql, type Kysely } from 'kysely';
import type { CatalogueEntry, ClassIndexDdl } from '../sql/dialect.ts';
import { quoteLiteral } from '../sql/literal.ts';

/** How long a process waits for another one's migrations before giving up. */
const migrationWaitMs = 10 * 60_000;

/**
 * Declared indexes lead with (app_id, class_name): SQLite cannot use a partial index against the bound
 * app and class. Keys as json_extract(data, '<path>'), the where compiler's spelling (dialect.ts).
 */
export const sqliteClassIndexes: ClassIndexDdl = {
  create(indexName, _appId, _className, keys, unique) {
    const columns = keys.map((key) => {
      const path = '$' + key.path.map((segment) => `."${segment}"`).join('');
      return `json_extract(data, ${quoteLiteral(path)})${key.descending ? ' DESC' : ''}`;
    });
    // The default order last, so an equality on the keys reads its rows already in that order (findStatement).
    if (!unique) columns.push('created_at', 'id');
    return `${unique ? 'CREATE UNIQUE INDEX' : 'CREATE INDEX'} "${indexName}" ON objects (app_id, class_name, ${columns.join(', ')})`;
  },
  drop: (indexName) => `DROP INDEX IF EXISTS "${indexName}"`,
  async run(db, statement) {
    await sql.raw(statement).execute(db);
  },
  // SQLite builds in its statement: an index the catalogue has is ready.
  async catalogue(db, indexNames) {
    const found = new Map<string, CatalogueEntry>();
    if (indexNames.length === 0) return found;
    const { rows } = await sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master
      WHERE type = 'index' AND name IN (${sql.join(indexNames)})`.execute(db);
    for (const row of rows) found.set(row.name, { state: 'ready', unique: row.sql.startsWith('CREATE UNIQUE') });
    return found;
  },
};

/**
 * One write transaction (BEGIN IMMEDIATE) around the run: processes migrate one at a time, and a step
 * that fails leaves nothing half-applied.
 */
export async function sqliteMigrationLock(connection: Kysely<any>, work: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + migrationWaitMs;
  for (;;) {
    try {
      await sql`BEGIN IMMEDIATE`.execute(connection);
      break;
    } catch (error) {
      // busy_timeout ran out while another process migrates a big database: keep waiting.
      const busy = String((error as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY');
      if (!busy || Date.now() > deadline) throw error;
    }
  }
  try {
    await work();
  } catch (error) {
    await sql`ROLLBACK`.execute(connection).catch(() => undefined);
    throw error;
  }
  await sql`COMMIT`.execute(connection);
}
