import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { SecretBox } from '../../lib/secret-box.ts';
import type pg from 'pg';
import type { Change, FindQuery, FoundJson, Readers, SeenRow, StoredJson, StoredObject, WriteOutcome } from '../../objects/types.ts';
import { isPlausibleId } from '../../objects/values.ts';
import type { ObjectRef } from '../store.ts';
import { fromRow, objectSelect, promotedColumn, toRow, updateSet, type ObjectRow, type PromotedColumn, type SelectedRow, type FoundJsonTuple } from '../sql/object-row.ts';
import { SqlStore, writesIdentities } from '../sql/sql-store.ts';
import type { LevelRefs } from '../sql/include-levels.ts';
import { rolePrincipals } from '../sql/roles.ts';
import { postgresDialect } from './dialect.ts';
import { PostgresAccountStore } from './account-store.ts';
import { LookupBatcher } from './lookup-batcher.ts';
import { RowWrites } from './row-writes.ts';
import { isPreparedShape, prepared } from './prepared.ts';
import { PageBatcher, type PageRun } from './page-batcher.ts';
import { PostgresOpsStore } from './ops-store.ts';

/**
 * The SQL store on PostgreSQL; imports load through COPY, which needs the driver's own pool, and
 * single-row lookups arriving together share a statement (LookupBatcher): get-by-id here, sessions
 * in PostgresAccountStore.
 */
interface ObjectLookup {
  appId: string;
  className: string;
  /** The column a unique index holds that the lookup matches: the id (get-by-id), or a promoted field. */
  column: 'id' | PromotedColumn;
  /** The master key's lookups (no readers), which read every row: a statement without the readers' clauses. */
  all: boolean;
  /** getObjectJson's lookups: the data as jsonb's text (dialect.storedText), the ACL and class not read. */
  text?: boolean;
}

/** What a lookup asks: the value and the readers it reads with, as one JSON text (the batch's key). */
type LookupKey = string;

function lookupKey(value: string, readers: Readers): LookupKey {
  return JSON.stringify([value, readers]);
}

/**
 * A page that is a lookup: a lone equality of a string on the id or a promoted field (username, email,
 * mobilePhoneNumber, installationId), whose unique index holds at most one row with the application, from the
 * start of the page (skip 0) in the default order: the master key's `where={"username":…}`. Null for any other
 * page, and for a value the lookup's JSON key cannot carry as the page's parameter does (a NUL, a lone surrogate).
 */
function uniqueLookup(appId: string, className: string, query: FindQuery): { scope: ObjectLookup; value: string } | null {
  if (query.skip !== 0 || query.limit < 1 || query.order.length > 0) return null;
  const where = query.where.op === 'and' && query.where.items.length === 1 ? query.where.items[0] : query.where;
  if (where.op !== 'eq' || where.path.length !== 1 || typeof where.value !== 'string') return null;
  const [field] = where.path;
  const column = field === 'objectId' ? 'id' : promotedColumn(className, field);
  if (column === undefined || (column === 'id' && !isPlausibleId(where.value)) || !carriedAsJson(where.value)) return null;
  return { scope: { appId, className, column, all: query.readers === null }, value: where.value };
}

/** Whether PostgreSQL reads `value` back from JSON text as the same text (no NUL, no lone surrogate). */
function carriedAsJson(value: string): boolean {
  return !/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value);
}

/** getObjectJson's lookup columns: the data as jsonb's text (the whole row, objectSelect, is getObject's). */
const textSelect = sql`o.created_at, o.updated_at, ${postgresDialect.storedText(sql`o.data`)} AS data`;

/** Whose include levels share a statement: one application's, read by the same readers. */
interface LevelScope {
  appId: string;
  readers: Readers;
}

/** An include level's pair as a lookup key (a class name holds no NUL), and back. */
const levelKey = (className: string, objectId: string) => `${className}\u0000${objectId}`;

function levelRef(key: string): { className: string; objectId: string } {
  const at = key.indexOf('\u0000');
  return { className: key.slice(0, at), objectId: key.slice(at + 1) };
}

interface LookupRow extends SelectedRow {
  lookup: LookupKey;
  /** The row version: xmin, the transaction that wrote it (a later write of the row has another). */
  version: string;
}

export class PostgresStore extends SqlStore {
  override readonly ops: PostgresOpsStore;
  override readonly accounts: PostgresAccountStore;
  // One statement per class and column for the lookups of a turn, whoever makes them: each carries its own
  // readers into the statement, so two users' reads of one class share it (each user has a reader set of their own).
  private readonly lookups = new LookupBatcher<ObjectLookup, LookupRow>({
    groupKey: ({ appId, className, column, all, text }) => `${appId}\u0000${className}\u0000${column}\u0000${all}\u0000${text === true}`,
    select: (scope, keys) => this.selectLookups(scope, keys),
    keyOf: (row) => row.lookup,
  });

