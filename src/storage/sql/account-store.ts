import { sql, type Kysely } from 'kysely';
import type { Acl, StoredObject, WriteOutcome } from '../../objects/types.ts';
import type { AccountStore, AttemptOutcome, LoginAttempt, SessionSeal, UserLookup, UserRecord } from '../account-store.ts';
import type { SqlDialect } from './dialect.ts';
import { serialiseOn } from './serialise.ts';
import { isPlausibleId } from '../../objects/values.ts';

interface UserRow {
  id: string;
  created_at: number | string;
  updated_at: number | string;
  data: unknown;
  acl: unknown;
  password_hash: string | null;
  session_cipher: string | null;
}

const loginColumns = { username: 'username', email: 'email', mobilePhoneNumber: 'mobile_phone' } as const;

function readersOf(acl: Acl | null): string[] {
  if (acl === null) return ['*'];
  return Object.entries(acl)
    .filter(([, permission]) => permission.read === true)
    .map(([principal]) => principal);
}

function text(data: Record<string, unknown>, key: string): string | null {
  return typeof data[key] === 'string' ? (data[key] as string) : null;
}

/**
 * AccountStore on SQL. The secrets live in their own columns of the `_User` row
 * (password_hash, session_digest, session_cipher), which no object query ever selects;
 * failed logins are rows of login_failures, one per failure (or attempt not yet settled), so
 * counting them is exact.
 */
export class SqlAccountStore implements AccountStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  private toUser(row: UserRow): StoredObject {
    return {
      className: '_User',
      objectId: row.id,
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
      acl: this.dialect.decodeJson<Acl | null>(row.acl),
      data: this.dialect.decodeJson(row.data) ?? {},
    };
  }

  async insertUser(
    appId: string,
    user: StoredObject,
    secrets: { passwordHash: string; session: SessionSeal },
  ): Promise<WriteOutcome> {
    const d = this.dialect;
    try {
      await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, acl, readers,
          username, email, mobile_phone, password_hash, session_digest, session_cipher)
        VALUES (${appId}, '_User', ${user.objectId}, ${user.createdAt}, ${user.updatedAt},
          ${d.encodeJson(user.data)}, ${d.encodeJson(user.acl)}, ${d.encodeReaders(readersOf(user.acl))},
          ${text(user.data, 'username')}, ${text(user.data, 'email')}, ${text(user.data, 'mobilePhoneNumber')},
          ${secrets.passwordHash}, ${secrets.session.digest}, ${secrets.session.cipher})`.execute(this.db);
      return { ok: true, object: user };
    } catch (error) {
      const field = d.uniqueViolation(error);
      if (field) return { ok: false, reason: 'taken', field };
      throw error;
    }
  }

  async findUser(appId: string, lookup: UserLookup): Promise<UserRecord | null> {
    // An id no server issued names no user; PostgreSQL would refuse some (a NUL byte) with an error.
    if ('userId' in lookup && !isPlausibleId(lookup.userId)) return null;
    const match = 'userId' in lookup ? sql`id = ${lookup.userId}` : sql`${sql.ref(loginColumns[lookup.field])} = ${lookup.value}`;
    const { rows } = await sql<UserRow>`SELECT id, created_at, updated_at, data, acl, password_hash, session_cipher
      FROM objects WHERE app_id = ${appId} AND class_name = '_User' AND ${match}`.execute(this.db);
    const row = rows[0];
    return row ? { user: this.toUser(row), passwordHash: row.password_hash, sessionCipher: row.session_cipher } : null;
  }

  async userBySession(appId: string, digest: string): Promise<StoredObject | null> {
    const { rows } = await sql<UserRow>`SELECT id, created_at, updated_at, data, acl, NULL AS password_hash,
        NULL AS session_cipher
      FROM objects WHERE app_id = ${appId} AND session_digest = ${digest} AND class_name = '_User'`.execute(this.db);
    return rows[0] ? this.toUser(rows[0]) : null;
  }

  async setSession(appId: string, userId: string, session: SessionSeal): Promise<boolean> {
    const result = await sql`UPDATE objects SET session_digest = ${session.digest}, session_cipher = ${session.cipher}
      WHERE app_id = ${appId} AND class_name = '_User' AND id = ${userId}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async setPassword(
    appId: string,
    userId: string,
    change: { passwordHash: string; updatedAt: number; session?: SessionSeal; expectedHash?: string | null },
  ): Promise<boolean> {
    const session = change.session
      ? sql`, session_digest = ${change.session.digest}, session_cipher = ${change.session.cipher}`
      : sql``;
    const expected =
      change.expectedHash === undefined
        ? sql``
        : change.expectedHash === null
          ? sql` AND password_hash IS NULL`
          : sql` AND password_hash = ${change.expectedHash}`;
    const result = await sql`UPDATE objects SET password_hash = ${change.passwordHash}, updated_at = ${change.updatedAt}${session}
      WHERE app_id = ${appId} AND class_name = '_User' AND id = ${userId}${expected}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  async beginLoginAttempt(
    appId: string,
    userId: string,
    now: number,
    windowMs: number,
    threshold: number,
  ): Promise<LoginAttempt | null> {
    // The user's attempts queue on one key, on every node, so each sees the rows of those before
    // it; the lock check and the insert are then one statement: no row when some failure of the
    // last window was preceded, within a window, by more than `threshold` (itself included).
    const { rows } = await this.db.transaction().execute(async (trx) => {
      await serialiseOn(trx, this.dialect, `login:${appId}:${userId}`);
      return sql<{ id: number | string; before: number | string }>`
        INSERT INTO login_failures (app_id, user_id, at)
        SELECT ${appId}, ${userId}, ${now}
        WHERE NOT EXISTS (SELECT 1 FROM login_failures f
          WHERE f.app_id = ${appId} AND f.user_id = ${userId} AND f.at > ${now - windowMs}
            AND (SELECT count(*) FROM login_failures g
                 WHERE g.app_id = f.app_id AND g.user_id = f.user_id
                   AND g.at > f.at - ${windowMs} AND g.at <= f.at) > ${threshold})
        RETURNING id, (SELECT count(*) FROM login_failures b
          WHERE b.app_id = ${appId} AND b.user_id = ${userId} AND b.at > ${now - windowMs}
            AND b.id < login_failures.id) AS before`.execute(trx);
    });
    const row = rows[0];
    return row ? { id: String(row.id), before: Number(row.before) } : null;
  }

  async settleLoginAttempt(
    appId: string,
    userId: string,
    attemptId: string,
    outcome: AttemptOutcome,
    forgetBefore: number,
  ): Promise<void> {
    const which = {
      right: sql`id <= ${attemptId}`,
      wrong: sql`at < ${forgetBefore}`,
      void: sql`id = ${attemptId}`,
    }[outcome];
    await sql`DELETE FROM login_failures WHERE app_id = ${appId} AND user_id = ${userId} AND ${which}`.execute(this.db);
  }

  async recordLoginFailure(appId: string, userId: string, at: number, keepMs: number): Promise<void> {
    await sql`INSERT INTO login_failures (app_id, user_id, at) VALUES (${appId}, ${userId}, ${at})`.execute(this.db);
    await sql`DELETE FROM login_failures WHERE app_id = ${appId} AND user_id = ${userId} AND at < ${at - keepMs}`.execute(
      this.db,
    );
  }

  async clearLoginFailures(appId: string, userId: string): Promise<void> {
    await sql`DELETE FROM login_failures WHERE app_id = ${appId} AND user_id = ${userId}`.execute(this.db);
  }
}
