import { sql, type Kysely } from 'kysely';
import type { ClassIndexDdl } from '../sql/dialect.ts';
import { quoteLiteral } from '../sql/literal.ts';

/** How long a process waits for another one's migrations before giving up. */
const migrationWaitMs = 10 * 60_000;

/** A key on a pointer's objectId (`post.objectId`), the key an $inQuery on `post` probes. */
const pointerId = (path: string[]) => path.length > 1 && path[path.length - 1] === 'objectId';

/**
 * Declared indexes lead with (app_id, class_name): SQLite cannot use a partial index against the bound
 * app and class. Keys as json_extract(data, '<path>'), the where compiler's spelling (dialect.ts), which
 * serves ranges of strings as of numbers. SQLite builds an index in one statement holding the write lock
 * (no concurrent build: docs/operations.md, "Indexes", for how long), and reports no progress.
 */
export const sqliteClassIndexes: ClassIndexDdl = {
  create(indexName, _appId, _className, keys, unique) {
    const extract = (path: string[]) => `json_extract(data, ${quoteLiteral('$' + path.map((segment) => `."${segment}"`).join(''))})`;
    const columns = keys.map((key) => `${extract(key.path)}${key.descending ? ' DESC' : ''}`);
    // The default order last, so an equality on the keys reads its rows already in that order (findStatement);
    // then what a subquery's page and an $inQuery's probes test of each row, so they read the index alone (where.ts
    // lateRows): the class of a pointer whose objectId is a key (pointerSource), and the readers. An index built
    // before these columns serves the same statements, reading the rows (docs/operations.md, "Indexes on SQLite").
    if (!unique) columns.push('created_at', 'id', ...keys.flatMap((key) => (pointerId(key.path) ? [extract([...key.path.slice(0, -1), 'className'])] : [])), 'readers');
    return [`${unique ? 'CREATE UNIQUE INDEX' : 'CREATE INDEX'} "${indexName}" ON objects (app_id, class_name, ${columns.join(', ')})`];
  },
  drop: (indexName) => [`DROP INDEX IF EXISTS "${indexName}"`],
  // One write transaction: processes build (and drop) one at a time (the next finds the index built),
  // and one that stops mid-build leaves nothing of it.
  async exclusively(db, _indexName, work) {
    await db.connection().execute((connection) => sqliteWriteLock(connection, () => work(connection)));
    return true;
  },
  builder: async () => null,
  progress: async () => new Map(),
  transient: (error) => String((error as { code?: unknown } | null)?.code ?? '').startsWith('SQLITE_BUSY'),
  // A build runs on the event loop to its end: nothing is left running to stop.
  cancel: async () => undefined,
};

/**
 * One write transaction (BEGIN IMMEDIATE) around the run: processes migrate (or build an index) one at a
 * time, and a step that fails leaves nothing half-applied.
 */
export async function sqliteWriteLock(connection: Kysely<any>, work: () => Promise<void>): Promise<void> {
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
