import type Database from 'better-sqlite3';
import type { SecretBox } from '../../lib/secret-box.ts';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { Readers, StoredJson, StoredObject } from '../../objects/types.ts';
import { isPlausibleId } from '../../objects/values.ts';
import type { ObjectRef } from '../store.ts';
import { SqlStore } from '../sql/sql-store.ts';
import { fromRow, type FoundJsonTuple } from '../sql/object-row.ts';
import { byRoles, readerNeedle, sqliteDialect } from './dialect.ts';
import { membersOf, rolePrincipals } from '../sql/roles.ts';
import { StatementsByText } from './statements-by-text.ts';

type ObjectTuple = [createdAt: number, updatedAt: number, data: string, acl: string | null];

/**
 * The statement of SqlStore.getObject with `readerCount` readers (none: the master key) and, when the
 * readers name a user, `roles`: the clause that reads through that user's roles. Class and id are not
 * selected: the row's equal the ones asked for (binary comparison).
 */
function objectByIdSql(readerCount: number, roles: string | null): string {
  const direct = Array.from({ length: readerCount }, () => 'instr(o.readers, ?) > 0');
  const readable = roles === null ? direct : [...direct, roles];
  return `SELECT o.created_at, o.updated_at, o.data, o.acl
    FROM objects o WHERE o.app_id = ? AND o.class_name = ? AND o.id = ?${readerCount > 0 ? ` AND (${readable.join(' OR ')})` : ''}`;
}

/** Stand-ins compiled into the roles clause once, replaced by the request's application and user when run. */
const appMark = '\u0000app';
const memberMark = '\u0000member';

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
  /** By number of readers: 0 (master key), 1 ("*"), 2 ("*" and the session's user, with its roles). */
  private readonly byId: Database.Statement<unknown[], ObjectTuple>[] = [];
  /** The roles clause of the statement (the same SQL as SqlStore's, readableSql) and its parameters. */
  private rolesClause: { text: string; parameters: readonly unknown[] } | undefined;
  /** Page statements by text, returning rows as arrays (preparedRows); apart from Kysely's, whose rows are objects. */
  private readonly rowStatements: StatementsByText<Database.Statement<unknown[], unknown[]>>;

  constructor(options: { db: Kysely<any>; database: Database.Database; secrets?: SecretBox }) {
    super({ db: options.db, dialect: sqliteDialect, secrets: options.secrets });
    this.database = options.database;
    this.rowStatements = new StatementsByText((text) => options.database.prepare<unknown[], unknown[]>(text).raw(true));
  }

  /**
   * The values sealed again must not survive in the file: SQLite leaves a row's old bytes in free
   * space (secure_delete zeroes them) and in the write-ahead log (a truncating checkpoint empties it).
   */
  override async resealSecrets(clearOnly: boolean): Promise<number> {
    this.database.pragma('secure_delete = ON');
    try {
      const changed = await super.resealSecrets(clearOnly);
      if (changed > 0) this.database.pragma('wal_checkpoint(TRUNCATE)');
      return changed;
    } finally {
      this.database.pragma('secure_delete = OFF');
    }
  }

  private rolesClauseSql(): { text: string; parameters: readonly unknown[] } {
    if (this.rolesClause === undefined) {
      const clause = byRoles(rolePrincipals(sqliteDialect, sql`${appMark}`, (targetId) => sql`${targetId} = ${memberMark}`));
      const compiled = clause.compile(this.db);
      this.rolesClause = { text: compiled.sql, parameters: compiled.parameters };
    }
    return this.rolesClause;
  }

  private statementFor(readerCount: number, roles: string | null): Database.Statement<unknown[], ObjectTuple> {
    const slot = readerCount * 2 + (roles === null ? 0 : 1);
    let statement = this.byId[slot];
    if (statement === undefined) {
      statement = this.database.prepare<unknown[], ObjectTuple>(objectByIdSql(readerCount, roles)).raw(true);
      if (readerCount <= 4) this.byId[slot] = statement;
    }
    return statement;
  }

  /** The row, null when there is none or the readers may not see it; undefined: not taken here (a transaction is open, several users), ask SqlStore. */
  private preparedGetById(ref: ObjectRef, readers: Readers): ObjectTuple | null | undefined {
    if (this.database.inTransaction || readers?.length === 0) return undefined;
    if (!isPlausibleId(ref.objectId)) return null;
    if (readers === null) return this.statementFor(0, null).get(ref.appId, ref.className, ref.objectId) ?? null;
    const members = membersOf(readers);
    if (members.length > 1) return undefined;
    const needles = readers.map(readerNeedle);
    const direct = this.statementFor(readers.length, null).get(ref.appId, ref.className, ref.objectId, ...needles) ?? null;
    // The roles clause only when the readers alone do not read the row: a statement holding it costs
    // ~100 µs a run on SQLite even where it is never reached (8 µs without), most of a get-by-id.
    if (direct !== null || members.length === 0) return direct;
    const roles = this.rolesClauseSql();
    const roleParameters = roles.parameters.map((p) => (p === appMark ? ref.appId : p === memberMark ? members[0] : p));
    const statement = this.statementFor(readers.length, roles.text);
    return statement.get(ref.appId, ref.className, ref.objectId, ...needles, ...roleParameters) ?? null;
  }

  /**
   * A statement's rows as arrays, run as a prepared statement straight on the connection (as preparedGetById, and
   * safe for the same reasons); undefined while a transaction is open. Kysely's path (its connection mutex, the
   * promises around it and a row object a row) was ~20 of a 20-object page's ~90 µs in its statement, the row
   * objects ~8 more (bench/RESULTS.md, Objects).
   */
  private preparedRows(statement: CompiledQuery): unknown[][] | undefined {
    if (this.database.inTransaction) return undefined;
    return this.rowStatements.get(statement.sql).all(statement.parameters as unknown[]);
  }

  protected override async foundJsonTuples(statement: CompiledQuery): Promise<FoundJsonTuple[]> {
    return (this.preparedRows(statement) as FoundJsonTuple[] | undefined) ?? super.foundJsonTuples(statement);
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
