import { sql, type Kysely } from 'kysely';
import type { PauseKey, QuotaPause, QuotaPauses } from '../quota-pause-store.ts';
import type { SqlDialect } from './dialect.ts';

/**
 * Daily-quota pauses shared by every node on the database, for deployments without Redis.
 * One upsert keeps the later of two pauses, so nodes reporting the same quota error agree.
 */
export class SqlQuotaPauses implements QuotaPauses {
  private readonly db: Kysely<any>;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
  }

  async current(key: PauseKey, now: number): Promise<QuotaPause | null> {
    const { rows } = await sql<{ until_ms: number | string; reason: string }>`SELECT until_ms, reason FROM vendor_pauses
      WHERE app_id = ${key.appId} AND device_profile = ${key.deviceProfile} AND vendor = ${key.vendor}
      AND until_ms > ${now}`.execute(this.db);
    return rows[0] ? { until: Number(rows[0].until_ms), reason: rows[0].reason } : null;
  }

  async pause(key: PauseKey, until: number, reason: string): Promise<void> {
    await sql`INSERT INTO vendor_pauses (app_id, device_profile, vendor, until_ms, reason)
      VALUES (${key.appId}, ${key.deviceProfile}, ${key.vendor}, ${until}, ${reason})
      ON CONFLICT (app_id, device_profile, vendor) DO UPDATE SET
        reason = CASE WHEN excluded.until_ms > vendor_pauses.until_ms THEN excluded.reason ELSE vendor_pauses.reason END,
        until_ms = CASE WHEN excluded.until_ms > vendor_pauses.until_ms THEN excluded.until_ms ELSE vendor_pauses.until_ms END`.execute(
      this.db,
    );
  }
}
