import { sql, type Kysely } from 'kysely';
import type { ConsumedCode, IssueRefusal, IssuedCode, SmsLimits, SmsStore } from '../sms-store.ts';

/** Thrown inside the issuing transaction to roll it back; never leaves this file. */
class Refused extends Error {
  constructor(readonly reason: IssueRefusal) {
    super(reason);
  }
}

/**
 * SmsStore on SQL. sms_numbers holds one row per number whose conditional upsert both enforces
 * the interval and serialises concurrent sends to that number; sms_sends keeps one row per send
 * for the sliding daily count; sms_codes one live code per number and purpose.
 */
export class SqlSmsStore implements SmsStore {
  private readonly db: Kysely<any>;

  constructor(options: { db: Kysely<any> }) {
    this.db = options.db;
  }

  async issue(code: IssuedCode, now: number, limits: SmsLimits): Promise<IssueRefusal | null> {
    const { appId, phone } = code;
    try {
      await this.db.transaction().execute(async (trx) => {
        const claimed = await sql`INSERT INTO sms_numbers (app_id, phone, last_sent_at) VALUES (${appId}, ${phone}, ${now})
          ON CONFLICT (app_id, phone) DO UPDATE SET last_sent_at = excluded.last_sent_at
          WHERE sms_numbers.last_sent_at <= ${now - limits.minIntervalMs}`.execute(trx);
        if (Number(claimed.numAffectedRows ?? 0) === 0) throw new Refused('tooSoon');
        await sql`DELETE FROM sms_sends WHERE app_id = ${appId} AND phone = ${phone} AND sent_at <= ${now - limits.windowMs}`.execute(trx);
        const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM sms_sends
          WHERE app_id = ${appId} AND phone = ${phone}`.execute(trx);
        if (Number(rows[0]?.n ?? 0) >= limits.maxPerWindow) throw new Refused('dailyLimit');
        await sql`INSERT INTO sms_sends (app_id, phone, sent_at) VALUES (${appId}, ${phone}, ${now})`.execute(trx);
        await sql`INSERT INTO sms_codes (app_id, phone, purpose, digest, expires_at, attempts)
          VALUES (${appId}, ${phone}, ${code.purpose}, ${code.digest}, ${code.expiresAt}, 0)
          ON CONFLICT (app_id, phone, purpose) DO UPDATE SET digest = excluded.digest,
            expires_at = excluded.expires_at, attempts = 0`.execute(trx);
      });
      return null;
    } catch (error) {
      if (error instanceof Refused) return error.reason;
      throw error;
    }
  }

  async consume(
    appId: string,
    phone: string | null,
    purposes: readonly string[],
    digest: string,
    now: number,
    maxAttempts: number,
  ): Promise<ConsumedCode | null> {
    const purposeList = sql.join(purposes.map((purpose) => sql`${purpose}`));
    if (phone === null) {
      const { rows } = await sql<{ phone: string; purpose: string }>`SELECT phone, purpose FROM sms_codes
        WHERE app_id = ${appId} AND digest = ${digest} AND purpose IN (${purposeList}) AND expires_at > ${now}`.execute(this.db);
      if (rows.length !== 1) return null;
      phone = rows[0].phone;
    }
    const { rows } = await sql<{ purpose: string }>`SELECT purpose FROM sms_codes
      WHERE app_id = ${appId} AND phone = ${phone} AND digest = ${digest} AND purpose IN (${purposeList})
        AND expires_at > ${now}`.execute(this.db);
    for (const row of rows) {
      // The delete is the consumption: of two requests with one code, only one deletes the row.
      const deleted = await sql`DELETE FROM sms_codes WHERE app_id = ${appId} AND phone = ${phone}
        AND purpose = ${row.purpose} AND digest = ${digest} AND expires_at > ${now}`.execute(this.db);
      if (Number(deleted.numAffectedRows ?? 0) === 1) return { phone, purpose: row.purpose };
    }
    if (rows.length === 0) {
      await sql`UPDATE sms_codes SET attempts = attempts + 1
        WHERE app_id = ${appId} AND phone = ${phone} AND purpose IN (${purposeList})`.execute(this.db);
      await sql`DELETE FROM sms_codes WHERE app_id = ${appId} AND phone = ${phone}
        AND (attempts >= ${maxAttempts} OR expires_at <= ${now})`.execute(this.db);
    }
    return null;
  }

  // Failed guesses are rows of sms_sends under a key that is never a phone number (it has no "+").
  async recordGuess(appId: string, key: string, now: number, windowMs: number): Promise<number> {
    await sql`INSERT INTO sms_sends (app_id, phone, sent_at) VALUES (${appId}, ${key}, ${now})`.execute(this.db);
    await sql`DELETE FROM sms_sends WHERE app_id = ${appId} AND phone = ${key} AND sent_at <= ${now - windowMs}`.execute(this.db);
    return this.guesses(appId, key, now, windowMs);
  }

  async guesses(appId: string, key: string, now: number, windowMs: number): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM sms_sends
      WHERE app_id = ${appId} AND phone = ${key} AND sent_at > ${now - windowMs}`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }
}
