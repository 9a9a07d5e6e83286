import { sql, type Kysely } from 'kysely';
import type { JsonObject, Where } from '../../objects/types.ts';
import type { AckEntry, ClaimedPage, CreatePushOutcome, PushStore, ReceiptUpdate } from '../push-store.ts';
import type {
  JobView,
  MailboxMessage,
  NewPush,
  NotificationRecord,
  PageResult,
  PageWork,
  PushContent,
  TargetDevice,
  VendorTarget,
} from '../../push/types.ts';
import type { Sql, SqlDialect } from './dialect.ts';
import { compileWhere } from './where.ts';
import { addCounts, chunks, insertChunk, relaxedCommit } from './push-common.ts';
import { SqlPushDelivery } from './push-delivery.ts';

interface NotificationRow {
  app_id: string;
  id: string;
  created_at: number | string;
  updated_at: number | string;
  status: string;
  push_time: number | string;
  expires_at: number | string | null;
  request: string;
  content: string;
  selector: string;
  last_key: string;
  pages: number | string;
  paged: number | string;
}

const num = (value: number | string | null): number | null => (value === null ? null : Number(value));

/**
 * PushStore on SQL. Tables (migration 0004_push): push_notifications (record + job cursor),
 * push_counts (one row per counter, incremented atomically), push_pages (committed pages whose
 * delivery is leased to a worker), push_mailbox (own-channel messages per device, also the
 * one-row-per-(notification, device) guard), push_vendor_outbox (maker deliveries and their
 * results; NULL in a done page means sent), push_req_ids (req_id dedupe).
 */
