import { sql, type Kysely } from 'kysely';
import type { ClaimedPage, PageClaim } from '../push-store.ts';
import type { PageResult, PageWork, RoutePage, TargetDevice, VendorTarget } from '../../push/types.ts';
import type { Sql, SqlDialect } from './dialect.ts';
import { storeFault } from '../busy.ts';
import { compileWhere, type WhereScope } from './where.ts';
import { addCounts, chunks, insertChunk, jobOf, relaxedCommit, selectorOf, type NotificationRow } from './push-common.ts';

/** A maker target as push_pages.vendor keeps it: [installation object id, vendor, device profile, registration id]. */
type StoredTarget = [string, VendorTarget['vendor'], string, string];

const str = (value: unknown) => (typeof value === 'string' ? value : null);

/**
 * The pages of fan-out jobs (push_pages). A page is first claimed as a key range of the job's
 * selected installations, under the job's row lock: keys only, nothing routed or written but
 * the page row and the cursor. Routing the range (filling the page) then runs under the page's
 * own row lock, so any number of workers fill pages of one job at once. Delivery results come
 * back through finishPage.
 */
export class SqlPushPages {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  /** A push's selector, compiled with the readers its subqueries read with (the installations themselves are the master's). */
  private selected(row: NotificationRow): Sql {
    const { where, readers } = selectorOf(row.selector);
    const scope: WhereScope = { dialect: this.dialect, appId: row.app_id, className: '_Installation', readers };
    return compileWhere(scope, where);
  }

  private text(field: string): Sql {
    return this.dialect.jsonField(sql`o.data`, field);
  }

  async claimPage(options: { now: number; pageSize: number; leaseMs: number }): Promise<ClaimedPage | null> {
    let due: NotificationRow | null = null;
    try {
      return await this.claimIn(options, (row) => (due = row));
    } catch (error) {
      // A database that is away or busy fails every job alike: the worker tries again later. Anything else is
      // this job's own (its where, its stored selector): it would fail at every try, and since jobs are claimed
      // in push_time order it would hold every push behind it.
      if (due === null || storeFault(error) !== null) throw error;
      return this.closeFailed(due, options.now, error);
    }
  }

  private async closeFailed(row: NotificationRow, now: number, error: unknown): Promise<ClaimedPage> {
    const reason = `the installations could not be selected: ${error instanceof Error ? error.message : String(error)}`;
    await this.db.transaction().execute(async (trx) => {
      const { rows } = await sql`UPDATE push_notifications SET paged = 1, status = 'sending', updated_at = ${now}
        WHERE app_id = ${row.app_id} AND id = ${row.id} AND paged = 0 RETURNING id`.execute(trx);
      // Another worker may have closed it first.
      if (rows.length === 0) return;
      await addCounts(trx, row.app_id, row.id, { [`error:${reason.slice(0, 200)}`]: 1 });
      await this.closeIfDelivered(trx, row.app_id, row.id, now);
    });
    return { kind: 'failed', job: jobOf(row), error };
  }

