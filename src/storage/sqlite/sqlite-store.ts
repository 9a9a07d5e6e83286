import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Readers, StoredJson, StoredObject } from '../../objects/types.ts';
import { isPlausibleId } from '../../objects/values.ts';
import type { ObjectRef } from '../store.ts';
import { SqlStore } from '../sql/sql-store.ts';
import { fromRow } from '../sql/object-row.ts';
import { readerNeedle, sqliteDialect } from './dialect.ts';

type ObjectTuple = [createdAt: number, updatedAt: number, data: string, acl: string | null];

/**
 * The statement of SqlStore.getObject with `readerCount` readers (none: the master key). Class and
 * id are not selected: the row's equal the ones asked for (binary comparison).
 */
function objectByIdSql(readerCount: number): string {
  const readable = Array.from({ length: readerCount }, () => 'instr(o.readers, ?) > 0').join(' OR ');
  return `SELECT o.created_at, o.updated_at, o.data, o.acl
    FROM objects o WHERE o.app_id = ? AND o.class_name = ? AND o.id = ?${readerCount > 0 ? ` AND (${readable})` : ''}`;
}

/**
 * The SQL store on SQLite, with get-by-id run as a prepared statement straight on the
 * connection (preparedGetById): building and compiling the Kysely query, its connection mutex
 * and row objects were most of a get-by-id's storage cost (16-23 -> 8-11 µs, bench/RESULTS.md,
 * Objects). test/storage/get-by-id-paths.test.ts holds its answers to SqlStore's for the same rows.
 *
 * Safe because better-sqlite3 runs a statement synchronously, so nothing interleaves with it,
 * and it is only done while no transaction is open on the connection: inside one (Kysely's
 * transactions span awaits), the read would see that transaction's uncommitted rows, so it
 * waits for the connection through SqlStore's path.
 */
export class SqliteStore extends SqlStore {
  private readonly database: Database.Database;
  /** By number of readers: 0 (master key), 1 ("*"), 2 ("*" and the session's user). */
  private readonly byId: Database.Statement<unknown[], ObjectTuple>[] = [];

  constructor(options: { db: Kysely<any>; database: Database.Database }) {
    super({ db: options.db, dialect: sqliteDialect });
    this.database = options.database;
  }

  private statementFor(readerCount: number): Database.Statement<unknown[], ObjectTuple> {
    let statement = this.byId[readerCount];
    if (statement === undefined) {
      statement = this.database.prepare<unknown[], ObjectTuple>(objectByIdSql(readerCount)).raw(true);
      if (readerCount <= 4) this.byId[readerCount] = statement;
    }
    return statement;
  }

  /** The row, null when there is none or the readers may not see it; undefined: not taken here (a transaction is open), ask SqlStore. */
  private preparedGetById(ref: ObjectRef, readers: Readers): ObjectTuple | null | undefined {
    if (this.database.inTransaction || readers?.length === 0) return undefined;
    if (!isPlausibleId(ref.objectId)) return null;
    const statement = this.statementFor(readers === null ? 0 : readers.length);
    const row =
      readers === null
        ? statement.get(ref.appId, ref.className, ref.objectId)
        : statement.get(ref.appId, ref.className, ref.objectId, ...readers.map(readerNeedle));
    return row ?? null;
  }

  override async getObject(ref: ObjectRef, readers: Readers): Promise<StoredObject | null> {
    const row = this.preparedGetById(ref, readers);
    if (row === undefined) return super.getObject(ref, readers);
    if (row === null) return null;
    const [created_at, updated_at, data, acl] = row;
    return fromRow(this.dialect, { class_name: ref.className, id: ref.objectId, created_at, updated_at, data, acl });
  }

  /**
   * The stored text as it is: objects.data holds JSON.stringify's output (SqlStore's writes and the
   * import; only push's json_set on _Installation rows writes it otherwise, and those are never
   * sent this way), so it equals what parsing and stringifying it again would give.
   */
  override async getObjectJson(ref: ObjectRef, readers: Readers): Promise<StoredJson | null> {
    const row = this.preparedGetById(ref, readers);
    if (row === undefined) return super.getObjectJson(ref, readers);
    if (row === null) return null;
    const dataJson = row[2].startsWith('{') ? row[2] : JSON.stringify(JSON.parse(row[2]) ?? {});
    return { createdAt: Number(row[0]), updatedAt: Number(row[1]), dataJson };
  }
}
