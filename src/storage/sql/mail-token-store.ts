import { sql, type Kysely } from 'kysely';
import type { MailTokenInfo, MailTokenKind, MailTokenRow, MailTokenStore } from '../mail-token-store.ts';
import type { SqlDialect } from './dialect.ts';
import { serialiseOn } from './serialise.ts';

interface TokenRow {
  app_id: string;
  user_id: string;
  email: string;
  expires_at: number | string;
  used_at: number | string | null;
}

function toInfo(row: TokenRow): MailTokenInfo {
  return {
    appId: row.app_id,
    userId: row.user_id,
    email: row.email,
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
  };
}

/** MailTokenStore on SQL (table mail_tokens); the same statements serve SQLite and PostgreSQL. */
export class SqlMailTokenStore implements MailTokenStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async insertWithinLimit(token: MailTokenRow, limit: { since: number; max: number }, forgetBefore: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // Held to the commit, so the next request's count sees this insert.
      await serialiseOn(trx, this.dialect, `mail-limit:${token.kind}:${token.appId}:${token.userId}`);
      const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM mail_tokens
        WHERE app_id = ${token.appId} AND user_id = ${token.userId} AND kind = ${token.kind}
        AND created_at >= ${limit.since}`.execute(trx);
      if (Number(rows[0]?.n ?? 0) >= limit.max) return false;
      await sql`DELETE FROM mail_tokens WHERE app_id = ${token.appId} AND user_id = ${token.userId}
        AND kind = ${token.kind} AND expires_at < ${forgetBefore}`.execute(trx);
      await sql`INSERT INTO mail_tokens (digest, kind, app_id, user_id, email, created_at, expires_at, used_at)
        VALUES (${token.digest}, ${token.kind}, ${token.appId}, ${token.userId}, ${token.email},
          ${token.createdAt}, ${token.expiresAt}, NULL)`.execute(trx);
      return true;
    });
  }

  async consume(kind: MailTokenKind, digest: string, now: number): Promise<MailTokenInfo | null> {
    const { rows } = await sql<TokenRow>`UPDATE mail_tokens SET used_at = ${now}
      WHERE digest = ${digest} AND kind = ${kind} AND used_at IS NULL AND expires_at > ${now}
      RETURNING app_id, user_id, email, expires_at, used_at`.execute(this.db);
    return rows[0] ? toInfo(rows[0]) : null;
  }

  async find(kind: MailTokenKind, digest: string): Promise<MailTokenInfo | null> {
    const { rows } = await sql<TokenRow>`SELECT app_id, user_id, email, expires_at, used_at FROM mail_tokens
      WHERE digest = ${digest} AND kind = ${kind}`.execute(this.db);
    return rows[0] ? toInfo(rows[0]) : null;
  }

  async revokeAll(kind: MailTokenKind, appId: string, userId: string, now: number): Promise<void> {
    await sql`UPDATE mail_tokens SET used_at = ${now}
      WHERE app_id = ${appId} AND user_id = ${userId} AND kind = ${kind} AND used_at IS NULL`.execute(this.db);
  }
}
