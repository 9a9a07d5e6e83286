import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { ClassIndex, ClassIndexStore, IndexKey } from '../class-index-store.ts';
import type { SqlDialect } from './dialect.ts';

/** Begins the name of every index users declare, so a write that violates one is told from the schema's own. */
export const classIndexPrefix = 'cix_';

interface Row {
  name: string;
  keys: string;
  index_name: string;
}

/** A string as a quoted SQL literal, for DDL, which binds no parameters. */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The database index's name: from the application, class and name, so no user's name can reach another
 * application's indexes or the schema's own, and short enough for PostgreSQL's 63 characters.
 */
function indexNameOf(appId: string, className: string, name: string): string {
  return `${classIndexPrefix}${createHash('sha256').update(JSON.stringify([appId, className, name])).digest('hex').slice(0, 32)}`;
}

/**
 * Each key as the where compiler spells the field (src/storage/{sqlite,postgres}/dialect.ts), which the
 * planner needs to match the index. SQLite: after (app_id, class_name) as leading columns (SQLite
 * cannot use a partial index against the bound app and class). PostgreSQL: a partial index on the
 * class's rows only, in jsonOrder's NULLS placement so ORDER BY reads it either way.
 */
function createStatement(kind: SqlDialect['kind'], indexName: string, appId: string, className: string, keys: IndexKey[], unique: boolean): string {
  const create = unique ? 'CREATE UNIQUE INDEX' : 'CREATE INDEX';
  if (kind === 'sqlite') {
    const columns = keys.map((key) => {
      const path = '$' + key.path.map((segment) => `."${segment}"`).join('');
      return `json_extract(data, ${literal(path)})${key.descending ? ' DESC' : ''}`;
    });
    return `${create} "${indexName}" ON objects (app_id, class_name, ${columns.join(', ')})`;
  }
  const columns = keys.map((key) => {
    const array = `{${key.path.map((segment) => `"${segment}"`).join(',')}}`;
    return `(data #> ${literal(array)}::text[]) ${key.descending ? 'DESC NULLS LAST' : 'NULLS FIRST'}`;
  });
  return `${create} CONCURRENTLY "${indexName}" ON objects (${columns.join(', ')})
    WHERE app_id = ${literal(appId)} AND class_name = ${literal(className)}`;
}

export class SqlClassIndexStore implements ClassIndexStore {
  private readonly db: Kysely<any>;
  private readonly kind: SqlDialect['kind'];
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
    this.kind = options.dialect.kind;
  }

  async create(appId: string, className: string, spec: { name: string; keys: IndexKey[]; unique: boolean }): Promise<ClassIndex | 'exists' | 'duplicates'> {
    const { name, keys, unique } = spec;
    const indexName = indexNameOf(appId, className, name);
    // The row first: it claims the name, and list() shows the index as building meanwhile.
    const { rows } = await sql<{ name: string }>`INSERT INTO class_indexes (app_id, class_name, name, keys, index_name, created_at)
      VALUES (${appId}, ${className}, ${name}, ${JSON.stringify(keys)}, ${indexName}, ${Date.now()})
      ON CONFLICT DO NOTHING RETURNING name`.execute(this.db);
    if (rows.length === 0) return 'exists';
    try {
      await this.ddl(createStatement(this.kind, indexName, appId, className, keys, unique));
    } catch (error) {
      // A build that stopped leaves an invalid index on PostgreSQL: nothing of it stays.
      await this.dropIndex(indexName);
      await sql`DELETE FROM class_indexes WHERE index_name = ${indexName}`.execute(this.db);
      if (unique && this.dialect.uniqueViolation(error)) return 'duplicates';
      throw error;
    }
    return { name, keys, unique, state: 'ready' };
  }

  async list(appId: string, className: string): Promise<ClassIndex[]> {
    const { rows } = await sql<Row>`SELECT name, keys, index_name FROM class_indexes
      WHERE app_id = ${appId} AND class_name = ${className} ORDER BY name`.execute(this.db);
    const catalogue = await this.catalogue(rows.map((row) => row.index_name));
    return rows.map((row) => {
      const found = catalogue.get(row.index_name);
      return { name: row.name, keys: JSON.parse(row.keys) as IndexKey[], unique: found?.unique ?? false, state: found?.state ?? 'building' };
    });
  }

  async drop(appId: string, className: string, name: string): Promise<boolean> {
    const { rows } = await sql<Row>`SELECT index_name FROM class_indexes
      WHERE app_id = ${appId} AND class_name = ${className} AND name = ${name}`.execute(this.db);
    if (rows.length === 0) return false;
    await this.dropIndex(rows[0].index_name);
    await sql`DELETE FROM class_indexes WHERE index_name = ${rows[0].index_name}`.execute(this.db);
    return true;
  }

  /**
   * The state and uniqueness of each index the catalogue has. PostgreSQL: valid is ready; an invalid
   * one is building while pg_stat_progress_create_index reports it, else failed. One the catalogue
   * does not have yet is building.
   */
  private async catalogue(indexNames: string[]): Promise<Map<string, { state: ClassIndex['state']; unique: boolean }>> {
    const found = new Map<string, { state: ClassIndex['state']; unique: boolean }>();
    if (indexNames.length === 0) return found;
    if (this.kind === 'sqlite') {
      const { rows } = await sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master
        WHERE type = 'index' AND name IN (${sql.join(indexNames)})`.execute(this.db);
      for (const row of rows) found.set(row.name, { state: 'ready', unique: row.sql.startsWith('CREATE UNIQUE') });
      return found;
    }
    const { rows } = await sql<{ name: string; valid: boolean; unique: boolean; building: boolean }>`SELECT c.relname AS name,
        i.indisvalid AS valid, i.indisunique AS unique,
        EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid) AS building
      FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ANY(${indexNames}::text[])`.execute(this.db);
    for (const row of rows) found.set(row.name, { state: row.valid ? 'ready' : row.building ? 'building' : 'failed', unique: row.unique });
    return found;
  }

  private async dropIndex(indexName: string): Promise<void> {
    await this.ddl(this.kind === 'sqlite' ? `DROP INDEX IF EXISTS "${indexName}"` : `DROP INDEX CONCURRENTLY IF EXISTS "${indexName}"`);
  }

  /**
   * PostgreSQL: CONCURRENTLY, so writes go on while it builds, which runs outside a transaction and
   * may take longer than STATEMENT_TIMEOUT_MS: on one connection with the timeout lifted for it.
   */
  private async ddl(statement: string): Promise<void> {
    if (this.kind === 'sqlite') {
      await sql.raw(statement).execute(this.db);
      return;
    }
    await this.db.connection().execute(async (connection) => {
      await sql`SET statement_timeout = 0`.execute(connection);
      try {
        await sql.raw(statement).execute(connection);
      } finally {
        await sql`RESET statement_timeout`.execute(connection);
      }
    });
  }
}
