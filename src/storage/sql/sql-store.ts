import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { processSecretBox, type SecretBox } from '../../lib/secret-box.ts';
import { SqlAppStore } from './app-store.ts';
import type { AppSettings } from '../../apps/settings.ts';
import type {
  AppRecord,
  Change,
  Refusal,
  Condition,
  FindQuery,
  FoundJson,
  Readers,
  SeenRow,
  StoredJson,
  StoredObject,
  Where,
  WriteOutcome,
} from '../../objects/types.ts';
import type { AppDeletion, KeyRotation, ObjectRef, Store } from '../store.ts';
import type { Sql, SqlDialect } from './dialect.ts';
import { compileWhere, countStatement, pageStatement, type PageSelect } from './where.ts';
import { pageShape, pageWithValues, type PageShapeQuery } from './page-shapes.ts';
import { StatementShapes } from './statement-shapes.ts';
import { IncludeLevelStatements, type LevelRefs } from './include-levels.ts';
import { boundNear, firstNearestRadius, nearestOf, nextNearestRadius } from './geo.ts';
import { migrate } from './migrations/migrate.ts';
import { SqlQuotaPauses } from './quota-pause-store.ts';
import { isPlausibleId } from '../../objects/values.ts';
import { SqlAccountStore } from './account-store.ts';
import { SqlPushStore } from './push-store.ts';
import { SqlPushScheduleStore } from './push-schedule-store.ts';
import { SqlMailTokenStore } from './mail-token-store.ts';
import { SqlOperatorStore } from './operator-store.ts';
import { SqlIdentityStore, authDataChanged, deleteIdentities, syncIdentities } from './identity-store.ts';
import { SqlSmsStore } from './sms-store.ts';
import { SqlOpsStore } from './ops-store.ts';
import { SqlStatsStore } from './stats-store.ts';
import { SqlLeaderboardStore } from './leaderboard-store.ts';
import { SqlStatusInboxStore } from './status-inbox-store.ts';
import { SqlClassIndexStore } from './class-index-store.ts';
import { RelationClash, SqlRelationStore, applyRelationChanges, deleteRelationRows } from './relation-store.ts';
import type { RelationChange } from '../relation-store.ts';
import { SqlSchemaStore } from './schema-store.ts';
import { serialiseOn } from './serialise.ts';
import { SqlRoleStore, readableSql } from './roles.ts';
import { fromRow, insertRows, objectJsonColumns, objectJsonSelect, objectSelect, takenOrThrow, toRow, updateSet, type FoundJsonTuple, type SelectedJsonRow, type SelectedRow } from './object-row.ts';

/** Whether an update moves a user's third-party identities, which follow its authData in the same transaction (unique index: 208). */
export function writesIdentities(ref: ObjectRef, current: StoredObject, next: StoredObject): boolean {
  return ref.className === '_User' && authDataChanged(current.data, next.data);
}

