import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Readers, StoredObject } from '../../objects/types.ts';
import { isPlausibleId } from '../../objects/values.ts';
import type { ObjectRef } from '../store.ts';
import { fromRow, type SelectedRow } from '../sql/object-row.ts';
import { SqlStore } from '../sql/sql-store.ts';
import { postgresDialect } from './dialect.ts';
import { PostgresAccountStore } from './account-store.ts';
import { LookupBatcher } from './lookup-batcher.ts';
import { PostgresOpsStore } from './ops-store.ts';

/**
 * The SQL store on PostgreSQL; imports load through COPY, which needs the driver's own pool, and
 * single-row lookups arriving together share a statement (LookupBatcher): get-by-id here, sessions
 * in PostgresAccountStore.
 */
interface ObjectLookup {
  appId: string;
  className: string;
  readers: Readers;
}

export class PostgresStore extends SqlStore {
  override readonly ops: PostgresOpsStore;
  override readonly accounts: PostgresAccountStore;
  private readonly byId = new LookupBatcher<ObjectLookup, SelectedRow>({
    // The readers rule is inside the statement, so only lookups with the same readers share one.
    groupKey: ({ appId, className, readers }) => `${appId}\u0000${className}\u0000${readers === null ? '' : `\u0001${readers.join('\u0000')}`}`,
    select: ({ appId, className, readers }, ids) => this.selectByIds(appId, className, ids, readers),
    keyOf: (row) => row.id,
  });

  constructor(options: { db: Kysely<any>; pool: pg.Pool }) {
    super({ db: options.db, dialect: postgresDialect });
    this.ops = new PostgresOpsStore({ db: options.db, dialect: postgresDialect, pool: options.pool });
    this.accounts = new PostgresAccountStore({ db: options.db, dialect: postgresDialect });
  }

  override async getObject(ref: ObjectRef, readers: Readers): Promise<StoredObject | null> {
    if (!isPlausibleId(ref.objectId)) return null;
    const row = await this.byId.find({ appId: ref.appId, className: ref.className, readers }, ref.objectId);
    return row && fromRow(this.dialect, row);
  }
}
