import { sql, type Kysely } from 'kysely';
import type { InboxEntry, InboxKey, StatusInboxStore } from '../status-inbox-store.ts';
import type { SqlDialect } from './dialect.ts';

/** Inboxes numbered per statement: a few hundred owners, well inside every parameter limit (one array each on PostgreSQL). */
const ownersPerStatement = 500;

/** StatusInboxStore on SQL (migration 0018); one text for both databases. */
export class SqlStatusInboxStore implements StatusInboxStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async deliver(appId: string, statusId: string, inboxType: string, owners: readonly string[]): Promise<void> {
    // Sorted, so two deliveries to overlapping owners take the counters' row locks in one order.
    const all = [...new Set(owners)].sort();
    await this.db.transaction().execute(async (trx) => {
      for (let start = 0; start < all.length; start += ownersPerStatement) {
        const chunk = all.slice(start, start + ownersPerStatement);
        // WHERE true: SQLite reads `SELECT … ON CONFLICT` as a join constraint without it.
        const { rows } = await sql<{ owner: string; last_id: number | string }>`
          INSERT INTO status_inbox_counters (app_id, owner, inbox_type, last_id, read_id)
          SELECT ${appId}, t.v, ${inboxType}, 1, 0 FROM ${this.dialect.textRows([chunk])} WHERE true
          ON CONFLICT (app_id, owner, inbox_type) DO UPDATE SET last_id = status_inbox_counters.last_id + 1
          RETURNING owner, last_id`.execute(trx);
        await sql`INSERT INTO status_inboxes (app_id, owner, inbox_type, message_id, status_id)
          SELECT ${appId}, t.v, ${inboxType}, CAST(t.v2 AS BIGINT), ${statusId}
          FROM ${this.dialect.textRows([rows.map((row) => row.owner), rows.map((row) => String(row.last_id))])}`.execute(trx);
      }
    });
  }

  async page(inbox: InboxKey, range: { sinceId: number; maxId: number; limit: number }): Promise<InboxEntry[]> {
    const upTo = range.maxId > 0 ? sql`AND message_id <= ${range.maxId}` : sql``;
    const { rows } = await sql<{ message_id: number | string; status_id: string }>`SELECT message_id, status_id FROM status_inboxes
      WHERE app_id = ${inbox.appId} AND owner = ${inbox.owner} AND inbox_type = ${inbox.inboxType} AND message_id > ${range.sinceId} ${upTo}
      ORDER BY message_id DESC LIMIT ${range.limit}`.execute(this.db);
    return rows.map((row) => ({ messageId: Number(row.message_id), statusId: row.status_id }));
  }

  async count(inbox: InboxKey): Promise<{ total: number; unread: number }> {
    const { rows } = await sql<{ total: number | string; unread: number | string | null }>`
      SELECT COUNT(*) AS total, COUNT(CASE WHEN i.message_id > c.read_id THEN 1 END) AS unread
      FROM status_inboxes i JOIN status_inbox_counters c ON c.app_id = i.app_id AND c.owner = i.owner AND c.inbox_type = i.inbox_type
      WHERE i.app_id = ${inbox.appId} AND i.owner = ${inbox.owner} AND i.inbox_type = ${inbox.inboxType}`.execute(this.db);
    return { total: Number(rows[0]?.total ?? 0), unread: Number(rows[0]?.unread ?? 0) };
  }

  async markRead(inbox: InboxKey, messageId: number | null): Promise<void> {
    const upTo = messageId === null ? sql`last_id` : sql`${messageId}`;
    await sql`UPDATE status_inbox_counters SET read_id = CASE WHEN ${upTo} > read_id THEN ${upTo} ELSE read_id END
      WHERE app_id = ${inbox.appId} AND owner = ${inbox.owner} AND inbox_type = ${inbox.inboxType}`.execute(this.db);
  }

  async removeEntry(inbox: InboxKey, messageId: number): Promise<boolean> {
    const result = await sql`DELETE FROM status_inboxes WHERE app_id = ${inbox.appId} AND owner = ${inbox.owner}
      AND inbox_type = ${inbox.inboxType} AND message_id = ${messageId}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async removeStatus(appId: string, statusId: string): Promise<void> {
    await sql`DELETE FROM status_inboxes WHERE app_id = ${appId} AND status_id = ${statusId}`.execute(this.db);
  }
}