/** The Store on a SQL database; the dialect supplies what differs between SQLite and PostgreSQL. */
export class SqlStore implements Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly accounts: SqlAccountStore;
  readonly push: SqlPushStore;
  readonly pushSchedule: SqlPushScheduleStore;
  readonly mailTokens: SqlMailTokenStore;
  readonly identities: SqlIdentityStore;
  readonly sms: SqlSmsStore;
  readonly quotaPauses: SqlQuotaPauses;
  readonly ops: SqlOpsStore;
  readonly classIndexes: SqlClassIndexStore;
  readonly relations: SqlRelationStore;
  readonly roles: SqlRoleStore;
  readonly schemas: SqlSchemaStore;
  private readonly apps: SqlAppStore;
  readonly operators: SqlOperatorStore;
  readonly stats: SqlStatsStore;
  readonly leaderboards: SqlLeaderboardStore;
  readonly statusInboxes: SqlStatusInboxStore;
  protected readonly db: Kysely<any>;
  protected readonly dialect: SqlDialect;
  /** Query pages' compiled statements by shape (statement-shapes.ts). */
  private readonly shapes = new StatementShapes();
  /** Include levels' statements, built once per application and readers. */
  protected readonly levels: IncludeLevelStatements;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect; secrets?: SecretBox }) {
    this.apps = new SqlAppStore({ ...options, secrets: options.secrets ?? processSecretBox() });
    this.db = options.db;
    this.dialect = options.dialect;
    this.levels = new IncludeLevelStatements(options.db, options.dialect);
    this.kind = options.dialect.kind;
    this.accounts = new SqlAccountStore(options);
    this.push = new SqlPushStore(options);
    this.pushSchedule = new SqlPushScheduleStore(options);
    this.mailTokens = new SqlMailTokenStore(options);
    this.identities = new SqlIdentityStore(options);
    this.sms = new SqlSmsStore(options);
    this.quotaPauses = new SqlQuotaPauses(options);
    this.ops = new SqlOpsStore(options);
    this.classIndexes = new SqlClassIndexStore(options);
    this.relations = new SqlRelationStore(options);
    this.roles = new SqlRoleStore(options);
    this.schemas = new SqlSchemaStore(options);
    this.operators = new SqlOperatorStore(options);
    this.stats = new SqlStatsStore(options);
    this.leaderboards = new SqlLeaderboardStore(options);
    this.statusInboxes = new SqlStatusInboxStore(options);
  }

  async migrate(): Promise<void> {
    await migrate(this.db, this.dialect);
  }

  serverSecret(): Promise<string> {
    return this.apps.serverSecret();
  }

  // ── applications (src/storage/sql/app-store.ts: sealed secrets) ───────────

  createApp(app: AppRecord): Promise<boolean> {
    return this.apps.createApp(app);
  }

  createFirstApp(app: AppRecord): Promise<boolean> {
    return this.apps.createFirstApp(app);
  }

  getApp(appId: string): Promise<AppRecord | null> {
    return this.apps.getApp(appId);
  }

  listApps(): Promise<AppRecord[]> {
    return this.apps.listApps();
  }

  updateAppSettings<R>(
    appId: string,
    change: (current: Partial<AppSettings>) => AppSettings | Refusal<R>,
  ): Promise<AppSettings | Refusal<R> | null> {
    return this.apps.updateAppSettings(appId, change);
  }

  rotateAppKey(appId: string, rotation: KeyRotation): Promise<AppRecord | null> {
    return this.apps.rotateAppKey(appId, rotation);
  }

  appContents(appId: string): Promise<AppDeletion | null> {
    return this.apps.appContents(appId);
  }

  async deleteApp(appId: string): Promise<boolean> {
    // Outside the transaction: PostgreSQL drops an index CONCURRENTLY, which no transaction may hold.
    for (const index of await this.apps.declaredIndexes(appId)) await this.classIndexes.drop(appId, index.className, index.name);
    return this.apps.deleteApp(appId);
  }

  resealSecrets(clearOnly: boolean): Promise<number> {
    return this.apps.resealSecrets(clearOnly);
  }

  // ── objects ─────────────────────────────────────────────────────────────────

  private readable(appId: string, readers: Readers) {
    return readableSql(this.dialect, appId, readers);
  }

  async insertObject(appId: string, object: StoredObject, relations: readonly RelationChange[] = []): Promise<WriteOutcome> {
    try {
      if (relations.length === 0) {
        await insertRows(this.dialect, [toRow(appId, object)]).execute(this.db);
      } else {
        await this.db.transaction().execute(async (trx) => {
          await insertRows(this.dialect, [toRow(appId, object)]).execute(trx);
          await this.changeRelations(trx, { appId, className: object.className, objectId: object.objectId }, relations);
        });
      }
      return { ok: true, object };
    } catch (error) {
      if (error instanceof RelationClash) return error.outcome;
      return takenOrThrow(this.dialect, error);
    }
  }

  /** Applies relation changes inside `trx`; a clash throws RelationClash, rolling the transaction back. */
  private async changeRelations(trx: Kysely<any>, owner: ObjectRef, relations: readonly RelationChange[]): Promise<void> {
    const outcome = await applyRelationChanges(trx, this.dialect, owner, relations);
    if (!outcome.ok) throw new RelationClash(outcome);
  }

  async getObject(ref: ObjectRef, readers: Readers): Promise<StoredObject | null> {
    if (!isPlausibleId(ref.objectId)) return null;
    const [row] = await this.selectByIds(ref.appId, ref.className, [ref.objectId], readers);
    return row ? fromRow(this.dialect, row) : null;
  }

  /** The rows among `ids` of one class that the readers may read (one statement, any order). */
  protected async selectByIds(appId: string, className: string, ids: readonly string[], readers: Readers): Promise<SelectedRow[]> {
    const { rows } = await sql<SelectedRow>`SELECT ${objectSelect}
      FROM objects o WHERE o.app_id = ${this.dialect.boundScope(appId)} AND o.class_name = ${this.dialect.boundScope(className)}
      AND o.id IN (${sql.join(ids.map((id) => sql`${id}`))}) AND ${this.readable(appId, readers)}`.execute(this.db);
    return rows;
  }

  async getObjects(appId: string, className: string, ids: readonly string[], readers: Readers): Promise<StoredObject[]> {
    return (await this.rowsByIds(appId, className, ids, readers)).map((row) => fromRow(this.dialect, row));
  }

  async getObjectsJson(appId: string, refs: ReadonlyArray<{ className: string; objectId: string }>, readers: Readers): Promise<Array<FoundJson & { className: string }>> {
    const plausible = refs.filter((ref) => isPlausibleId(ref.objectId));
    if (plausible.length === 0) return [];
    const rows = await this.levelTuples(appId, plausible, readers);
    return rows.map(([id, createdAt, updatedAt, data, className]) => ({
      className: className!,
      objectId: id,
      createdAt: Number(createdAt),
      updatedAt: Number(updatedAt),
      dataJson: this.dialect.dataJson(data),
    }));
  }

  /** The rows of an include level (getObjectsJson), class last; PostgresStore reads the levels of a turn together. */
  protected levelTuples(appId: string, refs: LevelRefs, readers: Readers): Promise<FoundJsonTuple[]> {
    return this.foundJsonTuples(this.levels.statement(appId, refs, readers));
  }

  /** The rows of getObjects: the ids bound as one parameter, so a level of a thousand results' arrays of pointers stays one short statement. */
  private async rowsByIds(appId: string, className: string, ids: readonly string[], readers: Readers): Promise<SelectedRow[]> {
    const plausible = [...new Set(ids)].filter(isPlausibleId);
    if (plausible.length === 0) return [];
    const { rows } = await sql<SelectedRow>`${this.dialect.reusedShape(sql`SELECT ${objectSelect}
      FROM objects o WHERE o.app_id = ${this.dialect.boundScope(appId)} AND o.class_name = ${this.dialect.boundScope(className)}
      AND ${this.dialect.columnIn(sql`o.id`, 'string', plausible)} AND ${this.readable(appId, readers)}`)}`.execute(this.db);
    return rows;
  }

  async getObjectJson(ref: ObjectRef, readers: Readers): Promise<StoredJson | null> {
    const object = await this.getObject(ref, readers);
    return object && { createdAt: object.createdAt, updatedAt: object.updatedAt, dataJson: JSON.stringify(object.data) };
  }

  async findObjects(appId: string, className: string, query: FindQuery): Promise<StoredObject[]> {
    return (await this.findRows<SelectedRow>(appId, className, query, { select: objectSelect })).map((row) => fromRow(this.dialect, row));
  }

  async findObjectsJson(appId: string, className: string, query: FindQuery): Promise<FoundJson[]> {
    const select = { select: objectJsonSelect, columns: objectJsonColumns(this.dialect) };
    const rows = await this.findRows(appId, className, query, select, (statement) => this.foundJsonTuples(statement));
    return rows.map(([id, createdAt, updatedAt, data]) => ({ objectId: id, createdAt: Number(createdAt), updatedAt: Number(updatedAt), dataJson: this.dialect.dataJson(data) }));
  }

  /**
   * The rows of a page read by objectJsonColumns, as tuples in its columns' order. SqliteStore runs the statement
   * straight on its connection (its seam, preparedRows); test/objects-pages.test.ts and
   * test/objects-page-shapes.test.ts hold the pages so read to the full path's.
   */
  protected async foundJsonTuples(statement: CompiledQuery): Promise<FoundJsonTuple[]> {
    const { rows } = await this.db.executeQuery<SelectedJsonRow & { class_name?: string }>(statement);
    return rows.map((row) => [row.id, row.created_at, row.updated_at, row.data, row.class_name]);
  }

  /** The rows of a page (pageStatement: named only where one plan serves every value), nearest first for an unbounded $nearSphere. */
  private async findRows<Row>(
    appId: string,
    className: string,
    query: FindQuery,
    select: PageSelect,
    run: (statement: CompiledQuery) => Promise<Row[]> = async (statement) => (await this.db.executeQuery<Row>(statement)).rows,
  ): Promise<Row[]> {
    const compile = (q: PageShapeQuery) => pageStatement({ dialect: this.dialect, appId, className, readers: q.readers }, select, q).compile(this.db);
    const page = async (q: FindQuery) => {
      const full = { appId, className, ...q };
      const shape = pageShape(select.columns === undefined ? 'objects' : 'json', full);
      const statement = shape ? this.shapes.compiled(shape.key, shape.values, (values) => compile(pageWithValues(full, values)), shape.times) : compile(full);
      return run(statement);
    };
    const nearest = query.order.length === 0 ? nearestOf(query.where) : null;
    if (nearest?.maxDistance === null) {
      // An unbounded nearest-first page, looked for within growing radii (each read through the geo index):
      // once one holds skip + limit matches, nothing outside it is nearer, so they are the page.
      const wanted = query.skip + query.limit;
      for (let radius = firstNearestRadius; radius < Math.PI; ) {
        const rows = await page({ ...query, where: boundNear(query.where, nearest, radius), skip: 0, limit: wanted });
        if (rows.length === wanted) return rows.slice(query.skip);
        radius = nextNearestRadius(radius, rows.length, wanted);
      }
    }
    return page(query);
  }

  async countObjects(appId: string, className: string, where: Where, readers: Readers): Promise<number> {
    const scope = { dialect: this.dialect, appId, className, readers };
    // Unnamed, planned with its values at each run: a count reads every match, and a generic plan (bound application
    // and class) can read them through no declared index (pageStatement).
    const { rows } = await sql<{ n: number | string }>`${countStatement(scope, where)}`.execute(this.db);
    return Number(rows[0].n);
  }

  async classExists(appId: string, className: string): Promise<boolean> {
    const { rows } = await sql`SELECT 1 AS one FROM objects WHERE app_id = ${appId} AND class_name = ${className} LIMIT 1`.execute(
      this.db,
    );
    return rows.length > 0;
  }

  /** Selects the row under lock. */
  private async lockRow(trx: Kysely<any>, ref: ObjectRef): Promise<StoredObject | null> {
    if (!isPlausibleId(ref.objectId)) return null;
    const { rows } = await sql<SelectedRow>`SELECT ${objectSelect}
      FROM objects o WHERE o.app_id = ${ref.appId} AND o.class_name = ${ref.className} AND o.id = ${ref.objectId}
      ${this.dialect.rowLock}`.execute(trx);
    return rows[0] ? fromRow(this.dialect, rows[0]) : null;
  }

  /**
   * Whether the locked row meets the condition. A row its readers may not read never does, and its
   * fields are not looked at: the answer must not depend on what the condition says about them.
   */
  private async meets(trx: Kysely<any>, ref: ObjectRef, condition: Condition): Promise<boolean> {
    const { rows } = await sql`SELECT 1 AS one FROM objects o
      WHERE o.app_id = ${ref.appId} AND o.class_name = ${ref.className} AND o.id = ${ref.objectId}
      AND ${this.readable(ref.appId, condition.readers)}
      AND ${compileWhere({ dialect: this.dialect, appId: ref.appId, className: ref.className, readers: condition.readers }, condition.where)}`.execute(trx);
    return rows.length > 0;
  }

  async updateObject<R = never>(
    ref: ObjectRef,
    change: Change<R>,
    condition?: Condition,
    relations: readonly RelationChange[] = [],
    seen?: SeenRow,
  ): Promise<WriteOutcome<R>> {
    try {
      if (!condition && relations.length === 0 && isPlausibleId(ref.objectId)) {
        const outcome = await this.updateUnlocked(ref, change, seen);
        if (outcome !== null) return outcome;
      }
      return await this.db.transaction().execute(async (trx): Promise<WriteOutcome<R>> => {
        const current = await this.lockRow(trx, ref);
        if (!current) return { ok: false, reason: 'notFound' };
        // The write rights first, the condition after: a refusal must not depend on the condition.
        const next = change(current);
        if ('refused' in next) return { ok: false, reason: 'refused', refusal: next.refused };
        if (condition && !(await this.meets(trx, ref, condition))) return { ok: false, reason: 'conditionFailed' };
        await sql`UPDATE objects SET ${updateSet(this.dialect, toRow(ref.appId, next))}
          WHERE app_id = ${ref.appId} AND class_name = ${ref.className} AND id = ${ref.objectId}`.execute(trx);
        if (writesIdentities(ref, current, next)) await syncIdentities(trx, ref.appId, ref.objectId, next.data);
        if (relations.length > 0) await this.changeRelations(trx, ref, relations);
        return { ok: true, object: next };
      });
    } catch (error) {
      if (error instanceof RelationClash) return error.outcome;
      return takenOrThrow(this.dialect, error);
    }
  }

  /**
   * The seam for an update with neither a condition nor relation changes, which is most of them: a store
   * that can write one without a transaction answers its outcome here; null hands it to the locked path
   * in updateObject, which gives the same answers (test/storage/update-paths.test.ts holds them together).
   * `seen` is updateObject's: the row as read earlier in the request, with its version.
   */
  protected async updateUnlocked<R>(_ref: ObjectRef, _change: Change<R>, _seen?: SeenRow): Promise<WriteOutcome<R> | null> {
    return null;
  }

  async deleteObject<R = never>(
    ref: ObjectRef,
    guard: (current: StoredObject) => Refusal<R> | null,
    condition?: Condition,
  ): Promise<WriteOutcome<R>> {
    return this.db.transaction().execute(async (trx): Promise<WriteOutcome<R>> => {
      const current = await this.lockRow(trx, ref);
      if (!current) return { ok: false, reason: 'notFound' };
      const refusal = guard(current);
      if (refusal) return { ok: false, reason: 'refused', refusal: refusal.refused };
      if (condition && !(await this.meets(trx, ref, condition))) return { ok: false, reason: 'conditionFailed' };
      await sql`DELETE FROM objects WHERE app_id = ${ref.appId} AND class_name = ${ref.className}
        AND id = ${ref.objectId}`.execute(trx);
      if (ref.className === '_User') await deleteIdentities(trx, ref.appId, ref.objectId);
      await deleteRelationRows(trx, ref);
      return { ok: true, object: current };
    });
  }

  async close(): Promise<void> {
    // The builds this process runs are stopped (where the database can) and let go: they stay `building`,
    // for the next node to resume at its start, rather than holding this one's shutdown for their length.
    await this.classIndexes.stop();
    await this.db.destroy();
  }
}
