import { sql, type Kysely } from 'kysely';
import type { JsonObject, UniqueField } from '../../objects/types.ts';
import { authDataIdentities } from '../identity-store.ts';
import type { ImportRecord, ImportStatus, OpsStore, QueueDepth } from '../ops-store.ts';
import type { SqlDialect } from './dialect.ts';
import { promotedColumns, readersOf } from './sql-store.ts';

/** Rows per INSERT on SQLite, well inside its 32,766 bound parameters. */
const sqliteRowsPerStatement = 1000;

type Column = { name: string; type: 'text' | 'bigint'; values: Array<string | number | null> };

/**
 * OpsStore on SQL. An import batch is one transaction of a few statements whatever its size:
 * PostgreSQL receives each column as one array parameter (unnest), SQLite multi-row VALUES;
 * `ON CONFLICT DO NOTHING` skips rows whose objectId (or another unique value) is taken.
 */
export class SqlOpsStore implements OpsStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async importObjects(appId: string, records: ImportRecord[]): Promise<ImportStatus[]> {
    if (records.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      // A batch lost to a crash is re-imported by the next run (objectIds already present are
      // skipped), so its commit need not wait for the WAL flush.
      if (this.dialect.kind === 'postgres') await sql`SET LOCAL synchronous_commit = off`.execute(trx);
      const inserted = new Set<string>();
      const step = this.dialect.kind === 'sqlite' ? sqliteRowsPerStatement : records.length;
      for (let start = 0; start < records.length; start += step) {
        for (const key of await this.insertRows(trx, appId, records.slice(start, start + step))) inserted.add(key);
      }
      const statuses: Array<ImportStatus | null> = records.map((r) =>
        inserted.has(key(r.object.className, r.object.objectId)) ? { kind: 'inserted', droppedAuthData: [] } : null,
      );
      await this.insertIdentities(trx, appId, records, statuses);
      await this.explainSkipped(trx, appId, records, statuses);
      return statuses as ImportStatus[];
    });
  }

  private columns(appId: string, records: ImportRecord[]): Column[] {
    const d = this.dialect;
    const promoted = records.map((r) => promotedColumns(r.object) as Record<string, string | null>);
    const columns: Column[] = [
      { name: 'app_id', type: 'text', values: records.map(() => appId) },
      { name: 'class_name', type: 'text', values: records.map((r) => r.object.className) },
      { name: 'id', type: 'text', values: records.map((r) => r.object.objectId) },
      { name: 'created_at', type: 'bigint', values: records.map((r) => r.object.createdAt) },
      { name: 'updated_at', type: 'bigint', values: records.map((r) => r.object.updatedAt) },
      { name: 'data', type: 'text', values: records.map((r) => JSON.stringify(r.object.data)) },
      { name: 'acl', type: 'text', values: records.map((r) => (r.object.acl === null ? null : JSON.stringify(r.object.acl))) },
      // Principals never hold a comma (src/objects/acl.ts), so one text per row carries the list.
      { name: 'readers', type: 'text', values: records.map((r) => readersOf(r.object.acl).join(',')) },
      { name: 'password_hash', type: 'text', values: records.map((r) => r.passwordHash) },
      { name: 'session_digest', type: 'text', values: records.map((r) => r.session?.digest ?? null) },
      { name: 'session_cipher', type: 'text', values: records.map((r) => r.session?.cipher ?? null) },
    ];
    for (const name of Object.keys(promoted[0])) {
      columns.push({ name, type: 'text', values: promoted.map((p) => p[name] ?? null) });
    }
    if (d.kind === 'sqlite') {
      // SQLite keeps readers as a JSON array text (src/storage/sqlite/dialect.ts).
      const readers = columns.find((c) => c.name === 'readers')!;
      readers.values = records.map((r) => d.encodeReaders(readersOf(r.object.acl)) as string);
    }
    return columns;
  }

  /** Inserts what it can; answers the class and id of each row it stored. */
  private async insertRows(trx: Kysely<any>, appId: string, records: ImportRecord[]): Promise<string[]> {
    const columns = this.columns(appId, records);
    const names = sql.join(columns.map((c) => sql.ref(c.name)));
    let result;
    if (this.dialect.kind === 'postgres') {
      const aliases = columns.map((_, i) => `c${i}`);
      const arrays = columns.map((c) => sql`${c.values}::${sql.raw(c.type)}[]`);
      const selected = columns.map((c, i) => {
        if (c.name === 'data' || c.name === 'acl') return sql`${sql.ref(`t.${aliases[i]}`)}::jsonb`;
        if (c.name === 'readers') return sql`string_to_array(${sql.ref(`t.${aliases[i]}`)}, ',')`;
        return sql.ref(`t.${aliases[i]}`);
      });
      result = await sql<{ class_name: string; id: string }>`INSERT INTO objects (${names})
        SELECT ${sql.join(selected)} FROM unnest(${sql.join(arrays)}) AS t(${sql.raw(aliases.join(', '))})
        ON CONFLICT DO NOTHING RETURNING class_name, id`.execute(trx);
    } else {
      const rows = records.map((_, r) => sql`(${sql.join(columns.map((c) => sql`${c.values[r]}`))})`);
      result = await sql<{ class_name: string; id: string }>`INSERT INTO objects (${names}) VALUES ${sql.join(rows)}
        ON CONFLICT DO NOTHING RETURNING class_name, id`.execute(trx);
    }
    return result.rows.map((row) => key(row.class_name, row.id));
  }

  /**
   * Identity rows of the users just stored. An account another user holds (or an earlier user of
   * this batch) stays with its holder: the entry is taken out of the new user's authData.
   */
  private async insertIdentities(trx: Kysely<any>, appId: string, records: ImportRecord[], statuses: Array<ImportStatus | null>) {
    const wanted: Array<{ index: number; platform: string; uid: string }> = [];
    records.forEach((r, index) => {
      if (r.object.className !== '_User' || statuses[index]?.kind !== 'inserted') return;
      for (const identity of authDataIdentities(r.object.data)) wanted.push({ index, ...identity });
    });
    if (wanted.length === 0) return;
    const claimed = new Set<string>();
    for (let start = 0; start < wanted.length; start += sqliteRowsPerStatement) {
      const part = wanted.slice(start, start + sqliteRowsPerStatement);
      const rows = part.map((w) => sql`(${appId}, ${w.platform}, ${w.uid}, ${records[w.index].object.objectId})`);
      const { rows: stored } = await sql<{ platform: string; uid: string; user_id: string }>`INSERT INTO auth_identities
          (app_id, platform, uid, user_id) VALUES ${sql.join(rows)} ON CONFLICT DO NOTHING RETURNING platform, uid, user_id`.execute(trx);
      for (const row of stored) claimed.add(`${row.platform}\0${row.uid}\0${row.user_id}`);
    }
    const dropped = new Map<number, string[]>();
    for (const w of wanted) {
      if (claimed.has(`${w.platform}\0${w.uid}\0${records[w.index].object.objectId}`)) continue;
      dropped.set(w.index, [...(dropped.get(w.index) ?? []), w.platform]);
    }
    for (const [index, platforms] of dropped) {
      const object = records[index].object;
      const authData = { ...(object.data.authData as JsonObject) };
      for (const platform of platforms) delete authData[platform];
      const data = { ...object.data, authData };
      await sql`UPDATE objects SET data = ${this.dialect.encodeJson(data)}
        WHERE app_id = ${appId} AND class_name = '_User' AND id = ${object.objectId}`.execute(trx);
      statuses[index] = { kind: 'inserted', droppedAuthData: platforms };
    }
  }

  /** Tells a row skipped because its objectId is there from one that lost on another unique value. */
  private async explainSkipped(trx: Kysely<any>, appId: string, records: ImportRecord[], statuses: Array<ImportStatus | null>) {
    const skipped = records.map((_, i) => i).filter((i) => statuses[i] === null);
    if (skipped.length === 0) return;
    const present = new Set<string>();
    const byClass = new Map<string, string[]>();
    for (const i of skipped) {
      const { className, objectId } = records[i].object;
      byClass.set(className, [...(byClass.get(className) ?? []), objectId]);
    }
    for (const [className, ids] of byClass) {
      for (let start = 0; start < ids.length; start += sqliteRowsPerStatement) {
        const part = ids.slice(start, start + sqliteRowsPerStatement);
        // One primary-key probe per id (LATERAL): right after a bulk load the statistics are stale,
        // and the planner otherwise scans the whole class through another index.
        const { rows } =
          this.dialect.kind === 'postgres'
            ? await sql<{ id: string }>`SELECT t.id FROM unnest(${part}::text[]) AS t(id)
                CROSS JOIN LATERAL (SELECT 1 FROM objects o WHERE o.app_id = ${appId} AND o.class_name = ${className}
                  AND o.id = t.id LIMIT 1) x`.execute(trx)
            : await sql<{ id: string }>`SELECT id FROM objects
                WHERE app_id = ${appId} AND class_name = ${className} AND id IN (${sql.join(part)})`.execute(trx);
        for (const row of rows) present.add(key(className, row.id));
      }
    }
    for (const i of skipped) {
      const object = records[i].object;
      if (present.has(key(object.className, object.objectId))) {
        statuses[i] = { kind: 'exists' };
        continue;
      }
      statuses[i] = { kind: 'conflict', field: await this.takenField(trx, appId, records[i]) };
    }
  }

  private async takenField(trx: Kysely<any>, appId: string, record: ImportRecord): Promise<UniqueField | 'sessionToken' | null> {
    const promoted = promotedColumns(record.object) as Record<string, string | null>;
    const fields: Record<string, UniqueField> = {
      username: 'username',
      email: 'email',
      mobile_phone: 'mobilePhoneNumber',
      installation_id: 'installationId',
    };
    for (const [column, field] of Object.entries(fields)) {
      const value = promoted[column];
      if (value === null || value === undefined) continue;
      const { rows } = await sql`SELECT 1 AS one FROM objects WHERE app_id = ${appId} AND ${sql.ref(column)} = ${value}`.execute(trx);
      if (rows.length > 0) return field;
    }
    if (record.session) {
      const { rows } = await sql`SELECT 1 AS one FROM objects WHERE app_id = ${appId}
        AND session_digest = ${record.session.digest}`.execute(trx);
      if (rows.length > 0) return 'sessionToken';
    }
    return null;
  }

  async finishImport(): Promise<void> {
    await sql`ANALYZE objects`.execute(this.db);
    await sql`ANALYZE auth_identities`.execute(this.db);
  }

  async queueDepth(now: number): Promise<QueueDepth> {
    const { rows } = await sql<{ due: number | string; scheduled: number | string; pages: number | string }>`SELECT
        (SELECT count(*) FROM push_notifications WHERE paged = 0 AND push_time <= ${now}) AS due,
        (SELECT count(*) FROM push_notifications WHERE paged = 0 AND push_time > ${now}) AS scheduled,
        (SELECT count(*) FROM push_pages WHERE done = 0) AS pages`.execute(this.db);
    const row = rows[0];
    return { due: Number(row.due), scheduled: Number(row.scheduled), pagesPending: Number(row.pages) };
  }
}

function key(className: string, objectId: string): string {
  return `${className}\0${objectId}`;
}
