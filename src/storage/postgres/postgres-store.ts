import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Readers, StoredObject } from '../../objects/types.ts';
import { isPlausibleId } from '../../objects/values.ts';
import type { ObjectRef } from '../store.ts';
import { fromRow } from '../sql/object-row.ts';
import { SqlStore } from '../sql/sql-store.ts';
import { postgresDialect } from './dialect.ts';
import { GetByIdBatcher } from './get-by-id-batch.ts';
import { PostgresOpsStore } from './ops-store.ts';

/**
 * The SQL store on PostgreSQL; imports load through COPY, which needs the driver's own pool, and
 * get-by-id lookups arriving together share a statement (GetByIdBatcher).
 */
export class PostgresStore extends SqlStore {
  override readonly ops: PostgresOpsStore;
  private readonly byId = new GetByIdBatcher((appId, className, ids, readers) => this.selectByIds(appId, className, ids, readers));

  constructor(options: { db: Kysely<any>; pool: pg.Pool }) {
    super({ db: options.db, dialect: postgresDialect });
    this.ops = new PostgresOpsStore({ db: options.db, dialect: postgresDialect, pool: options.pool });
  }

  override async getObject(ref: ObjectRef, readers: Readers): Promise<StoredObject | null> {
    if (!isPlausibleId(ref.objectId)) return null;
    const row = await this.byId.find(ref, readers);
    return row && fromRow(this.dialect, row);
  }
}