  private claimIn(
    options: { now: number; pageSize: number; leaseMs: number },
    claiming: (row: NotificationRow) => void,
  ): Promise<ClaimedPage | null> {
    const { now, pageSize, leaseMs } = options;
    return this.db.transaction().execute(async (trx): Promise<ClaimedPage | null> => {
      // Nothing is sent on the strength of a claim: the fill's commit waits for the WAL, which holds this one.
      await relaxedCommit(trx, this.dialect);
      const { rows } = await sql<NotificationRow>`SELECT * FROM push_notifications
        WHERE paged = 0 AND push_time <= ${now} ORDER BY push_time, id LIMIT 1 ${this.dialect.rowLockSkipLocked}`.execute(trx);
      const row = rows[0];
      if (!row) return null;
      claiming(row);
      const job = jobOf(row);
      const key = sql`app_id = ${row.app_id} AND id = ${row.id}`;
      if (job.expiresAt !== null && job.expiresAt <= now) {
        await sql`UPDATE push_notifications SET paged = 1, status = 'expired', updated_at = ${now}
          WHERE ${key}`.execute(trx);
        return { kind: 'expired', job };
      }
      const after = sql`o.app_id = ${row.app_id} AND o.class_name = '_Installation' AND o.id > ${row.last_key}`;
      const selected = this.selected(row);
      // The key of the page's last selected installation, and whether another follows it. Only keys are read
      // (what the selector needs, or an index when it names the installation): reading and routing the page
      // is the fill's work, done in parallel. A page that would not fill gets every remaining key.
      const { rows: keys } = await sql<{ id: string }>`SELECT o.id FROM objects o WHERE ${after} AND ${selected}
        ORDER BY o.id LIMIT 2 OFFSET ${pageSize - 1}`.execute(trx);
      const last = keys.length < 2;
      let hiKey: string | null = keys.length > 0 ? keys[0].id : null;
      if (hiKey === null) {
        const tail = await sql<{ id: string | null }>`SELECT max(o.id) AS id FROM objects o WHERE ${after}`.execute(trx);
        hiKey = tail.rows[0]?.id ?? null;
      }
      if (hiKey === null) {
        await sql`UPDATE push_notifications SET paged = 1, status = 'sending', updated_at = ${now} WHERE ${key}`.execute(trx);
        await this.closeIfDelivered(trx, row.app_id, row.id, now);
        return { kind: 'paged', job };
      }
      const seq = Number(row.pages);
      await sql`INSERT INTO push_pages (app_id, notification_id, seq, done, lease_until, filled, lo_key, hi_key)
        VALUES (${row.app_id}, ${row.id}, ${seq}, 0, ${now + leaseMs}, 0, ${row.last_key}, ${hiKey})`.execute(trx);
      await sql`UPDATE push_notifications SET last_key = ${hiKey}, pages = pages + 1, paged = ${last ? 1 : 0},
          status = 'sending', updated_at = ${now} WHERE ${key}`.execute(trx);
      return { kind: 'page', page: { appId: row.app_id, notificationId: row.id, seq }, last };
    });
  }

  async fillPage(page: PageClaim, options: { now: number; route: RoutePage }): Promise<PageWork | null> {
    const work = await this.db.transaction().execute((trx) => this.fill(trx, page, options.now, options.route));
    return work && (work.channel.length > 0 || work.vendor.length > 0) ? work : null;
  }

