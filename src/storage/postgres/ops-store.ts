import { finished } from 'node:stream/promises';
import { Kysely, PostgresDialect, sql, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { encodeImportBatch } from './import-batch.ts';
import type { EncodedBatch, ImportBatch, ImportStatus } from '../ops-store.ts';
import type { SqlDialect } from '../sql/dialect.ts';
import { SqlOpsStore, insertedStatuses, type UniqueValues } from '../sql/ops-store.ts';
import { importColumns } from './import-rows.ts';

/**
 * Import on PostgreSQL: each batch arrives as COPY rows (encoded on the parse threads) and is
 * loaded with COPY straight into `objects` when nothing in it is taken: no per-row conflict
 * check, which cost as much as the insert itself. A batch that hits a unique index (an objectId
 * already there, a taken username…) is rolled back to a savepoint and loaded carefully instead:
 * COPY into a temporary table, then INSERT … ON CONFLICT DO NOTHING RETURNING, and the skipped
 * rows explained as on SQLite. After such a batch the next ones go the careful way too until one
 * loads whole, so a re-run (every objectId present) never pays for a failed COPY per batch.
 */
export class PostgresOpsStore extends SqlOpsStore {
  private readonly pool: pg.Pool;
  private careful = false;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect; pool: pg.Pool }) {
    super(options);
    this.pool = options.pool;
  }

  /**
   * The planner's row estimate for the class (ANALYZE's statistics, which the import refreshes): read
   * from EXPLAIN in well under a millisecond, where count(*) reads every row of a million-object class.
   */
  protected override async estimatedRows(appId: string, className: string): Promise<number | null> {
    const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan?: { 'Plan Rows'?: number } }> }>`EXPLAIN (FORMAT JSON)
      SELECT 1 FROM objects WHERE app_id = ${appId} AND class_name = ${className}`.execute(this.db);
    const estimate = rows[0]?.['QUERY PLAN']?.[0]?.Plan?.['Plan Rows'];
    return typeof estimate === 'number' ? Math.round(estimate) : null;
  }

  override async importObjects(batch: ImportBatch): Promise<ImportStatus[]> {
    const encoded = batch.kind === 'encoded' ? batch : encodeImportBatch(batch.appId, batch.className, batch.records);
    if (encoded.objectIds.length === 0) return [];
    // COPY needs the driver's own client; the shared steps run on it through a Kysely of its own.
    const client = await this.pool.connect();
    let broken = false;
    try {
      return await onClient(client).transaction().execute((trx) => this.load(trx, client, encoded));
    } catch (error) {
      broken = true;
      throw error;
    } finally {
      client.release(broken);
    }
  }

  private async load(trx: Kysely<any>, client: pg.PoolClient, batch: EncodedBatch): Promise<ImportStatus[]> {
    const { appId, className, objectIds } = batch;
    // A batch lost to a crash is re-imported by the next run (objectIds already present are
    // skipped), so its commit need not wait for the WAL flush.
    await sql`SET LOCAL synchronous_commit = off`.execute(trx);
    // A batch of thousands of rows may take longer than a request's statement timeout.
    await sql`SET LOCAL statement_timeout = 0`.execute(trx);
    let inserted: string[] | null = null;
    if (!this.careful) {
      await sql`SAVEPOINT import_copy`.execute(trx);
      try {
        await copyIn(client, `COPY objects (${importColumns}) FROM STDIN`, batch.rows);
        inserted = objectIds;
      } catch (error) {
        if ((error as { code?: string }).code !== '23505') throw error;
        await sql`ROLLBACK TO SAVEPOINT import_copy`.execute(trx);
      }
    }
    if (inserted === null) {
      await sql`CREATE TEMP TABLE IF NOT EXISTS import_rows (LIKE objects) ON COMMIT DELETE ROWS`.execute(trx);
      await copyIn(client, `COPY import_rows (${importColumns}) FROM STDIN`, batch.rows);
      const { rows } = await sql<{ id: string }>`INSERT INTO objects (${sql.raw(importColumns)})
        SELECT ${sql.raw(importColumns)} FROM import_rows ON CONFLICT DO NOTHING RETURNING id`.execute(trx);
      inserted = rows.map((row) => row.id);
    }
    this.careful = inserted.length < objectIds.length;
    const statuses = insertedStatuses(objectIds, inserted);
    await this.insertIdentities(trx, { appId, objectIds, identities: batch.identities, statuses }, async (record, platforms) => {
      await sql`UPDATE objects SET data = jsonb_set(data, '{authData}', (data -> 'authData') - ${platforms}::text[])
        WHERE app_id = ${appId} AND class_name = '_User' AND id = ${objectIds[record]}`.execute(trx);
    });
    await this.explainSkipped(trx, { appId, className, objectIds, statuses }, (records) => stagedValues(trx, records.map((i) => objectIds[i])));
    return statuses as ImportStatus[];
  }
}

/** The unique values of staged rows by id, in the order asked (a repeated id: its rows in load order). */
async function stagedValues(trx: Kysely<any>, ids: string[]): Promise<UniqueValues[]> {
  const { rows } = await sql<UniqueValues & { id: string }>`SELECT id, username, email, mobile_phone, installation_id, session_digest
    FROM import_rows WHERE id = ANY(${[...new Set(ids)]}::text[]) ORDER BY ctid`.execute(trx);
  const byId = new Map<string, UniqueValues[]>();
  for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row]);
  return ids.map((id) => byId.get(id)!.shift()!);
}

async function copyIn(client: pg.PoolClient, statement: string, rows: Uint8Array): Promise<void> {
  const stream = client.query(copyFrom(statement));
  stream.end(Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength));
  await finished(stream);
}

/** A Kysely that runs every query on this one client (released by the caller, not by Kysely). */
function onClient(client: pg.PoolClient): Kysely<any> {
  const only = client as unknown as PostgresPoolClient;
  const borrowed: PostgresPoolClient = { query: only.query.bind(only), release: () => undefined };
  return new Kysely({ dialect: new PostgresDialect({ pool: { connect: async () => borrowed, end: async () => undefined } }) });
}
