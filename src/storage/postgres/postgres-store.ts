import type { Kysely } from 'kysely';
import type pg from 'pg';
import { SqlStore } from '../sql/sql-store.ts';
import { postgresDialect } from './dialect.ts';
import { PostgresOpsStore } from './ops-store.ts';

/** The SQL store on PostgreSQL; imports load through COPY, which needs the driver's own pool. */
export class PostgresStore extends SqlStore {
  override readonly ops: PostgresOpsStore;

  constructor(options: { db: Kysely<any>; pool: pg.Pool }) {
    super({ db: options.db, dialect: postgresDialect });
    this.ops = new PostgresOpsStore({ db: options.db, dialect: postgresDialect, pool: options.pool });
  }
}
