import { sql, type Kysely } from 'kysely';
import type { AppSettings } from '../../apps/settings.ts';
import { mapSecrets } from '../../apps/settings.ts';
import { randomToken } from '../../lib/crypto.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { AppRecord, Refusal, RetiredKey } from '../../objects/types.ts';
import type { AppDeletion, KeyRotation } from '../store.ts';
import type { SqlDialect } from './dialect.ts';
import { serialiseOn } from './serialise.ts';

interface AppRow {
  app_id: string;
  name: string;
  app_key: string;
  master_key: string;
  settings: unknown;
  created_at: number | string;
  retired_keys: string;
}

/** Tables holding an application's data, by app_id: what deleting an application removes. */
const appTables = [
  'objects', 'relations', 'class_fields', 'class_indexes', 'auth_identities', 'login_attempts',
  'mail_tokens', 'push_schedule', 'push_notifications', 'push_pages', 'push_mailbox', 'push_counts', 'push_req_ids',
  'push_vendor_outbox', 'sms_codes', 'sms_numbers', 'sms_sends', 'vendor_pauses',
  'leaderboards', 'leaderboard_archives', 'leaderboard_statistics', 'status_inboxes', 'status_inbox_counters',
];

/**
 * Applications on SQL. Every secret of a record (its keys, the retired ones, the secrets in its
 * settings) is sealed by `secrets` on the way in and opened on the way out: the domain sees clear
 * values, the database holds none.
 */