  /**
   * Routes a claimed page in `trx` and commits it: own-channel devices into their mailboxes, both
   * lists into the page. The page row is locked first, so a page is routed once. A page without
   * devices is done at once. Null when the page is gone (its push deleted) or already routed.
   */
  private async fill(trx: Kysely<any>, page: PageClaim, now: number, route: RoutePage): Promise<PageWork | null> {
    const pageKey = sql`app_id = ${page.appId} AND notification_id = ${page.notificationId} AND seq = ${page.seq}`;
    // The app's settings come with the page, read as they are now: SPEC §3.4.
    const { rows } = await sql<NotificationRow & { lo_key: string; hi_key: string; app_settings: unknown }>`
      SELECT n.*, p.lo_key, p.hi_key, (SELECT a.settings FROM apps a WHERE a.app_id = n.app_id) AS app_settings
      FROM push_pages p JOIN push_notifications n ON n.app_id = p.app_id AND n.id = p.notification_id
      WHERE p.app_id = ${page.appId} AND p.notification_id = ${page.notificationId} AND p.seq = ${page.seq}
      AND p.filled = 0 ${this.dialect.rowLockOf('p')}`.execute(trx);
    const row = rows[0];
    if (!row) return null;
    const job = jobOf(row);
    const settings = this.dialect.decodeJson<{ mixedPush?: unknown } | null>(row.app_settings ?? null);
    const mixedPush = settings?.mixedPush === true;
    // With mixed push off no device goes to a maker, so the maker fields are not even read.
    const vendorColumns = mixedPush
      ? sql`${this.text('vendor')} AS vendor, ${this.text('registrationId')} AS registration_id, ${this.text('deviceProfile')} AS device_profile`
      : sql`NULL AS vendor, NULL AS registration_id, NULL AS device_profile`;
    const found = await sql<{ id: string; installation_id: string | null; vendor: unknown; registration_id: unknown; device_profile: unknown }>`
      SELECT o.id, o.installation_id, ${vendorColumns}
      FROM objects o WHERE o.app_id = ${row.app_id} AND o.class_name = '_Installation'
      AND o.id > ${row.lo_key} AND o.id <= ${row.hi_key}
      AND ${this.selected(row)}
      ORDER BY o.id`.execute(trx);
    const devices: TargetDevice[] = found.rows.map((r) => ({
      objectId: r.id,
      installationId: r.installation_id,
      vendor: str(r.vendor),
      registrationId: str(r.registration_id),
      deviceProfile: str(r.device_profile),
    }));
    const routing = route(job, devices, { mixedPush });
    const hasWork = routing.channel.length > 0 || routing.vendor.length > 0;
    if (routing.channel.length > 0) {
      // No ON CONFLICT: the page row's lock and filled flag make this the page's only routing.
      await sql`INSERT INTO push_mailbox (app_id, installation_id, notification_id, page_seq, created_at, expires_at)
        SELECT ${row.app_id}, t.v, ${row.id}, ${page.seq}, ${job.createdAt}, ${job.expiresAt}
        FROM ${this.dialect.textRows([routing.channel])}`.execute(trx);
    }
    const channel = routing.channel.length > 0 ? JSON.stringify(routing.channel) : null;
    const stored: StoredTarget[] = routing.vendor.map((t) => [t.installationObjectId, t.vendor, t.deviceProfile, t.registrationId]);
    const vendor = stored.length > 0 ? JSON.stringify(stored) : null;
    await sql`UPDATE push_pages SET filled = 1, done = ${hasWork ? 0 : 1}, channel = ${channel}, vendor = ${vendor}
      WHERE ${pageKey}`.execute(trx);
    await addCounts(trx, row.app_id, row.id, routing.counts);
    if (!hasWork) await this.closeIfDelivered(trx, row.app_id, row.id, now);
    return { job, seq: page.seq, channel: routing.channel, vendor: routing.vendor };
  }

  /** A fully paged job whose pages are all delivered is done. */
  private async closeIfDelivered(trx: Kysely<any>, appId: string, notificationId: string, now: number) {
    await sql`UPDATE push_notifications SET status = 'done', updated_at = ${now}
      WHERE app_id = ${appId} AND id = ${notificationId} AND paged = 1 AND status = 'sending'
      AND NOT EXISTS (SELECT 1 FROM push_pages p WHERE p.app_id = ${appId} AND p.notification_id = ${notificationId}
        AND p.done = 0)`.execute(trx);
  }

