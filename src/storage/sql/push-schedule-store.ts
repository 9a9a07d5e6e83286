import { sql, type Kysely } from 'kysely';
import type { JsonObject } from '../../objects/types.ts';
import type { NewPush, PushContent } from '../../push/types.ts';
import type { CancelOutcome, PushScheduleStore, ScheduledPush } from '../push-schedule-store.ts';
import type { SqlDialect } from './dialect.ts';
import { serialiseOn } from './serialise.ts';

/**
 * Called by createPush inside its transaction, before the record is stored: a scheduled push gets
 * its number; false (nothing numbered) when the application already has `push.scheduleCap` pushes
 * waiting. Serialised per application, so pushes made at the same instant cannot pass together.
 */
export async function admitScheduledPush(trx: Kysely<any>, dialect: SqlDialect, push: NewPush): Promise<boolean> {
  if (push.status !== 'scheduled') return true;
  await serialiseOn(trx, dialect, `push-schedule:${push.appId}`);
  await sql`DELETE FROM push_schedule WHERE app_id = ${push.appId} AND NOT EXISTS (SELECT 1 FROM push_notifications n
    WHERE n.app_id = push_schedule.app_id AND n.id = push_schedule.notification_id AND n.status = 'scheduled')`.execute(trx);
  if (push.scheduleCap !== undefined) {
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM push_schedule
      WHERE app_id = ${push.appId}`.execute(trx);
    if (Number(rows[0].n) >= push.scheduleCap) return false;
  }
  await sql`INSERT INTO push_schedule (app_id, notification_id) VALUES (${push.appId}, ${push.objectId})`.execute(trx);
  return true;
}

interface ScheduledRow {
  id: number | string;
  app_id: string;
  notification_id: string;
  created_at: number | string;
  push_time: number | string;
  expires_at: number | string | null;
  request: string;
  content: string;
}

/** PushScheduleStore on SQL: push_schedule joined to the records in push_notifications. */
export class SqlPushScheduleStore implements PushScheduleStore {
  private readonly db: Kysely<any>;

  constructor(options: { db: Kysely<any> }) {
    this.db = options.db;
  }

  async list(appId: string): Promise<ScheduledPush[]> {
    const { rows } = await sql<ScheduledRow>`SELECT s.id, s.app_id, s.notification_id, n.created_at, n.push_time,
        n.expires_at, n.request, n.content
      FROM push_schedule s JOIN push_notifications n ON n.app_id = s.app_id AND n.id = s.notification_id
      WHERE s.app_id = ${appId} AND n.status = 'scheduled' ORDER BY s.id`.execute(this.db);
    return rows.map((row) => ({
      id: Number(row.id),
      appId: row.app_id,
      notificationId: row.notification_id,
      createdAt: Number(row.created_at),
      pushTime: Number(row.push_time),
      expiresAt: row.expires_at === null ? null : Number(row.expires_at),
      request: JSON.parse(row.request) as JsonObject,
      content: JSON.parse(row.content) as PushContent,
    }));
  }

  async cancel(appId: string, id: number, now: number): Promise<CancelOutcome> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ notification_id: string }>`DELETE FROM push_schedule
        WHERE app_id = ${appId} AND id = ${id} RETURNING notification_id`.execute(trx);
      if (!rows[0]) return 'unknown';
      // paged = 1 takes the job out of the workers' claim, as an expired job; a worker that claimed
      // it first has made it 'sending', and this statement then matches nothing.
      const cancelled = await sql`UPDATE push_notifications SET status = 'cancelled', paged = 1, updated_at = ${now}
        WHERE app_id = ${appId} AND id = ${rows[0].notification_id} AND status = 'scheduled' AND paged = 0
        RETURNING id`.execute(trx);
      return cancelled.rows.length > 0 ? 'cancelled' : 'started';
    });
  }
}
