import { sql, type Kysely } from 'kysely';
import type { SecretBox } from '../../lib/secret-box.ts';
import type pg from 'pg';
import type { Change, Readers, StoredObject, WriteOutcome } from '../../objects/types.ts';
import { isPlausibleId } from '../../objects/values.ts';
import type { ObjectRef } from '../store.ts';
import { fromRow, objectSelect, toRow, updateSet, type ObjectRow, type SelectedRow } from '../sql/object-row.ts';
import { SqlStore, writesIdentities } from '../sql/sql-store.ts';
import { rolePrincipals } from '../sql/roles.ts';
import { postgresDialect } from './dialect.ts';
import { PostgresAccountStore } from './account-store.ts';
import { LookupBatcher } from './lookup-batcher.ts';
import { RowWrites } from './row-writes.ts';
import { prepared } from './prepared.ts';
import { PostgresOpsStore } from './ops-store.ts';

/**
 * The SQL store on PostgreSQL; imports load through COPY, which needs the driver's own pool, and
 * single-row lookups arriving together share a statement (LookupBatcher): get-by-id here, sessions
 * in PostgresAccountStore.
 */
interface ObjectLookup {
  appId: string;
  className: string;
}

/** What a lookup asks: the id and the readers it reads with, as one JSON text (the batch's key). */
type LookupKey = string;

function lookupKey(objectId: string, readers: Readers): LookupKey {
  return JSON.stringify([objectId, readers]);
}

interface LookupRow extends SelectedRow {
  lookup: LookupKey;
  /** The row version: xmin, the transaction that wrote it (a later write of the row has another). */
  version: string;
}

export class PostgresStore extends SqlStore {
  override readonly ops: PostgresOpsStore;
  override readonly accounts: PostgresAccountStore;
  // One statement per class for the lookups of a turn, whoever makes them: each carries its own readers
  // into the statement, so two users' reads of one class share it (each user has a reader set of their own).
  private readonly byId = new LookupBatcher<ObjectLookup, LookupRow>({
    groupKey: ({ appId, className }) => `${appId}\u0000${className}`,
    select: ({ appId, className }, keys) => this.selectLookups(appId, className, keys),
    keyOf: (row) => row.lookup,
  });

  // The versioned writes of updateUnlocked made together go as one statement (RowWrites).
  private readonly rowWrites: RowWrites;

  constructor(options: { db: Kysely<any>; pool: pg.Pool; secrets?: SecretBox }) {
    super({ db: options.db, dialect: postgresDialect, secrets: options.secrets });
    this.ops = new PostgresOpsStore({ db: options.db, dialect: postgresDialect, pool: options.pool });
    this.accounts = new PostgresAccountStore({ db: options.db, dialect: postgresDialect });
    this.rowWrites = new RowWrites(options.db, (row, version) => this.writeVersioned(row, version));
  }

  override async getObject(ref: ObjectRef, readers: Readers): Promise<StoredObject | null> {
    if (!isPlausibleId(ref.objectId)) return null;
    const row = await this.byId.find({ appId: ref.appId, className: ref.className }, lookupKey(ref.objectId, readers));
    return row && fromRow(this.dialect, row);
  }

  /**
   * An update as two statements and no transaction: the row read with its version (through the batched
   * lookup, as the master key reads), then written only if that version is still the one there (RowWrites:
   * the writes made together go as one statement). A row written or deleted in between updates nothing; it
   * is read and tried once more, then the locked path (null) takes the update over, so
   * a write always applies to the row as it is when it lands: two concurrent increments both count, a
   * delete in between gives notFound. A user whose authData changes goes the locked path too (its
   * identities are written in the same transaction). The read is not under a lock, so a refusal reads
   * the row as it was committed just before: an order the locked path could also have given.
   */
  protected override async updateUnlocked<R>(ref: ObjectRef, change: Change<R>): Promise<WriteOutcome<R> | null> {
    // Two updates of one row made together (a user's two devices) then both go without a transaction.
    for (let attempt = 0; attempt < 2; attempt++) {
      const row = await this.byId.find({ appId: ref.appId, className: ref.className }, lookupKey(ref.objectId, null));
      if (row === null) return null;
      const current = fromRow(this.dialect, row);
      const next = change(current);
      if ('refused' in next) return { ok: false, reason: 'refused', refusal: next.refused };
      if (writesIdentities(ref, current, next)) return null;
      if (await this.rowWrites.write(toRow(ref.appId, next), row.version)) return { ok: true, object: next };
    }
    return null;
  }

  /** The row written over the one there if that one is still at `version` (one statement; RowWrites' write alone). */
  private async writeVersioned(row: ObjectRow, version: string): Promise<boolean> {
    const { rows } = await sql`${prepared('roost_object_update', sql`UPDATE objects SET ${updateSet(this.dialect, row)}
      WHERE app_id = ${row.app_id} AND class_name = ${row.class_name} AND id = ${row.id} AND xmin = ${version}::xid
      RETURNING 1 AS one`)}`.execute(this.db);
    return rows.length === 1;
  }

  /**
   * The rows the lookups find, each answered with its key: the ACL rule applied with the lookup's own
   * readers (null, the master key, reads everything), inside the statement as everywhere.
   */
  private async selectLookups(appId: string, className: string, keys: readonly LookupKey[]): Promise<LookupRow[]> {
    const readers = sql`(SELECT jsonb_array_elements_text(l.k::jsonb -> 1))`;
    // The user among a lookup's readers reads through its roles too (readableSql); '*' is no user's id.
    const roles = rolePrincipals(this.dialect, sql`${appId}`, (targetId) => sql`${targetId} IN ${readers}`);
    const { rows } = await sql<LookupRow>`${prepared('roost_object_lookups', sql`SELECT l.k AS lookup, o.xmin::text AS version, ${objectSelect}
      FROM unnest(${sql.val([...keys])}::text[]) AS l(k)
      JOIN objects o ON o.app_id = ${appId} AND o.class_name = ${className} AND o.id = (l.k::jsonb ->> 0)
      WHERE jsonb_typeof(l.k::jsonb -> 1) = 'null'
        OR o.readers && ARRAY${readers}
        OR o.readers && ARRAY(${roles})`)}`.execute(this.db);
    return rows;
  }
}