  async claimStalePage(options: { now: number; leaseMs: number; route: RoutePage }): Promise<PageWork | null> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ app_id: string; notification_id: string; seq: number | string; filled: number | string; channel: string | null; vendor: string | null }>`
        SELECT app_id, notification_id, seq, filled, channel, vendor FROM push_pages WHERE done = 0 AND lease_until < ${options.now}
        ORDER BY lease_until LIMIT 1 ${this.dialect.rowLockSkipLocked}`.execute(trx);
      const page = rows[0];
      if (!page) return null;
      const claim: PageClaim = { appId: page.app_id, notificationId: page.notification_id, seq: Number(page.seq) };
      const pageKey = sql`app_id = ${claim.appId} AND notification_id = ${claim.notificationId}`;
      await sql`UPDATE push_pages SET lease_until = ${options.now + options.leaseMs}
        WHERE ${pageKey} AND seq = ${claim.seq}`.execute(trx);
      // Claimed by a worker that died before routing it: routed now (an empty page comes back with empty lists, done).
      if (Number(page.filled) === 0) return this.fill(trx, claim, options.now, options.route);
      const job = await sql<NotificationRow>`SELECT * FROM push_notifications
        WHERE app_id = ${claim.appId} AND id = ${claim.notificationId}`.execute(trx);
      if (!job.rows[0]) return null;
      const queued = page.channel === null ? [] : (JSON.parse(page.channel) as string[]);
      const unacked: string[] = [];
      for (const part of chunks(queued, insertChunk)) {
        const { rows: waiting } = await sql<{ installation_id: string }>`SELECT installation_id FROM push_mailbox
          WHERE app_id = ${claim.appId} AND installation_id IN (${sql.join(part)})
          AND notification_id = ${claim.notificationId} AND acked_at IS NULL`.execute(trx);
        unacked.push(...waiting.map((r) => r.installation_id));
      }
      return { job: jobOf(job.rows[0]), seq: claim.seq, channel: unacked, vendor: this.targetsOf(page.vendor) };
    });
  }

  /** A page's maker targets, as fill() stored them (null: none). */
  private targetsOf(stored: string | null): VendorTarget[] {
    if (stored === null) return [];
    return (JSON.parse(stored) as StoredTarget[]).map(([installationObjectId, vendor, deviceProfile, registrationId]) => ({
      installationObjectId,
      vendor,
      deviceProfile,
      registrationId,
    }));
  }

  async finishPage(result: PageResult, now: number): Promise<void> {
    const { appId, notificationId } = result;
    const pageKey = sql`app_id = ${appId} AND notification_id = ${notificationId} AND seq = ${result.seq}`;
    // Devices a maker took leave no row: the page's done mark says they were sent.
    const unsent = result.vendorResults.filter((r) => r.status !== 'sent');
    if (unsent.length === 0 && result.invalidate.length === 0 && Object.keys(result.counts).length === 0) {
      // An own-channel page only needs its mark: two single statements, no transaction round trips.
      await sql`UPDATE push_pages SET done = 1 WHERE ${pageKey}`.execute(this.db);
      await this.closeIfDelivered(this.db, appId, notificationId, now);
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      await relaxedCommit(trx, this.dialect);
      for (const part of chunks(unsent, insertChunk)) {
        const columns = [
          part.map((r) => r.installationObjectId),
          part.map((r) => r.vendor),
          part.map((r) => r.deviceProfile),
          part.map((r) => r.registrationId),
          part.map((r) => r.status),
          part.map((r) => r.error ?? null),
        ];
        // A page delivered twice (its lease ran out while a slow maker answered) keeps the later answer.
        // (WHERE true: SQLite would read ON CONFLICT as part of the FROM clause's join.)
        await sql`INSERT INTO push_vendor_outbox (app_id, notification_id, installation_object_id, page_seq, vendor,
            device_profile, registration_id, result, error)
          SELECT ${appId}, ${notificationId}, t.v, ${result.seq}, t.v2, t.v3, t.v4, t.v5, t.v6
          FROM ${this.dialect.textRows(columns)} WHERE true
          ON CONFLICT (app_id, notification_id, installation_object_id) DO UPDATE
          SET result = excluded.result, error = excluded.error`.execute(trx);
      }
      for (const part of chunks(result.invalidate, insertChunk)) {
        await sql`UPDATE objects SET data = ${this.dialect.jsonSet(sql`data`, 'valid', false)}, updated_at = ${now}
          WHERE app_id = ${appId} AND class_name = '_Installation' AND id IN (${sql.join(part)})`.execute(trx);
      }
      await addCounts(trx, appId, notificationId, result.counts);
      await sql`UPDATE push_pages SET done = 1 WHERE ${pageKey}`.execute(trx);
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

  /** Delivered pages (with their device lists) go at once; the makers' refusals are kept keepMs after their push. */
  async prune(now: number, keepMs: number): Promise<void> {
    await sql`DELETE FROM push_pages WHERE done = 1`.execute(this.db);
    await sql`DELETE FROM push_vendor_outbox WHERE EXISTS (SELECT 1 FROM push_notifications n
      WHERE n.app_id = push_vendor_outbox.app_id AND n.id = push_vendor_outbox.notification_id
      AND n.created_at < ${now - keepMs})`.execute(this.db);
  }
}
