import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, SqliteDriver, type DatabaseConnection, type SqliteDatabase, type SqliteDialectConfig } from 'kysely';
import { re2Program } from '../../objects/regex.ts';
import { SqliteStore } from './sqlite-store.ts';
import { StatementsByText } from './statements-by-text.ts';
import type { SecretBox } from '../../lib/secret-box.ts';

/**
 * Write transactions start with BEGIN IMMEDIATE: a deferred one that reads and then writes
 * fails at once with SQLITE_BUSY when another process writes meanwhile, where an immediate
 * one waits (busy_timeout) for the write lock.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  private readonly options: SqliteDialectConfig;
  constructor(options: SqliteDialectConfig) {
    super(options);
    this.options = options;
  }
  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver(this.options);
  }
}

/**
 * Kysely prepares every statement anew, which was a sixth of a get-by-id's CPU time (bench/RESULTS.md).
 * Prepared statements are kept by SQL text instead (StatementsByText); parameters stay bound per call.
 */
function withStatementCache(database: Database.Database): SqliteDatabase {
  const statements = new StatementsByText((text) => database.prepare(text));
  return {
    close: () => database.close(),
    prepare: (text: string) => statements.get(text),
  };
}

/** The largest map SQLite's build allows (SQLITE_MAX_MMAP_SIZE in better-sqlite3: 0x7fff0000). */
const mmapBytes = 0x7fff0000;

/** Opens (creating if needed) the embedded store. `:memory:` gives a private in-memory database. */
export async function openSqliteStore(options: { path: string; busyTimeoutMs?: number; secrets?: SecretBox }): Promise<SqliteStore> {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const database = new Database(options.path);
  // First: switching a new file to WAL needs a moment of exclusive access, which another process
  // starting at the same time may hold.
  database.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // Reads through a memory map share the operating system's page cache instead of copying pages
  // into SQLite's own (16 MiB): at 1,000,000 objects a get-by-id read its index and table pages
  // through read(2) and cost 1.5 times what it cost at 10,000. The map is address space, not memory;
  // a file larger than it is read the usual way past its end.
  database.pragma(`mmap_size = ${mmapBytes}`);
  // $regex: the RE2 spelling of a pattern validated when the query was parsed (src/objects/regex.ts),
  // matched by re2js in time linear in the text; never JavaScript's backtracking RegExp.
  database.function('roost_regexp', { deterministic: true }, (value: unknown, pattern: unknown) => {
    if (typeof value !== 'string' || typeof pattern !== 'string') return 0;
    return re2Program(pattern).test(value) ? 1 : 0;
  });
  const store = new SqliteStore({ db: new Kysely({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }) }), database, secrets: options.secrets });
  await store.migrate();
  await store.resealSecrets(true);
  return store;
}
