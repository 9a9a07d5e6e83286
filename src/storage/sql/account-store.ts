import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { StoredObject, WriteOutcome } from '../../objects/types.ts';
import type { AccountStore, SessionSeal, UserLookup, UserRecord } from '../account-store.ts';
import type { SqlDialect } from './dialect.ts';
import { fromRow, insertRows, objectSelect, promotedColumn, takenOrThrow, toRow, type SelectedRow } from './object-row.ts';
import { isPlausibleId } from '../../objects/values.ts';

export interface SessionRow extends SelectedRow {
  session_digest: string;
}

interface UserRow extends SelectedRow {
  password_hash: string | null;
  session_cipher: string | null;
}

/**
 * A user's last attempts, oldest first (at1), as epoch ms: a fixed ring of `lockingAttempts`
 * columns, so counting an attempt and checking the lock is one upsert on one row (the row lock
 * of ON CONFLICT DO UPDATE orders concurrent attempts on PostgreSQL; SQLite runs a statement alone).
 */
const ring = ['at1', 'at2', 'at3', 'at4', 'at5', 'at6', 'at7'];

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
    const match = 'userId' in lookup ? sql`id = ${lookup.userId}` : sql`${sql.ref(promotedColumn('_User', lookup.field)!)} = ${lookup.value}`;
    const { rows } = await sql<UserRow>`SELECT ${objectSelect}, o.password_hash, o.session_cipher
      FROM objects o WHERE app_id = ${appId} AND class_name = '_User' AND ${match}`.execute(this.db);
    const row = rows[0];
    return row ? { user: fromRow(this.dialect, row), passwordHash: row.password_hash, sessionCipher: row.session_cipher } : null;
  }

  async userBySession(appId: string, digest: string): Promise<StoredObject | null> {
    const [row] = await this.selectBySessions(appId, [digest]);
    return row ? fromRow(this.dialect, row) : null;
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
    // Locked: the ring is full, spans less than a window, and its last attempt is within a window of now.
    const open = sql`WHERE NOT (login_attempts.at1 IS NOT NULL AND login_attempts.at1 > login_attempts.at7 - ${windowMs}
      AND login_attempts.at7 > ${now - windowMs})`;
    const row = await this.shiftIn(appId, userId, now, open);
    if (!row) return null;
    return ring.filter((column) => row[column] !== null && Number(row[column]) > now - windowMs).length;
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
    const shift = sql.join(
      ring.slice(0, -1).map((column, i) => sql`${sql.ref(column)} = ${sql.ref(`login_attempts.${ring[i + 1]}`)}`),
    );
    const { rows } = await sql<Record<string, number | string | null>>`
      INSERT INTO login_attempts (app_id, user_id, at7) VALUES (${appId}, ${userId}, ${at})
      ON CONFLICT (app_id, user_id) DO UPDATE SET ${shift}, at7 = excluded.at7 ${condition}
      RETURNING ${sql.join(ring.map((column) => sql.ref(column)))}`.execute(this.db);
    return rows[0] ?? null;
  }

  async clearLoginFailures(appId: string, userId: string): Promise<void> {
    await sql`DELETE FROM login_attempts WHERE app_id = ${appId} AND user_id = ${userId}`.execute(this.db);
  }
}
