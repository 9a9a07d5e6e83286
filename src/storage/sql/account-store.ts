import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { SeenRow, WriteOutcome } from '../../objects/types.ts';
import type { AccountStore, LoginLookup, SessionSeal, UserLookup, UserRecord } from '../account-store.ts';
import type { SqlDialect } from './dialect.ts';
import { fromRow, insertRows, objectSelect, promotedColumn, takenOrThrow, toRow, type SelectedRow } from './object-row.ts';
import { isPlausibleId } from '../../objects/values.ts';

export interface SessionRow extends SelectedRow {
  session_digest: string;
}

export interface UserRow extends SelectedRow {
  password_hash: string | null;
  session_cipher: string | null;
}

/** The statement reading a user's row with its secrets (findUser). */
export function userSelect(appId: string, lookup: UserLookup): RawBuilder<unknown> {
  const match = 'userId' in lookup ? sql`id = ${lookup.userId}` : sql`${sql.ref(promotedColumn('_User', lookup.field)!)} = ${lookup.value}`;
  return sql`SELECT ${objectSelect}, o.password_hash, o.session_cipher
    FROM objects o WHERE app_id = ${appId} AND class_name = '_User' AND ${match}`;
}

export function userRecord(dialect: SqlDialect, row: UserRow): UserRecord {
  return { user: fromRow(dialect, row), passwordHash: row.password_hash, sessionCipher: row.session_cipher };
}

/**
 * A user's last attempts, oldest first (at1), as epoch ms: a fixed ring of `lockingAttempts`
 * columns, so counting an attempt and checking the lock is one upsert on one row (the row lock
 * of ON CONFLICT DO UPDATE orders concurrent attempts on PostgreSQL; SQLite runs a statement alone).
 */
const ring = ['at1', 'at2', 'at3', 'at4', 'at5', 'at6', 'at7'];

export type AttemptRing = Record<string, number | string | null>;

/** What follows an insert of one attempt (at7) into login_attempts: the ring shifted unless `condition` refuses, and returned. */
export function ringShift(condition: RawBuilder<unknown>): RawBuilder<unknown> {
  const shift = sql.join(ring.slice(0, -1).map((column, i) => sql`${sql.ref(column)} = ${sql.ref(`login_attempts.${ring[i + 1]}`)}`));
  return sql`ON CONFLICT (app_id, user_id) DO UPDATE SET ${shift}, at7 = excluded.at7 ${condition}
    RETURNING ${sql.join(ring.map((column) => sql.ref(column)))}`;
}

/** beginLoginAttempt's condition. Locked: the ring is full, spans less than a window, and its last attempt is within a window of now. */
export function unlocked(now: number, windowMs: number): RawBuilder<unknown> {
  return sql`WHERE NOT (login_attempts.at1 IS NOT NULL AND login_attempts.at1 > login_attempts.at7 - ${windowMs}
    AND login_attempts.at7 > ${now - windowMs})`;
}

/** clearLoginFailures' statement. */
export function clearStatement(appId: string, userId: string): RawBuilder<unknown> {
  return sql`DELETE FROM login_attempts WHERE app_id = ${appId} AND user_id = ${userId}`;
}

/** The attempts of a shifted ring within `windowMs` of `now`: beginLoginAttempt's count. */
export function attemptsWithin(row: AttemptRing, now: number, windowMs: number): number {
  return ring.filter((column) => row[column] !== null && Number(row[column]) > now - windowMs).length;
}

/**
 * AccountStore on SQL. The secrets live in their own columns of the `_User` row
 * (password_hash, session_digest, session_cipher), which no object query ever selects;
 * a user's recent login attempts are one row of login_attempts.
 */
export class SqlAccountStore implements AccountStore {
  protected readonly db: Kysely<any>;
  protected readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async findUser(appId: string, lookup: UserLookup): Promise<UserRecord | null> {
    // An id no server issued names no user; PostgreSQL would refuse some (a NUL byte) with an error.
    if ('userId' in lookup && !isPlausibleId(lookup.userId)) return null;
    const { rows } = await sql<UserRow>`${userSelect(appId, lookup)}`.execute(this.db);
    const row = rows[0];
    return row ? userRecord(this.dialect, row) : null;
  }

  async userBySession(appId: string, digest: string): Promise<SeenRow | null> {
    const [row] = await this.selectBySessions(appId, [digest]);
    return row ? { object: fromRow(this.dialect, row), version: null } : null;
  }

  /** The users among `digests` of one application (one statement, any order). */
  protected async selectBySessions(appId: string, digests: readonly string[]): Promise<SessionRow[]> {
    const { rows } = await sql<SessionRow>`SELECT ${objectSelect}, o.session_digest
      FROM objects o WHERE app_id = ${appId} AND session_digest IN (${sql.join(digests.map((d) => sql`${d}`))})
      AND class_name = '_User'`.execute(this.db);
    return rows;
  }

  async setSession(appId: string, userId: string, session: SessionSeal, updatedAt?: number): Promise<boolean> {
    const moved = updatedAt === undefined ? sql`` : sql`, updated_at = ${updatedAt}`;
    const result = await sql`UPDATE objects SET session_digest = ${session.digest}, session_cipher = ${session.cipher}${moved}
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

  async beginLoginAttempt(appId: string, userId: string, now: number, windowMs: number): Promise<number | null> {
    const row = await this.shiftIn(appId, userId, now, unlocked(now, windowMs));
    return row && attemptsWithin(row, now, windowMs);
  }

  /** Two statements here (SQLite has no writes in WITH); PostgresAccountStore makes them one. */
  async findUserCountingAttempt(appId: string, lookup: LoginLookup, now: number, windowMs: number): Promise<{ record: UserRecord; counted: number | null } | null> {
    const record = await this.findUser(appId, lookup);
    return record && { record, counted: await this.beginLoginAttempt(appId, record.user.objectId, now, windowMs) };
  }

  async loginLockedUntil(appId: string, userId: string, now: number, windowMs: number): Promise<number> {
    const { rows } = await sql<{ at1: number | string | null; at7: number | string | null }>`SELECT at1, at7 FROM login_attempts
      WHERE app_id = ${appId} AND user_id = ${userId}`.execute(this.db);
    const row = rows[0];
    if (!row || row.at1 === null || row.at7 === null) return 0;
    const [first, last] = [Number(row.at1), Number(row.at7)];
    return first > last - windowMs && last > now - windowMs ? last + windowMs : 0;
  }

  async recordLoginFailure(appId: string, userId: string, at: number): Promise<void> {
    await this.shiftIn(appId, userId, at, sql``);
  }

  /** Appends `at` to the user's ring (the oldest drops out) unless `condition` refuses; the new ring, or null. */
  private async shiftIn(appId: string, userId: string, at: number, condition: RawBuilder<unknown>) {
    const { rows } = await sql<AttemptRing>`INSERT INTO login_attempts (app_id, user_id, at7) VALUES (${appId}, ${userId}, ${at})
      ${ringShift(condition)}`.execute(this.db);
    return rows[0] ?? null;
  }

  async clearLoginFailures(appId: string, userId: string): Promise<void> {
    await clearStatement(appId, userId).execute(this.db);
  }
}
