import type { SeenRow } from '../../objects/types.ts';
import { attemptsWithin, clearStatement, ringShift, SqlAccountStore, unlocked, userRecord, userSelect, type AttemptRing, type SessionRow, type UserRow } from '../sql/account-store.ts';
import type { LoginLookup, UserRecord } from '../account-store.ts';
import { sql } from 'kysely';
import { fromRow, objectSelect, promotedColumn } from '../sql/object-row.ts';
import { prepared } from './prepared.ts';
import { LookupBatcher } from './lookup-batcher.ts';

/**
 * True, and the statement's transaction commits without waiting for its WAL to reach the disk
 * (`synchronous_commit = off` for that transaction alone): a password login's two writes to login_attempts.
 * A crash of the database may forget the attempts of its last ~0.6 s (three wal_writer_delay); nothing
 * else is weakened (docs/operations.md, PostgreSQL).
 */
const asyncCommit = sql`set_config('synchronous_commit', 'off', true) = 'off'`;

/**
 * The account store on PostgreSQL: session lookups (every request that carries a session token)
 * arriving together share a statement, per application (LookupBatcher).
 */
export class PostgresAccountStore extends SqlAccountStore {
  private readonly bySession = new LookupBatcher<string, SessionRow & { version: string }>({
    groupKey: (appId) => appId,
    select: (appId, digests) => this.selectBySessions(appId, digests),
    keyOf: (row) => row.session_digest,
  });

  /** With the row's version (xmin), which a user's update of itself writes against (PostgresStore.updateUnlocked). */
  override async userBySession(appId: string, digest: string): Promise<SeenRow | null> {
    const row = await this.bySession.find(appId, digest);
    return row && { object: fromRow(this.dialect, row), version: row.version };
  }

  /**
   * The user's row read and the attempt counted in one statement (a write inside WITH): a round trip of the
   * three a password login made. The ring's columns are null when nothing was counted (locked): a counted
   * attempt's at7 is its time. Named (one per login field), as the clear below: planned once per connection.
   */
  override async findUserCountingAttempt(appId: string, lookup: LoginLookup, now: number, windowMs: number): Promise<{ record: UserRecord; counted: number | null } | null> {
    const { rows } = await sql<UserRow & AttemptRing>`${prepared(`roost_login_attempt_${promotedColumn('_User', lookup.field)}`, sql`WITH u AS (${userSelect(appId, lookup)}),
      a AS (INSERT INTO login_attempts (app_id, user_id, at7) SELECT ${appId}, u.id, ${now} FROM u WHERE ${asyncCommit} ${ringShift(unlocked(now, windowMs))})
      SELECT u.*, a.* FROM u LEFT JOIN a ON true`)}`.execute(this.db);
    const row = rows[0];
    if (!row) return null;
    return { record: userRecord(this.dialect, row), counted: row.at7 === null ? null : attemptsWithin(row, now, windowMs) };
  }

  /** A right login's clear, named: planning was most of its database time. */
  override async clearLoginFailures(appId: string, userId: string): Promise<void> {
    await sql`${prepared('roost_login_clear', sql`${clearStatement(appId, userId)} AND ${asyncCommit}`)}`.execute(this.db);
  }

  /** One text for any number of digests, so it runs as a prepared statement. */
  protected override async selectBySessions(appId: string, digests: readonly string[]): Promise<Array<SessionRow & { version: string }>> {
    const { rows } = await sql<SessionRow & { version: string }>`${prepared('roost_session_lookups', sql`SELECT ${objectSelect}, o.session_digest, o.xmin::text AS version
      FROM objects o WHERE app_id = ${appId} AND session_digest = ANY(${sql.val([...digests])}::text[])
      AND class_name = '_User'`)}`.execute(this.db);
    return rows;
  }
}