  // The include levels of a turn with the same readers go as one level's statement of all their pairs, each pair once:
  // a level alone was a round trip of its own per request, the largest part of an include page's Node CPU.
  private readonly levelRows = new LookupBatcher<LevelScope, FoundJsonTuple>({
    groupKey: ({ appId, readers }) => `${appId}\u0000${JSON.stringify(readers)}`,
    select: ({ appId, readers }, keys) => this.foundJsonTuples(this.levels.statement(appId, keys.map(levelRef), readers)),
    keyOf: ([id, , , , className]) => levelKey(className!, id),
    maxKeys: 1000,
  });

  // The pages of one named shape made together go as one statement (PageBatcher).
  private readonly pages = new PageBatcher((statement) => this.runPage(statement));

  // The versioned writes of updateUnlocked made together go as one statement (RowWrites).
  private readonly rowWrites: RowWrites;

  /** A pooled client as Kysely's driver checks one out (open.ts: lost connections mapped to SQLSTATE 08). */
  private readonly checkout: () => Promise<pg.PoolClient>;

  constructor(options: { db: Kysely<any>; pool: pg.Pool; secrets?: SecretBox; checkout?: () => Promise<pg.PoolClient> }) {
    super({ db: options.db, dialect: postgresDialect, secrets: options.secrets });
    this.checkout = options.checkout ?? (() => options.pool.connect());
    this.ops = new PostgresOpsStore({ db: options.db, dialect: postgresDialect, pool: options.pool });
    this.accounts = new PostgresAccountStore({ db: options.db, dialect: postgresDialect });
    this.rowWrites = new RowWrites(options.db, (row, version) => this.writeVersioned(row, version));
  }

  override async getObject(ref: ObjectRef, readers: Readers): Promise<StoredObject | null> {
    if (!isPlausibleId(ref.objectId)) return null;
    const row = await this.lookups.find({ appId: ref.appId, className: ref.className, column: 'id', all: readers === null }, lookupKey(ref.objectId, readers));
    return row && fromRow(this.dialect, row);
  }

  /**
   * The stored fields as JSON.stringify's text without building them: the row's jsonb read as its text and made
   * JSON.stringify's by a scan (dialect.dataJson, as a page read as stored), in a lookup batch of its own. The
   * driver's parse of the jsonb and the stringify after it were ~6% of a get-by-id's CPU and most of its garbage
   * (bench/RESULTS.md, Objects). test/storage/get-by-id-paths.test.ts holds it to getObject's fields stringified.
   */
  override async getObjectJson(ref: ObjectRef, readers: Readers): Promise<StoredJson | null> {
    if (!isPlausibleId(ref.objectId)) return null;
    const row = await this.lookups.find({ appId: ref.appId, className: ref.className, column: 'id', all: readers === null, text: true }, lookupKey(ref.objectId, readers));
    return row && { createdAt: Number(row.created_at), updatedAt: Number(row.updated_at), dataJson: this.dialect.dataJson(row.data) };
  }

  /**
   * An include level's rows through the levels' batch (levelRows): the pairs of the levels made in one turn read in one
   * statement, each level answered the rows of its own pairs. test/storage/include-level-batches.test.ts holds levels
   * made together to the same levels read one at a time.
   */
  protected override async levelTuples(appId: string, refs: LevelRefs, readers: Readers): Promise<FoundJsonTuple[]> {
    const scope = { appId, readers };
    const rows = await Promise.all(refs.map((ref) => this.levelRows.find(scope, levelKey(ref.className, ref.objectId))));
    return rows.filter((row) => row !== null);
  }

  /**
   * A page that is a lookup by a unique column (uniqueLookup) goes with the get-by-ids of its turn, one statement
   * for those of a class and column: the master key's `where={"username":…}` ran a statement of its own per page.
   */
  override async findObjects(appId: string, className: string, query: FindQuery): Promise<StoredObject[]> {
    const lookup = uniqueLookup(appId, className, query);
    return lookup === null ? super.findObjects(appId, className, query) : this.lookedUp(lookup, query.readers);
  }

  /** findObjects' lookup page with the fields as text, as getObjectJson gives them. */
  override async findObjectsJson(appId: string, className: string, query: FindQuery): Promise<FoundJson[]> {
    const lookup = uniqueLookup(appId, className, query);
    if (lookup === null) return super.findObjectsJson(appId, className, query);
    const found = await this.lookedUp(lookup, query.readers);
    return found.map((object) => ({ objectId: object.objectId, createdAt: object.createdAt, updatedAt: object.updatedAt, dataJson: JSON.stringify(object.data) }));
  }

  private async lookedUp(lookup: { scope: ObjectLookup; value: string }, readers: Readers): Promise<StoredObject[]> {
    const row = await this.lookups.find(lookup.scope, lookupKey(lookup.value, readers));
    return row ? [fromRow(this.dialect, row)] : [];
  }

