import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { BuildFailure, ClassIndex, ClassIndexStore, IndexKey } from '../class-index-store.ts';
import type { SqlDialect } from './dialect.ts';

/** Begins the name of every index users declare, so a write that violates one is told from the schema's own. */
export const classIndexPrefix = 'cix_';

interface Row {
  name: string;
  keys: string;
  index_name: string;
  is_unique: number;
  state: ClassIndex['state'];
  failure: string | null;
  builder: string | null;
}

/**
 * The database index's name: from the application, class and name, so no user's name can reach another
 * application's indexes or the schema's own, and short enough for PostgreSQL's 63 characters.
 */
function indexNameOf(appId: string, className: string, name: string): string {
  return `${classIndexPrefix}${createHash('sha256').update(JSON.stringify([appId, className, name])).digest('hex').slice(0, 32)}`;
}

/**
 * Declared indexes, built in the background: the class_indexes row claims the name and holds the build's
 * state (migration 0005); the build runs as the dialect's only builder of the index among all processes
 * (`exclusively`), so a process that stops during one leaves the row `building`, and the next to find it
 * so (at start, or listing the class) clears what the stopped build left and builds it again.
 */
export class SqlClassIndexStore implements ClassIndexStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;
  /** The builds this process runs, by database index name. */
  private readonly builds = new Map<string, Promise<void>>();
  private lastBuild: Promise<void> = Promise.resolve();
  /** The database's name of the build running now (PostgreSQL: its backend), to cancel at shutdown. */
  private readonly builders = new Set<string>();
  private stopping = false;
  /** Waits before building again after a transient failure, doubling each time (buildRetryMs). */
  private readonly retryMs: number;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect; buildRetryMs?: number }) {
    this.db = options.db;
    this.dialect = options.dialect;
    this.retryMs = options.buildRetryMs ?? 500;
  }

  async create(appId: string, className: string, spec: { name: string; keys: IndexKey[]; unique: boolean }): Promise<ClassIndex | 'exists'> {
    const { name, keys, unique } = spec;
    const indexName = indexNameOf(appId, className, name);
    const { rows } = await sql<{ name: string }>`INSERT INTO class_indexes (app_id, class_name, name, keys, index_name, created_at, state, is_unique)
      VALUES (${appId}, ${className}, ${name}, ${JSON.stringify(keys)}, ${indexName}, ${Date.now()}, 'building', ${unique ? 1 : 0})
      ON CONFLICT DO NOTHING RETURNING name`.execute(this.db);
    if (rows.length === 0) return 'exists';
    this.start(indexName);
    return { name, keys, unique, state: 'building' };
  }

  async list(appId: string, className: string): Promise<ClassIndex[]> {
    const { rows } = await sql<Row>`SELECT name, keys, index_name, is_unique, state, failure, builder FROM class_indexes
      WHERE app_id = ${appId} AND class_name = ${className} ORDER BY name`.execute(this.db);
    const building = rows.filter((row) => row.state === 'building');
    const progress = await this.dialect.classIndexes.progress(this.db, building.flatMap((row) => (row.builder === null ? [] : [row.builder])));
    // One whose builder stopped is built again (a live builder holds it: the attempt ends at once).
    for (const row of building) this.start(row.index_name);
    return rows.map((row) => {
      const index: ClassIndex = { name: row.name, keys: JSON.parse(row.keys) as IndexKey[], unique: Number(row.is_unique) === 1, state: row.state };
      const reported = row.builder === null ? undefined : progress.get(row.builder);
      if (row.state === 'building' && reported) index.progress = reported;
      if (row.state === 'failed' && row.failure !== null) index.failure = JSON.parse(row.failure) as BuildFailure;
      return index;
    });
  }

  async drop(appId: string, className: string, name: string): Promise<boolean> {
    // The row first: a build going on finds it gone when it ends and removes what it built.
    const { rows } = await sql<{ index_name: string }>`DELETE FROM class_indexes
      WHERE app_id = ${appId} AND class_name = ${className} AND name = ${name} RETURNING index_name`.execute(this.db);
    if (rows.length === 0) return false;
    const indexName = rows[0].index_name;
    await this.dialect.classIndexes.exclusively(this.db, indexName, (connection) => this.dropIndex(connection, indexName));
    return true;
  }

  async resume(): Promise<void> {
    const { rows } = await sql<{ index_name: string }>`SELECT index_name FROM class_indexes WHERE state = 'building'`.execute(this.db);
    for (const row of rows) this.start(row.index_name);
  }

  async idle(): Promise<void> {
    while (this.builds.size > 0) await Promise.all(this.builds.values());
  }

  /**
   * Stops this process's builds where the database can and waits for them to let go: their rows stay
   * `building`, for the next process to resume (a shutting-down node does not wait out a long build).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.dialect.classIndexes.cancel(this.db, [...this.builders]).catch(() => undefined);
    await this.idle();
  }

  private start(indexName: string): void {
    if (this.builds.has(indexName) || this.stopping) return;
    // One after another (the dialect orders them among processes too), each on a connection of its own.
    // One that stops on an error of the database (not of the index) leaves the row building: resumed later.
    const build = this.lastBuild
      .then(() => this.buildRetrying(indexName))
      .catch(() => undefined)
      .finally(() => this.builds.delete(indexName));
    this.lastBuild = build;
    this.builds.set(indexName, build);
  }

  /**
   * A build that fails for a transient reason (dialect.transient: a deadlock with an ANALYZE, a lost
   * connection) is built again after a pause that doubles, up to 6 attempts; the row stays `building` when
   * they run out (or the process stops), so a later start or listing resumes it.
   */
  private async buildRetrying(indexName: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.build(indexName);
        return;
      } catch (error) {
        if (this.stopping || attempt >= 5 || !this.dialect.classIndexes.transient(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.retryMs * 2 ** attempt));
        if (this.stopping) throw error;
      }
    }
  }

  private async build(indexName: string): Promise<void> {
    const ddl = this.dialect.classIndexes;
    await ddl.exclusively(this.db, indexName, async (connection) => {
      const { rows } = await sql<Row & { app_id: string; class_name: string }>`SELECT app_id, class_name, keys, is_unique, state
        FROM class_indexes WHERE index_name = ${indexName}`.execute(connection);
      // Built, failed or dropped since.
      if (rows[0]?.state !== 'building') return;
      const { app_id: appId, class_name: className } = rows[0];
      const unique = Number(rows[0].is_unique) === 1;
      const builder = await ddl.builder(connection);
      await sql`UPDATE class_indexes SET builder = ${builder} WHERE index_name = ${indexName}`.execute(connection);
      // What a build that stopped left (PostgreSQL: an invalid index) goes first.
      await this.dropIndex(connection, indexName);
      let failure: BuildFailure | null = null;
      if (builder !== null) this.builders.add(builder);
      try {
        for (const statement of ddl.create(indexName, appId, className, JSON.parse(rows[0].keys) as IndexKey[], unique)) {
          await sql.raw(statement).execute(connection);
        }
      } catch (error) {
        // Not the index's fault: the row stays building, what was built goes when the build runs again.
        if (this.stopping || ddl.transient(error)) throw error;
        failure = unique && this.dialect.uniqueViolation(error) ? { reason: 'duplicates' } : { reason: 'error', message: (error as Error).message };
        await this.dropIndex(connection, indexName);
      } finally {
        if (builder !== null) this.builders.delete(builder);
      }
      const { rows: kept } = await sql`UPDATE class_indexes SET state = ${failure ? 'failed' : 'ready'},
        failure = ${failure && JSON.stringify(failure)}, builder = NULL WHERE index_name = ${indexName} RETURNING index_name`.execute(connection);
      // Dropped during the build.
      if (kept.length === 0) await this.dropIndex(connection, indexName);
    }, { oneAtATime: true });
  }

  private async dropIndex(connection: Kysely<any>, indexName: string): Promise<void> {
    for (const statement of this.dialect.classIndexes.drop(indexName)) await sql.raw(statement).execute(connection);
  }
}