export class SqlPushStore implements PushStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  private readonly delivery: SqlPushDelivery;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
    this.delivery = new SqlPushDelivery(options);
  }

  /** PostgreSQL lets workers skip a job another worker is paging; SQLite has one writer anyway. */
  private get skipLocked(): Sql {
    return this.dialect.kind === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
  }

  private text(field: string): Sql {
    return this.dialect.kind === 'postgres'
      ? sql`(o.data ->> ${field})`
      : sql`json_extract(o.data, ${'$.' + field})`;
  }

  /**
   * Parallel text arrays as a table t(v, v2, v3, …) bound as one parameter per column: a page of
   * a thousand rows is one short statement instead of thousands of placeholders to parse and plan.
   */
  private rowsOf(columns: string[][]): Sql {
    const names = columns.map((_, i) => (i === 0 ? 'v' : `v${i + 1}`));
    if (this.dialect.kind === 'postgres') {
      const arrays = columns.map((column) => sql`${column}::text[]`);
      return sql`unnest(${sql.join(arrays)}) AS t(${sql.raw(names.join(', '))})`;
    }
    const rows = JSON.stringify(columns[0].map((_, r) => columns.map((column) => column[r])));
    const fields = names.map((name, i) => `json_extract(value, '$[${i}]') AS ${name}`).join(', ');
    return sql`(SELECT ${sql.raw(fields)} FROM json_each(${rows})) AS t`;
  }

  private toRecord(row: NotificationRow, counts: Record<string, number>): NotificationRecord {
    return {
      appId: row.app_id,
      objectId: row.id,
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
      status: row.status,
      pushTime: Number(row.push_time),
      expiresAt: num(row.expires_at),
      request: JSON.parse(row.request) as JsonObject,
      content: JSON.parse(row.content) as PushContent,
      counts,
    };
  }

  private toJob(row: NotificationRow): JobView {
    return {
      appId: row.app_id,
      notificationId: row.id,
      createdAt: Number(row.created_at),
      expiresAt: num(row.expires_at),
      content: JSON.parse(row.content) as PushContent,
    };
  }

  private async countsOf(db: Kysely<any>, appId: string, ids: string[]): Promise<Map<string, Record<string, number>>> {
    const out = new Map<string, Record<string, number>>(ids.map((id) => [id, {}]));
    if (ids.length === 0) return out;
    const { rows } = await sql<{ notification_id: string; key: string; n: number | string }>`
      SELECT notification_id, key, n FROM push_counts WHERE app_id = ${appId}
      AND notification_id IN (${sql.join(ids)})`.execute(db);
    for (const row of rows) out.get(row.notification_id)![row.key] = Number(row.n);
    return out;
  }

  async createPush(push: NewPush): Promise<CreatePushOutcome> {
    return this.db.transaction().execute(async (trx) => {
      if (push.reqId !== null) {
        // Takes the req_id only when it is new or older than the window; the loser of a race sees no row.
        const { rows } = await sql<{ notification_id: string }>`
          INSERT INTO push_req_ids (app_id, req_id, notification_id, created_at)
          VALUES (${push.appId}, ${push.reqId}, ${push.objectId}, ${push.createdAt})
          ON CONFLICT (app_id, req_id) DO UPDATE SET notification_id = excluded.notification_id,
            created_at = excluded.created_at
          WHERE push_req_ids.created_at <= ${push.createdAt - push.dedupeMs}
          RETURNING notification_id`.execute(trx);
        if (rows.length === 0) {
          const first = await sql<{ notification_id: string }>`SELECT notification_id FROM push_req_ids
            WHERE app_id = ${push.appId} AND req_id = ${push.reqId}`.execute(trx);
          const record = first.rows[0] ? await this.fetchRecord(trx, push.appId, first.rows[0].notification_id) : null;
          if (record) return { created: false as const, record };
        }
      }
      await sql`INSERT INTO push_notifications (app_id, id, created_at, updated_at, status, push_time, expires_at,
          request, content, selector, last_key, pages, paged)
        VALUES (${push.appId}, ${push.objectId}, ${push.createdAt}, ${push.createdAt}, ${push.status}, ${push.pushTime},
          ${push.expiresAt}, ${JSON.stringify(push.request)}, ${JSON.stringify(push.content)},
          ${JSON.stringify(push.selector)}, '', 0, 0)`.execute(trx);
      const record = await this.fetchRecord(trx, push.appId, push.objectId);
      return { created: true as const, record: record! };
    });
  }

  private async fetchRecord(db: Kysely<any>, appId: string, objectId: string): Promise<NotificationRecord | null> {
    const { rows } = await sql<NotificationRow>`SELECT * FROM push_notifications
      WHERE app_id = ${appId} AND id = ${objectId}`.execute(db);
    if (!rows[0]) return null;
    const counts = await this.countsOf(db, appId, [objectId]);
    return this.toRecord(rows[0], counts.get(objectId)!);
  }

  getNotification(appId: string, objectId: string): Promise<NotificationRecord | null> {
    return this.fetchRecord(this.db, appId, objectId);
  }

  async listNotifications(appId: string, options: { limit: number; skip: number }): Promise<NotificationRecord[]> {
    const { rows } = await sql<NotificationRow>`SELECT * FROM push_notifications WHERE app_id = ${appId}
      ORDER BY created_at DESC, id DESC LIMIT ${options.limit} OFFSET ${options.skip}`.execute(this.db);
    const counts = await this.countsOf(this.db, appId, rows.map((row) => row.id));
    return rows.map((row) => this.toRecord(row, counts.get(row.id)!));
  }

  async deleteNotification(appId: string, objectId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql`DELETE FROM push_notifications WHERE app_id = ${appId} AND id = ${objectId}
        RETURNING id`.execute(trx);
      for (const table of ['push_counts', 'push_pages', 'push_mailbox', 'push_vendor_outbox']) {
        await sql`DELETE FROM ${sql.table(table)} WHERE app_id = ${appId} AND notification_id = ${objectId}`.execute(trx);
      }
      return rows.length > 0;
    });
  }

  async claimPage(options: Parameters<PushStore['claimPage']>[0]): Promise<ClaimedPage | null> {
    const { now, pageSize, leaseMs } = options;
    return this.db.transaction().execute(async (trx): Promise<ClaimedPage | null> => {
      // The app's settings come with the job (one round trip less), read as they are now: SPEC §3.4.
      const { rows } = await sql<NotificationRow & { app_settings: unknown }>`SELECT n.*,
          (SELECT a.settings FROM apps a WHERE a.app_id = n.app_id) AS app_settings
        FROM push_notifications n
        WHERE n.paged = 0 AND n.push_time <= ${now} ORDER BY n.push_time, n.id LIMIT 1 ${this.skipLocked}`.execute(trx);
      const row = rows[0];
      if (!row) return null;
      const job = this.toJob(row);
      const key = sql`app_id = ${row.app_id} AND id = ${row.id}`;
      if (job.expiresAt !== null && job.expiresAt <= now) {
        await sql`UPDATE push_notifications SET paged = 1, status = 'expired', updated_at = ${now}
          WHERE ${key}`.execute(trx);
        return { kind: 'expired', job };
      }
      const settings = this.dialect.decodeJson<{ mixedPush?: unknown } | null>(row.app_settings ?? null);
      const selector = JSON.parse(row.selector) as Where;
      const mixedPush = settings?.mixedPush === true;
      // With mixed push off no device goes to a maker, so the maker fields are not even read.
      const vendorColumns = mixedPush
        ? sql`${this.text('vendor')} AS vendor, ${this.text('registrationId')} AS registration_id, ${this.text('deviceProfile')} AS device_profile`
        : sql`NULL AS vendor, NULL AS registration_id, NULL AS device_profile`;
      const page = await sql<{ id: string; installation_id: string | null; vendor: unknown; registration_id: unknown; device_profile: unknown }>`
        SELECT o.id, o.installation_id, ${vendorColumns}
        FROM objects o WHERE o.app_id = ${row.app_id} AND o.class_name = '_Installation' AND o.id > ${row.last_key}
        AND ${compileWhere(this.dialect, '_Installation', selector)}
        ORDER BY o.id LIMIT ${pageSize}`.execute(trx);
      const str = (value: unknown) => (typeof value === 'string' ? value : null);
      const devices: TargetDevice[] = page.rows.map((r) => ({
        objectId: r.id,
        installationId: r.installation_id,
        vendor: str(r.vendor),
        registrationId: str(r.registration_id),
        deviceProfile: str(r.device_profile),
      }));
      const routing = options.route(job, devices, { mixedPush });
      const seq = Number(row.pages);
      const hasWork = routing.channel.length > 0 || routing.vendor.length > 0;
      if (routing.channel.length > 0) {
        await sql`INSERT INTO push_mailbox (app_id, installation_id, notification_id, page_seq, created_at, expires_at)
          SELECT ${row.app_id}, t.v, ${row.id}, ${seq}, ${job.createdAt}, ${job.expiresAt}
          FROM ${this.rowsOf([routing.channel])}`.execute(trx);
      }
      if (routing.vendor.length > 0) {
        const v = routing.vendor;
        await sql`INSERT INTO push_vendor_outbox (app_id, notification_id, installation_object_id, page_seq, vendor,
            device_profile, registration_id)
          SELECT ${row.app_id}, ${row.id}, t.v, ${seq}, t.v2, t.v3, t.v4
          FROM ${this.rowsOf([v.map((t) => t.installationObjectId), v.map((t) => t.vendor), v.map((t) => t.deviceProfile), v.map((t) => t.registrationId)])}`.execute(
          trx,
        );
        // No ON CONFLICT (a third of the insert's cost): the cursor moves in this transaction, under the job's lock,
        // so a page's installations are never routed twice (the mailbox insert above relies on the same).
      }
      if (hasWork) {
        const channel = routing.channel.length > 0 ? JSON.stringify(routing.channel) : null;
        await sql`INSERT INTO push_pages (app_id, notification_id, seq, done, lease_until, channel)
          VALUES (${row.app_id}, ${row.id}, ${seq}, 0, ${now + leaseMs}, ${channel})`.execute(trx);
      }
      await addCounts(trx, row.app_id, row.id, routing.counts);
      const last = devices.length < pageSize;
      const lastKey = devices.length > 0 ? devices[devices.length - 1].objectId : row.last_key;
      await sql`UPDATE push_notifications SET last_key = ${lastKey}, pages = pages + ${hasWork ? 1 : 0},
          paged = ${last ? 1 : 0}, status = 'sending', updated_at = ${now} WHERE ${key}`.execute(trx);
      if (last) await this.closeIfDelivered(trx, row.app_id, row.id, now);
      return { kind: 'page', last, work: { job, seq: hasWork ? seq : -1, channel: routing.channel, vendor: routing.vendor } };
    });
  }

  /** A fully paged job whose pages are all delivered is done. */
  private async closeIfDelivered(trx: Kysely<any>, appId: string, notificationId: string, now: number) {
    await sql`UPDATE push_notifications SET status = 'done', updated_at = ${now}
      WHERE app_id = ${appId} AND id = ${notificationId} AND paged = 1 AND status = 'sending'
      AND NOT EXISTS (SELECT 1 FROM push_pages p WHERE p.app_id = ${appId} AND p.notification_id = ${notificationId}
        AND p.done = 0)`.execute(trx);
  }

  async claimStalePage(options: { now: number; leaseMs: number }): Promise<PageWork | null> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ app_id: string; notification_id: string; seq: number | string; channel: string | null }>`
        SELECT app_id, notification_id, seq, channel FROM push_pages WHERE done = 0 AND lease_until < ${options.now}
        ORDER BY lease_until LIMIT 1 ${this.skipLocked}`.execute(trx);
      const page = rows[0];
      if (!page) return null;
      const seq = Number(page.seq);
      const pageKey = sql`app_id = ${page.app_id} AND notification_id = ${page.notification_id}`;
      await sql`UPDATE push_pages SET lease_until = ${options.now + options.leaseMs}
        WHERE ${pageKey} AND seq = ${seq}`.execute(trx);
      const job = await sql<NotificationRow>`SELECT * FROM push_notifications
        WHERE app_id = ${page.app_id} AND id = ${page.notification_id}`.execute(trx);
      if (!job.rows[0]) return null;
      const queued = page.channel === null ? [] : (JSON.parse(page.channel) as string[]);
      const unacked: string[] = [];
      for (const part of chunks(queued, insertChunk)) {
        const { rows: waiting } = await sql<{ installation_id: string }>`SELECT installation_id FROM push_mailbox
          WHERE app_id = ${page.app_id} AND installation_id IN (${sql.join(part)})
          AND notification_id = ${page.notification_id} AND acked_at IS NULL`.execute(trx);
        unacked.push(...waiting.map((r) => r.installation_id));
      }
      const outbox = await sql<{ installation_object_id: string; vendor: string; device_profile: string; registration_id: string }>`
        SELECT installation_object_id, vendor, device_profile, registration_id FROM push_vendor_outbox
        WHERE ${pageKey} AND page_seq = ${seq} AND result IS NULL`.execute(trx);
      return {
        job: this.toJob(job.rows[0]),
        seq,
        channel: unacked,
        vendor: outbox.rows.map(
          (r): VendorTarget => ({
            installationObjectId: r.installation_object_id,
            vendor: r.vendor as VendorTarget['vendor'],
            deviceProfile: r.device_profile,
            registrationId: r.registration_id,
          }),
        ),
      };
    });
  }

  async finishPage(result: PageResult, now: number): Promise<void> {
    const { appId, notificationId } = result;
    if (result.vendorResults.length === 0 && result.invalidate.length === 0 && Object.keys(result.counts).length === 0) {
      // An own-channel page only needs its mark: two single statements, no transaction round trips.
      await sql`UPDATE push_pages SET done = 1 WHERE app_id = ${appId} AND notification_id = ${notificationId}
        AND seq = ${result.seq}`.execute(this.db);
      await this.closeIfDelivered(this.db, appId, notificationId, now);
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await relaxedCommit(trx, this.dialect);
      const groups = new Map<string, { status: string; error: string | null; ids: string[] }>();
      for (const r of result.vendorResults) {
        const error = r.error ?? null;
        const key = `${r.status}\0${error ?? ''}`;
        if (!groups.has(key)) groups.set(key, { status: r.status, error, ids: [] });
        groups.get(key)!.ids.push(r.installationObjectId);
      }
      for (const group of groups.values()) {
        // A delivered page's rows still NULL were sent: the page's done mark says so, and a page is only
        // delivered again while not done. Writing 'sent' on every row cost more than the rest of the page.
        if (group.status === 'sent' && group.error === null) continue;
        if (this.dialect.kind === 'postgres') {
          // One statement per outcome, the ids bound as one array: no thousand-parameter IN list to parse and plan.
          await sql`UPDATE push_vendor_outbox SET result = ${group.status}, error = ${group.error}
            WHERE app_id = ${appId} AND notification_id = ${notificationId}
            AND installation_object_id = ANY(${group.ids}::text[])`.execute(trx);
          continue;
        }
        for (const part of chunks(group.ids, insertChunk)) {
          await sql`UPDATE push_vendor_outbox SET result = ${group.status}, error = ${group.error}
            WHERE app_id = ${appId} AND notification_id = ${notificationId}
            AND installation_object_id IN (${sql.join(part)})`.execute(trx);
        }
      }
      for (const part of chunks(result.invalidate, insertChunk)) {
        const invalid =
          this.dialect.kind === 'postgres'
            ? sql`jsonb_set(data, '{valid}', 'false'::jsonb)`
            : sql`json_set(data, '$.valid', json('false'))`;
        await sql`UPDATE objects SET data = ${invalid}, updated_at = ${now}
          WHERE app_id = ${appId} AND class_name = '_Installation' AND id IN (${sql.join(part)})`.execute(trx);
      }
      await addCounts(trx, appId, notificationId, result.counts);
      await sql`UPDATE push_pages SET done = 1 WHERE app_id = ${appId} AND notification_id = ${notificationId}
        AND seq = ${result.seq}`.execute(trx);
      // Two last pages finishing at once may each see the other pending; closeFinished() sweeps that case.
      await this.closeIfDelivered(trx, appId, notificationId, now);
    });
  }

  async closeFinished(now: number): Promise<number> {
    const { rows } = await sql`UPDATE push_notifications SET status = 'done', updated_at = ${now}
      WHERE status = 'sending' AND paged = 1 AND NOT EXISTS (SELECT 1 FROM push_pages p
        WHERE p.app_id = push_notifications.app_id AND p.notification_id = push_notifications.id AND p.done = 0)
      RETURNING id`.execute(this.db);
    return rows.length;
  }

  // Counters, receipts and the own channel's mailbox live in SqlPushDelivery (push-delivery.ts).
  recordCounts(appId: string, notificationId: string, counts: Record<string, number>): Promise<boolean> {
    return this.delivery.recordCounts(appId, notificationId, counts);
  }

  applyReceipts(vendor: string, updates: ReceiptUpdate[], now: number): Promise<{ notifications: number; invalidated: number }> {
    return this.delivery.applyReceipts(vendor, updates, now);
  }

  mailbox(appId: string, installationId: string, now: number, limit: number): Promise<MailboxMessage[]> {
    return this.delivery.mailbox(appId, installationId, now, limit);
  }

  ack(entries: AckEntry[], now: number): Promise<number> {
    return this.delivery.ack(entries, now);
  }

  prune(now: number, keepAckedMs: number): Promise<void> {
    return this.delivery.prune(now, keepAckedMs);
  }
}