  /**
   * A page read as stored, run by the driver with rows as arrays (rowMode), not through Kysely: its checkout,
   * promises and a row object a row (~1 µs a row) for four values; the shape's name is given as Kysely's statements
   * get it (runPreparedByName). A named shape's pages made together go as one statement (PageBatcher).
   * test/objects-pages.test.ts holds these pages to the full path's bytes, test/storage/prepared-statements.test.ts
   * their names and plans, test/storage/page-batches.test.ts pages made together to pages made alone.
   */
  protected override async foundJsonTuples(statement: CompiledQuery): Promise<FoundJsonTuple[]> {
    const page = { text: statement.sql, values: statement.parameters };
    return isPreparedShape(page.text) ? this.pages.find(page) : this.runPage(page);
  }

  private async runPage({ text, values }: PageRun): Promise<FoundJsonTuple[]> {
    const client = await this.checkout();
    try {
      return (await client.query<FoundJsonTuple>({ text, values: values as unknown[], rowMode: 'array' })).rows;
    } finally {
      client.release();
    }
  }

  /**
   * An update as two statements and no transaction: the row read with its version (through the batched
   * lookup, as the master key reads), then written only if that version is still the one there (RowWrites:
   * the writes made together go as one statement). A row written or deleted in between updates nothing; it
   * is read and tried once more, then the locked path (null) takes the update over, so
   * a write always applies to the row as it is when it lands: two concurrent increments both count, a
   * delete in between gives notFound. A user whose authData changes goes the locked path too (its
   * identities are written in the same transaction). The read is not under a lock, so a refusal reads
   * the row as it was committed just before: an order the locked path could also have given. A row read
   * earlier in the request (`seen`: a user's own session row when it updates itself) stands in for the first
   * read, written against the version it was read at: one statement fewer; a row changed since is read as above.
   */
  protected override async updateUnlocked<R>(ref: ObjectRef, change: Change<R>, seen?: SeenRow): Promise<WriteOutcome<R> | null> {
    const known = seen && seen.version !== null && seen.object.className === ref.className && seen.object.objectId === ref.objectId
      ? { current: seen.object, version: seen.version }
      : null;
    // Two updates of one row made together (a user's two devices) then both go without a transaction.
    for (let attempt = known ? -1 : 0; attempt < 2; attempt++) {
      const read = attempt < 0 ? known! : await this.readVersioned(ref);
      if (read === null) return null;
      const next = change(read.current);
      if ('refused' in next) return { ok: false, reason: 'refused', refusal: next.refused };
      if (writesIdentities(ref, read.current, next)) return null;
      if (await this.rowWrites.write(toRow(ref.appId, next), read.version)) return { ok: true, object: next };
    }
    return null;
  }

  /** The row an unlocked update changes, with its version (the batched lookup, as the master key reads). */
  private async readVersioned(ref: ObjectRef): Promise<{ current: StoredObject; version: string } | null> {
    const row = await this.lookups.find({ appId: ref.appId, className: ref.className, column: 'id', all: true }, lookupKey(ref.objectId, null));
    return row && { current: fromRow(this.dialect, row), version: row.version };
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
  private async selectLookups({ appId, className, column, all, text }: ObjectLookup, keys: readonly LookupKey[]): Promise<LookupRow[]> {
    const name = `${column === 'id' ? 'roost_object_lookups' : `roost_object_lookups_${column}`}${text === true ? '_text' : ''}`;
    const match = sql.ref(`o.${column}`);
    const columns = text === true ? textSelect : objectSelect;
    if (all) {
      // The values alone, matched as the session lookup matches its digests (`= ANY`): the unique index's probes.
      const values = keys.map((key) => (JSON.parse(key) as [string, null])[0]);
      const { rows } = await sql<LookupRow>`${prepared(`${name}_all`, sql`SELECT ${match} AS lookup, o.xmin::text AS version, ${columns}
        FROM objects o WHERE o.app_id = ${appId} AND o.class_name = ${className} AND ${match} = ANY(${sql.val(values)}::text[])`)}`.execute(this.db);
      for (const row of rows) row.lookup = lookupKey(row.lookup, null);
      return rows;
    }
    const readers = sql`(SELECT jsonb_array_elements_text(l.k::jsonb -> 1))`;
    // The user among a lookup's readers reads through its roles too (readableSql); '*' is no user's id.
    const roles = rolePrincipals(this.dialect, sql`${appId}`, (targetId) => sql`${targetId} IN ${readers}`);
    const { rows } = await sql<LookupRow>`${prepared(name, sql`SELECT l.k AS lookup, o.xmin::text AS version, ${columns}
      FROM unnest(${sql.val([...keys])}::text[]) AS l(k)
      JOIN objects o ON o.app_id = ${appId} AND o.class_name = ${className} AND ${match} = (l.k::jsonb ->> 0)
      WHERE jsonb_typeof(l.k::jsonb -> 1) = 'null'
        OR o.readers && ARRAY${readers}
        OR o.readers && ARRAY(${roles})`)}`.execute(this.db);
    return rows;
  }
}
