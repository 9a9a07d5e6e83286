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

/**
 * The database index's name: from the application, class and name, so no user's name can reach another
 * application's indexes or the schema's own, and short enough for PostgreSQL's 63 characters.
 */
function indexNameOf(appId: string, className: string, name: string): string {
  return `${classIndexPrefix}${createHash('sha256').update(JSON.stringify([appId, className, name])).digest('hex').slice(0, 32)}`;
}

export class SqlClassIndexStore implements ClassIndexStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
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
      await this.dialect.classIndexes.run(this.db, this.dialect.classIndexes.create(indexName, appId, className, keys, unique));
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
    // One the catalogue does not have yet is building.
    const catalogue = await this.dialect.classIndexes.catalogue(this.db, rows.map((row) => row.index_name));
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

  private async dropIndex(indexName: string): Promise<void> {
    await this.dialect.classIndexes.run(this.db, this.dialect.classIndexes.drop(indexName));
  }
}
