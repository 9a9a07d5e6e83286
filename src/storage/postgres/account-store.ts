import type { StoredObject } from '../../objects/types.ts';
import { SqlAccountStore, type SessionRow } from '../sql/account-store.ts';
import { fromRow } from '../sql/object-row.ts';
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
}
