import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, SqliteDriver, type DatabaseConnection, type SqliteDialectConfig } from 'kysely';
import { SqlStore } from '../sql/sql-store.ts';
import { sqliteDialect } from './dialect.ts';

const regexCache = new Map<string, RegExp | null>();

function compiledRegex(pattern: string, flags: string): RegExp | null {
  const key = `${flags}/${pattern}`;
  let compiled = regexCache.get(key);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(pattern, flags.replace(/[^imsx]/g, '').replace('x', ''));
    } catch {
      compiled = null;
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(key, compiled);
  }
  return compiled;
}

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

/** Opens (creating if needed) the embedded store. `:memory:` gives a private in-memory database. */
export async function openSqliteStore(options: { path: string }): Promise<SqlStore> {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const database = new Database(options.path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  database.function('roost_regexp', { deterministic: true }, (value: unknown, pattern: unknown, flags: unknown) => {
    if (typeof value !== 'string' || typeof pattern !== 'string') return 0;
    return compiledRegex(pattern, String(flags ?? ''))?.test(value) ? 1 : 0;
  });
  const store = new SqlStore({ db: new Kysely({ dialect: new ImmediateSqliteDialect({ database }) }), dialect: sqliteDialect });
  await store.migrate();
  return store;
}
