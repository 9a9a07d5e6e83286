import { sql, type Kysely } from 'kysely';
import type { JsonObject } from '../../objects/types.ts';
import type { AckEntry, ClaimedPage, CreatePushOutcome, PageClaim, PushStore, ReceiptUpdate } from '../push-store.ts';
import type {
  MailboxMessage,
  NewPush,
  NotificationRecord,
  PageResult,
  PageWork,
  PushContent,
  RoutePage,
} from '../../push/types.ts';
import type { SqlDialect } from './dialect.ts';
import { num, storedSelector, type NotificationRow } from './push-common.ts';
import { SqlPushDelivery } from './push-delivery.ts';
import { SqlPushPages } from './push-pages.ts';
import { admitScheduledPush } from './push-schedule-store.ts';

class ScheduleFull extends Error {}

/**
 * PushStore on SQL. Tables (src/storage/sql/migrations): push_notifications (record + job
 * cursor), push_counts (one row per counter, incremented atomically), push_pages (a job's pages:
 * key range, routed device lists, delivery leased to a worker), push_mailbox (own-channel messages
 * per device, also the one-row-per-(notification, device) guard), push_vendor_outbox (the maker
 * devices of delivered pages that were not sent, with the reason), push_req_ids (req_id dedupe).
 */
export class SqlPushStore implements PushStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  private readonly delivery: SqlPushDelivery;
  private readonly pages: SqlPushPages;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
    this.delivery = new SqlPushDelivery(options);
    this.pages = new SqlPushPages(options);
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
    try {
      return await this.createIn(push);
    } catch (error) {
      if (error instanceof ScheduleFull) return { created: false, refused: 'scheduleCap' };
      throw error;
    }
  }

  private createIn(push: NewPush): Promise<CreatePushOutcome> {
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
      // Thrown to roll back the req_id just taken: a refused push leaves nothing behind.
      if (!(await admitScheduledPush(trx, this.dialect, push))) throw new ScheduleFull();
      await sql`INSERT INTO push_notifications (app_id, id, created_at, updated_at, status, push_time, expires_at,
          request, content, selector, last_key, pages, paged)
        VALUES (${push.appId}, ${push.objectId}, ${push.createdAt}, ${push.createdAt}, ${push.status}, ${push.pushTime},
          ${push.expiresAt}, ${JSON.stringify(push.request)}, ${JSON.stringify(push.content)},
          ${storedSelector(push)}, '', 0, 0)`.execute(trx);
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

  // Paging, routing and page results live in SqlPushPages (push-pages.ts).
  claimPage(options: Parameters<PushStore['claimPage']>[0]): Promise<ClaimedPage | null> {
    return this.pages.claimPage(options);
  }

  fillPage(page: PageClaim, options: { now: number; route: RoutePage }): Promise<PageWork | null> {
    return this.pages.fillPage(page, options);
  }

  claimStalePage(options: Parameters<PushStore['claimStalePage']>[0]): Promise<PageWork | null> {
    return this.pages.claimStalePage(options);
  }

  finishPage(result: PageResult, now: number): Promise<void> {
    return this.pages.finishPage(result, now);
  }

  closeFinished(now: number): Promise<number> {
    return this.pages.closeFinished(now);
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

  async prune(now: number, keepAckedMs: number, mailboxLimit: number): Promise<void> {
    await this.pages.prune(now, keepAckedMs);
    await this.delivery.prune(now, keepAckedMs, mailboxLimit);
  }
}
