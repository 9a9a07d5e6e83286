import { sql, type Kysely } from 'kysely';
import type { AckEntry, ReceiptUpdate } from '../push-store.ts';
import type { MailboxMessage, PushContent } from '../../push/types.ts';
import type { SqlDialect } from './dialect.ts';
import { addCounts, chunks, insertChunk, relaxedCommit } from './push-common.ts';

/**
 * What happens to a push after routing: counters and receipts from the makers, and the own
 * channel's mailbox (read at login, emptied by acknowledgements, pruned when messages expire).
 */
export class SqlPushDelivery {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async recordCounts(appId: string, notificationId: string, counts: Record<string, number>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql`SELECT id FROM push_notifications WHERE app_id = ${appId} AND id = ${notificationId}`.execute(trx);
      if (rows.length === 0) return false;
      await addCounts(trx, appId, notificationId, counts);
      return true;
    });
  }

  async applyReceipts(vendor: string, updates: ReceiptUpdate[], now: number): Promise<{ notifications: number; invalidated: number }> {
    const ids = [...new Set(updates.map((u) => u.notificationId).filter((id) => id !== ''))];
    if (ids.length === 0) return { notifications: 0, invalidated: 0 };
    return this.db.transaction().execute(async (trx) => {
      await relaxedCommit(trx, this.dialect);
      const { rows } = await sql<{ app_id: string; id: string }>`SELECT app_id, id FROM push_notifications
        WHERE id IN (${sql.join(ids)})`.execute(trx);
      const appOf = new Map(rows.map((r) => [r.id, r.app_id]));
      const field = (name: string) => this.dialect.jsonField(sql`data`, name);
      const invalid = this.dialect.jsonSet(sql`data`, 'valid', false);
      let notifications = 0;
      let invalidated = 0;
      for (const update of updates) {
        const appId = appOf.get(update.notificationId);
        if (appId === undefined) continue;
        notifications++;
        await addCounts(trx, appId, update.notificationId, update.counts);
        for (const part of chunks([...new Set(update.invalidTokens)], insertChunk)) {
          // Installations of the notification's app that still have this maker and this token: a token is the
          // maker's address of one device for one app, so a receipt calling it dead holds for every push to it.
          const { rows: changed } = await sql`UPDATE objects SET data = ${invalid}, updated_at = ${now}
            WHERE app_id = ${appId} AND class_name = '_Installation' AND ${field('registrationId')} IN (${sql.join(part)})
            AND ${field('vendor')} = ${vendor}
            RETURNING id`.execute(trx);
          invalidated += changed.length;
        }
      }
      return { notifications, invalidated };
    });
  }

  async mailbox(appId: string, installationId: string, now: number, limit: number): Promise<MailboxMessage[]> {
    const { rows } = await sql<{ notification_id: string; content: string; created_at: number | string; expires_at: number | string | null }>`
      SELECT * FROM (SELECT m.notification_id, n.content, n.created_at, m.expires_at FROM push_mailbox m
        JOIN push_notifications n ON n.app_id = m.app_id AND n.id = m.notification_id
        WHERE m.app_id = ${appId} AND m.installation_id = ${installationId} AND m.acked_at IS NULL
        AND (m.expires_at IS NULL OR m.expires_at > ${now})
        ORDER BY m.created_at DESC, m.notification_id DESC LIMIT ${limit}) newest
      ORDER BY created_at, notification_id`.execute(this.db);
    return rows.map((r) => {
      const content = JSON.parse(r.content) as PushContent;
      const message: MailboxMessage = {
        id: r.notification_id,
        data: content.data,
        createdAt: Number(r.created_at),
        expiresAt: r.expires_at === null ? null : Number(r.expires_at),
      };
      if (content.channel !== undefined) message.channel = content.channel;
      return message;
    });
  }

  async ack(entries: AckEntry[], now: number): Promise<number> {
    const groups = new Map<string, { appId: string; notificationId: string; ids: string[] }>();
    for (const e of entries) {
      const key = `${e.appId}\0${e.notificationId}`;
      if (!groups.has(key)) groups.set(key, { appId: e.appId, notificationId: e.notificationId, ids: [] });
      groups.get(key)!.ids.push(e.installationId);
    }
    let acked = 0;
    await this.db.transaction().execute(async (trx) => {
      await relaxedCommit(trx, this.dialect);
      for (const group of groups.values()) {
        let n = 0;
        for (const part of chunks([...new Set(group.ids)], insertChunk)) {
          // An acknowledged message leaves the mailbox: a delete writes no new row version or index entry,
          // which matters when twenty thousand devices acknowledge within a second.
          const { rows } = await sql`DELETE FROM push_mailbox
            WHERE app_id = ${group.appId} AND notification_id = ${group.notificationId}
            AND installation_id IN (${sql.join(part)}) RETURNING installation_id`.execute(trx);
          n += rows.length;
        }
        await addCounts(trx, group.appId, group.notificationId, { 'lc.delivered': n });
        acked += n;
      }
    });
    return acked;
  }

  async prune(now: number, keepAckedMs: number, mailboxLimit: number): Promise<void> {
    await sql`DELETE FROM push_mailbox WHERE (expires_at IS NOT NULL AND expires_at < ${now})
      OR (acked_at IS NOT NULL AND acked_at < ${now - keepAckedMs})`.execute(this.db);
    // A device that never comes back keeps its newest messages only: the older ones would never be sent.
    await sql`DELETE FROM push_mailbox WHERE (app_id, installation_id, notification_id) IN (
      SELECT app_id, installation_id, notification_id FROM (
        SELECT app_id, installation_id, notification_id, ROW_NUMBER() OVER (
          PARTITION BY app_id, installation_id ORDER BY created_at DESC, notification_id DESC) AS newness
        FROM push_mailbox WHERE acked_at IS NULL) ranked
      WHERE newness > ${mailboxLimit})`.execute(this.db);
    await sql`DELETE FROM push_req_ids WHERE created_at < ${now - keepAckedMs}`.execute(this.db);
  }
}