export class SqlAppStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;
  private readonly secrets: SecretBox;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect; secrets: SecretBox }) {
    this.db = options.db;
    this.dialect = options.dialect;
    this.secrets = options.secrets;
  }

  private toApp(row: AppRow): AppRecord {
    const open = (value: string) => this.secrets.open(value);
    const retired = JSON.parse(row.retired_keys || '[]') as RetiredKey[];
    return {
      appId: row.app_id,
      name: row.name,
      appKey: open(row.app_key),
      masterKey: open(row.master_key),
      settings: mapSecrets(this.dialect.decodeJson<Partial<AppSettings>>(row.settings) ?? {}, open),
      createdAt: Number(row.created_at),
      retiredKeys: retired.map((entry) => ({ ...entry, key: open(entry.key) })),
    };
  }

  private sealedRetired(retired: readonly RetiredKey[]): string {
    return JSON.stringify(retired.map((entry) => ({ ...entry, key: this.secrets.seal(entry.key) })));
  }

  async serverSecret(): Promise<string> {
    await sql`INSERT INTO meta (key, value) VALUES ('secret', ${this.secrets.seal(randomToken(32))}) ON CONFLICT (key) DO NOTHING`.execute(this.db);
    const { rows } = await sql<{ value: string }>`SELECT value FROM meta WHERE key = 'secret'`.execute(this.db);
    return this.secrets.open(rows[0].value);
  }

  async createApp(app: AppRecord, db: Kysely<any> = this.db): Promise<boolean> {
    const seal = (value: string) => this.secrets.seal(value);
    const { rows } = await sql`INSERT INTO apps (app_id, name, app_key, master_key, settings, created_at, retired_keys)
      VALUES (${app.appId}, ${app.name}, ${seal(app.appKey)}, ${seal(app.masterKey)},
        ${this.dialect.encodeJson(mapSecrets(app.settings, seal))}, ${app.createdAt}, ${this.sealedRetired(app.retiredKeys)})
      ON CONFLICT (app_id) DO NOTHING RETURNING app_id`.execute(db);
    return rows.length === 1;
  }

  async createFirstApp(app: AppRecord): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await serialiseOn(trx, this.dialect, 'first-app');
      const { rows } = await sql`SELECT 1 AS one FROM apps LIMIT 1`.execute(trx);
      if (rows.length > 0) return false;
      await this.createApp(app, trx);
      return true;
    });
  }

  async getApp(appId: string): Promise<AppRecord | null> {
    const { rows } = await sql<AppRow>`SELECT * FROM apps WHERE app_id = ${appId}`.execute(this.db);
    return rows[0] ? this.toApp(rows[0]) : null;
  }

  async listApps(): Promise<AppRecord[]> {
    const { rows } = await sql<AppRow>`SELECT * FROM apps ORDER BY created_at, app_id`.execute(this.db);
    return rows.map((row) => this.toApp(row));
  }

  /** Runs `change` on the record read under the row lock and writes what it returns; null: no such app. */
  private async changeApp<T>(appId: string, change: (app: AppRecord) => { app: AppRecord; answer: T } | { refused: T }): Promise<T | null> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<AppRow>`SELECT * FROM apps WHERE app_id = ${appId} ${this.dialect.rowLock}`.execute(trx);
      if (!rows[0]) return null;
      const outcome = change(this.toApp(rows[0]));
      if ('refused' in outcome) return outcome.refused;
      const { app } = outcome;
      const seal = (value: string) => this.secrets.seal(value);
      await sql`UPDATE apps SET app_key = ${seal(app.appKey)}, master_key = ${seal(app.masterKey)},
        settings = ${this.dialect.encodeJson(mapSecrets(app.settings, seal))}, retired_keys = ${this.sealedRetired(app.retiredKeys)}
        WHERE app_id = ${appId}`.execute(trx);
      return outcome.answer;
    });
  }

  async updateAppSettings<R>(
    appId: string,
    change: (current: Partial<AppSettings>) => AppSettings | Refusal<R>,
  ): Promise<AppSettings | Refusal<R> | null> {
    return this.changeApp<AppSettings | Refusal<R>>(appId, (app) => {
      const next = change(app.settings);
      return 'refused' in next ? { refused: next } : { app: { ...app, settings: next }, answer: next };
    });
  }

  async rotateAppKey(appId: string, rotation: KeyRotation): Promise<AppRecord | null> {
    return this.changeApp(appId, (app) => {
      const retired = app.retiredKeys.filter((entry) => entry.until > rotation.now);
      if (rotation.graceMs > 0) retired.push({ kind: rotation.kind, key: app[rotation.kind], until: rotation.now + rotation.graceMs });
      const next = { ...app, [rotation.kind]: rotation.newKey, retiredKeys: retired };
      return { app: next, answer: next };
    });
  }

  /** What deleting the application would remove; null: no such app. */
  async appContents(appId: string): Promise<AppDeletion | null> {
    const { rows } = await sql<{ class_name: string; n: number | string }>`SELECT class_name, COUNT(*) AS n FROM objects
      WHERE app_id = ${appId} GROUP BY class_name`.execute(this.db);
    if (!(await this.getApp(appId))) return null;
    const { rows: boards } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM leaderboards WHERE app_id = ${appId}`.execute(this.db);
    const count = (name: string) => Number(rows.find((row) => row.class_name === name)?.n ?? 0);
    const all = rows.reduce((sum, row) => sum + Number(row.n), 0);
    return {
      users: count('_User'),
      installations: count('_Installation'),
      roles: count('_Role'),
      objects: all - count('_User') - count('_Installation') - count('_Role'),
      classes: rows.length,
      leaderboards: Number(boards[0]?.n ?? 0),
    };
  }

  /** The indexes users declared on the app's classes: database indexes of their own, dropped one by one. */
  async declaredIndexes(appId: string): Promise<Array<{ className: string; name: string }>> {
    const { rows } = await sql<{ class_name: string; name: string }>`SELECT class_name, name FROM class_indexes WHERE app_id = ${appId}`.execute(this.db);
    return rows.map((row) => ({ className: row.class_name, name: row.name }));
  }

  async deleteApp(appId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      for (const table of appTables) await sql`DELETE FROM ${sql.table(table)} WHERE app_id = ${appId}`.execute(trx);
      const { rows } = await sql`DELETE FROM apps WHERE app_id = ${appId} RETURNING app_id`.execute(trx);
      return rows.length === 1;
    });
  }

  /**
   * Seals again every secret not sealed by the sealing key: `clearOnly` seals only values still in
   * clear (the step every start runs: a database from before sealing); otherwise also those sealed by
   * an older key (`roost secrets reseal`, after a new key was put first). Returns how many rows changed.
   */
  async resealSecrets(clearOnly: boolean): Promise<number> {
    const stale = (value: string) => (clearOnly ? !value.startsWith('sealed:') : this.secrets.isStale(value));
    let changed = 0;
    const { rows } = await sql<AppRow>`SELECT * FROM apps`.execute(this.db);
    for (const row of rows) {
      const secrets: string[] = [row.app_key, row.master_key, ...(JSON.parse(row.retired_keys || '[]') as RetiredKey[]).map((entry) => entry.key)];
      mapSecrets(this.dialect.decodeJson<Partial<AppSettings>>(row.settings) ?? {}, (value) => (secrets.push(value), value));
      if (!secrets.some(stale)) continue;
      // Re-written whole under the row lock, so a change made meanwhile by another node is kept.
      await this.changeApp(row.app_id, (app) => ({ app, answer: undefined }));
      changed++;
    }
    const { rows: meta } = await sql<{ value: string }>`SELECT value FROM meta WHERE key = 'secret'`.execute(this.db);
    if (meta[0] && stale(meta[0].value)) {
      const value = meta[0].value;
      await sql`UPDATE meta SET value = ${this.secrets.seal(this.secrets.open(value))} WHERE key = 'secret' AND value = ${value}`.execute(this.db);
      changed++;
    }
    return changed;
  }
}
