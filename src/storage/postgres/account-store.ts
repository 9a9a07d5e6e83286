import type { StoredObject } from '../../objects/types.ts';
import { SqlAccountStore, type SessionRow } from '../sql/account-store.ts';
import { sql } from 'kysely';
import { fromRow, objectSelect } from '../sql/object-row.ts';
import { prepared } from './prepared.ts';
import { LookupBatcher } from './lookup-batcher.ts';

/**
 * The account store on PostgreSQL: session lookups (every request that carries a session token)
 * arriving together share a statement, per application (LookupBatcher).
 */
export class PostgresAccountStore extends SqlAccountStore {
  private readonly bySession = new LookupBatcher<string, SessionRow>({
    groupKey: (appId) => appId,
    select: (appId, digests) => this.selectBySessions(appId, digests),
    keyOf: (row) => row.session_digest,
  });

  override async userBySession(appId: string, digest: string): Promise<StoredObject | null> {
    const row = await this.bySession.find(appId, digest);
    return row && fromRow(this.dialect, row);
  }

  /** One text for any number of digests, so it runs as a prepared statement. */
  protected override async selectBySessions(appId: string, digests: readonly string[]): Promise<SessionRow[]> {
    const { rows } = await sql<SessionRow>`${prepared('roost_session_lookups', sql`SELECT ${objectSelect}, o.session_digest
      FROM objects o WHERE app_id = ${appId} AND session_digest = ANY(${sql.val([...digests])}::text[])
      AND class_name = '_User'`)}`.execute(this.db);
    return rows;
  }
}
