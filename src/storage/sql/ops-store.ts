import { sql, type Kysely } from 'kysely';
import type { JsonObject, UniqueField } from '../../objects/types.ts';
import { importedIdentities, type Identity } from '../identity-store.ts';
import type { ClassSize, ImportBatch, ImportRecord, ImportStatus, OpsStore, QueueDepth } from '../ops-store.ts';
import type { SqlDialect } from './dialect.ts';
import { insertRows, promotedColumns, promotedFields, toRow, updateSet } from './object-row.ts';

/** Rows per INSERT: well inside SQLite's 32,766 bound parameters (the smallest limit of the two). */
const rowsPerStatement = 1000;

/** The values of a row that a unique index holds, to tell which one a skipped row lost on. */
export interface UniqueValues {
  username: string | null;
  email: string | null;
  mobile_phone: string | null;
  installation_id: string | null;
  session_digest: string | null;
}

/**
 * OpsStore on SQL. An import batch is one transaction of a few statements whatever its size:
 * on SQLite multi-row VALUES with `ON CONFLICT DO NOTHING`, which skips rows whose objectId (or
 * another unique value) is taken. PostgreSQL loads through COPY (src/storage/postgres/ops-store.ts)
 * and shares the steps after the insert.
 */
export class SqlOpsStore implements OpsStore {
  protected readonly db: Kysely<any>;
  protected readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async importObjects(batch: ImportBatch): Promise<ImportStatus[]> {
    if (batch.kind !== 'records') throw new Error(`a ${this.dialect.kind} store imports record batches`);
    const { appId, className, records } = batch;
    if (records.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const inserted: string[] = [];
      for (let start = 0; start < records.length; start += rowsPerStatement) {
        inserted.push(...(await this.insertRecords(trx, appId, records.slice(start, start + rowsPerStatement))));
      }
      const objectIds = records.map((r) => r.object.objectId);
      const statuses = insertedStatuses(objectIds, inserted);
      const identities = importedIdentities(className, records.map((r) => r.object));
      await this.insertIdentities(trx, { appId, objectIds, identities, statuses }, async (record, platforms) => {
        const object = records[record].object;
        const authData = { ...(object.data.authData as JsonObject) };
        for (const platform of platforms) delete authData[platform];
        await sql`UPDATE objects SET ${updateSet(this.dialect, toRow(appId, { ...object, data: { ...object.data, authData } }))}
          WHERE app_id = ${appId} AND class_name = '_User' AND id = ${object.objectId}`.execute(trx);
      });
      await this.explainSkipped(trx, { appId, className, objectIds, statuses }, async (indexes) =>
        indexes.map((i) => ({
          ...promotedColumns(records[i].object),
          session_digest: records[i].session?.digest ?? null,
        })),
      );
      return statuses as ImportStatus[];
    });
  }

  /** Inserts what it can; answers the ids of the rows it stored. */
  private async insertRecords(trx: Kysely<any>, appId: string, records: ImportRecord[]): Promise<string[]> {
    const rows = records.map(({ object, passwordHash, session }) => toRow(appId, object, { passwordHash, session }));
    const { rows: stored } = await sql<{ id: string }>`${insertRows(this.dialect, rows)}
      ON CONFLICT DO NOTHING RETURNING id`.execute(trx);
    return stored.map((row) => row.id);
  }

  /**
   * Identity rows of the users just stored. An account another user holds (or an earlier user of
   * this batch) stays with its holder: `drop` takes the entries out of the new user's authData.
   */
  protected async insertIdentities(
    trx: Kysely<any>,
    batch: { appId: string; objectIds: string[]; identities: Array<Identity & { record: number }>; statuses: Array<ImportStatus | null> },
    drop: (record: number, platforms: string[]) => Promise<void>,
  ): Promise<void> {
    const { appId, objectIds, statuses } = batch;
    const wanted = batch.identities.filter((w) => statuses[w.record]?.kind === 'inserted');
    if (wanted.length === 0) return;
    const claimed = new Set<string>();
    for (let start = 0; start < wanted.length; start += rowsPerStatement) {
      const part = wanted.slice(start, start + rowsPerStatement);
      const rows = part.map((w) => sql`(${appId}, ${w.platform}, ${w.uid}, ${objectIds[w.record]})`);
      const { rows: stored } = await sql<{ platform: string; uid: string; user_id: string }>`INSERT INTO auth_identities
          (app_id, platform, uid, user_id) VALUES ${sql.join(rows)} ON CONFLICT DO NOTHING RETURNING platform, uid, user_id`.execute(trx);
      for (const row of stored) claimed.add(`${row.platform}\0${row.uid}\0${row.user_id}`);
    }
    const dropped = new Map<number, string[]>();
    for (const w of wanted) {
      if (claimed.has(`${w.platform}\0${w.uid}\0${objectIds[w.record]}`)) continue;
      dropped.set(w.record, [...(dropped.get(w.record) ?? []), w.platform]);
    }
    for (const [record, platforms] of dropped) {
      await drop(record, platforms);
      statuses[record] = { kind: 'inserted', droppedAuthData: platforms };
    }
  }

  /**
   * Tells a row skipped because its objectId is there from one that lost on another unique value;
   * `valuesOf` answers the unique values of the records at these positions.
   */
  protected async explainSkipped(
    trx: Kysely<any>,
    batch: { appId: string; className: string; objectIds: string[]; statuses: Array<ImportStatus | null> },
    valuesOf: (records: number[]) => Promise<UniqueValues[]>,
  ): Promise<void> {
    const { appId, className, objectIds, statuses } = batch;
    const skipped = objectIds.map((_, i) => i).filter((i) => statuses[i] === null);
    if (skipped.length === 0) return;
    const present = await this.present(trx, appId, className, skipped.map((i) => objectIds[i]));
    const lost = skipped.filter((i) => !present.has(objectIds[i]));
    for (const i of skipped) if (present.has(objectIds[i])) statuses[i] = { kind: 'exists' };
    if (lost.length === 0) return;
    const values = await valuesOf(lost);
    for (const [n, i] of lost.entries()) statuses[i] = { kind: 'conflict', field: await this.takenField(trx, appId, values[n]) };
  }

  presentObjectIds(appId: string, className: string, objectIds: string[]): Promise<Set<string>> {
    return this.present(this.db, appId, className, objectIds);
  }

  private async present(db: Kysely<any>, appId: string, className: string, objectIds: string[]): Promise<Set<string>> {
    const present = new Set<string>();
    const ids = [...new Set(objectIds)];
    const step = this.dialect.idsPerStatement;
    for (let start = 0; start < ids.length; start += step) {
      const { rows } = await this.dialect.idsPresent(appId, className, ids.slice(start, start + step)).execute(db);
      for (const row of rows) present.add(row.id);
    }
    return present;
  }

  private async takenField(trx: Kysely<any>, appId: string, values: UniqueValues): Promise<UniqueField | 'sessionToken' | null> {
    for (const { column, field } of promotedFields) {
      const value = values[column];
      if (value === null || value === undefined) continue;
      const { rows } = await sql`SELECT 1 AS one FROM objects WHERE app_id = ${appId} AND ${sql.ref(column)} = ${value}`.execute(trx);
      if (rows.length > 0) return field;
    }
    if (values.session_digest !== null) {
      const { rows } = await sql`SELECT 1 AS one FROM objects WHERE app_id = ${appId}
        AND session_digest = ${values.session_digest}`.execute(trx);
      if (rows.length > 0) return 'sessionToken';
    }
    return null;
  }

  async finishImport(): Promise<void> {
    await sql`ANALYZE objects`.execute(this.db);
    await sql`ANALYZE auth_identities`.execute(this.db);
    for (const statement of this.dialect.afterAnalyze) await statement.execute(this.db);
  }

  async queueDepth(now: number): Promise<QueueDepth> {
    const { rows } = await sql<{ due: number | string; scheduled: number | string; pages: number | string }>`SELECT
        (SELECT count(*) FROM push_notifications WHERE paged = 0 AND push_time <= ${now}) AS due,
        (SELECT count(*) FROM push_notifications WHERE paged = 0 AND push_time > ${now}) AS scheduled,
        (SELECT count(*) FROM push_pages WHERE done = 0) AS pages`.execute(this.db);
    const row = rows[0];
    return { due: Number(row.due), scheduled: Number(row.scheduled), pagesPending: Number(row.pages) };
  }

  async classSize(appId: string, className: string, exactUpTo: number): Promise<ClassSize> {
    // Reads at most exactUpTo + 1 entries of the primary key's (app_id, class_name) range, whatever the class's size.
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM (SELECT 1 FROM objects
      WHERE app_id = ${appId} AND class_name = ${className} LIMIT ${exactUpTo + 1}) bounded`.execute(this.db);
    const counted = Number(rows[0].n);
    if (counted <= exactUpTo) return { count: counted, kind: 'exact' };
    const estimate = await this.estimatedRows(appId, className);
    return estimate !== null && estimate > exactUpTo ? { count: estimate, kind: 'estimate' } : { count: exactUpTo, kind: 'atLeast' };
  }

  /** The database's estimate of a class's rows; SQLite keeps none worth the name. */
  protected async estimatedRows(_appId: string, _className: string): Promise<number | null> {
    return null;
  }
}

/**
 * A status per record: inserted when its id came back from the insert, each returned id used once
 * (a second record with the same id in one batch was skipped); null for the rest, to be explained.
 */
export function insertedStatuses(objectIds: string[], inserted: string[]): Array<ImportStatus | null> {
  const left = new Set(inserted);
  return objectIds.map((id) => (left.delete(id) ? { kind: 'inserted', droppedAuthData: [] } : null));
}
