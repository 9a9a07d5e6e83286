import { sql } from 'kysely';
import type { Json, OrderKey, Readers, SubQuery, Where } from '../../objects/types.ts';
import type { Comparison, EqualitySides, PinnedScope, Sql, SqlDialect } from './dialect.ts';
import { compileGeoBox, compileGeoPolygon, compileNear, nearestOf, nearestOrder } from './geo.ts';
import { columnFor, columnValue, timeColumns } from './builtin-columns.ts';
import { readableSql } from './roles.ts';
import { holdsAny, memberOf } from './relation-store.ts';

const operators: Record<Comparison, Sql> = {
  lt: sql.raw('<'),
  lte: sql.raw('<='),
  gt: sql.raw('>'),
  gte: sql.raw('>='),
};

/**
 * Joins conditions as a balanced tree of parentheses: SQLite refuses an expression nested 1000 deep,
 * which a flat chain of 1000 ORs is.
 */
function joinBalanced(items: Sql[], separator: Sql): Sql {
  if (items.length === 1) return sql`(${items[0]})`;
  const half = Math.ceil(items.length / 2);
  return sql`(${joinBalanced(items.slice(0, half), separator)}${separator}${joinBalanced(items.slice(half), separator)})`;
}

/**
 * What a where compiles against: the class it queries, and the application and readers its subqueries
 * read with (a subquery sees only what the caller may read; null readers: the master key).
 */
export interface WhereScope {
  dialect: SqlDialect;
  appId: string;
  className: string;
  readers: Readers;
}

/**
 * A subquery as one SQL list inside the statement (no second round trip): `value` of each of its
 * matches the readers may read, in its order, at most its limit of them after its skip; matches past
 * the limit are dropped, as the hosted service drops them. It is findStatement's page of the class.
 */
function subqueryValues(scope: WhereScope, query: SubQuery, value: Sql): Sql {
  // What its order reads besides the value (a split's outer ORDER BY reads only selected columns): updated_at only
  // when ordered by it, so a declared index holding the rest (created_at, id) answers alone (SQLite: schema-ddl.ts).
  const updated = query.order.some((key) => key.path.length === 1 && key.path[0] === 'updatedAt');
  const page = findStatement({ ...scope, className: query.className }, sql`o.id, o.created_at, ${updated ? sql`o.updated_at, ` : sql``}${value} AS v`, query);
  return sql`SELECT s.v FROM (${page}) s`;
}

/**
 * A field $select reads from its column: objectId, and the times as the Date value a date field holds (so
 * createdAt selects against a date field too); null for a field of the data.
 */
function selectColumn(dialect: SqlDialect, path: string[]): Sql | null {
  if (path.length !== 1) return null;
  if (path[0] === 'objectId') return dialect.textAsValue(sql`o.id`);
  const time = timeColumns[path[0]];
  return time ? dialect.timeAsValue(sql.ref(`o.${time}`)) : null;
}

export function compileWhere(scope: WhereScope, where: Where): Sql {
  const { dialect, className } = scope;
  const compile = (node: Where): Sql => {
    switch (node.op) {
      case 'const':
        return node.value ? sql`1=1` : sql`1=0`;
      case 'and':
        return node.items.length === 0 ? sql`1=1` : joinBalanced(node.items.map(compile), sql` AND `);
      case 'or':
        return node.items.length === 0 ? sql`1=0` : joinBalanced(node.items.map(compile), sql` OR `);
      case 'not':
        return sql`NOT (${compile(node.item)})`;
      case 'relatedTo':
        return memberOf(node.owner, node.key);
      case 'relationHolds':
        return node.targets.objectIds.length === 0 ? sql`1=0` : holdsAny(dialect, node.key, node.targets);
      case 'inQuery': {
        const ids = subqueryValues(scope, node.query, sql`o.id`);
        if (node.inArray) return dialect.pointerInArray(node.path, node.query.className, ids, scope);
        return dialect.pointerIn(node.path, node.query.className, ids, scope);
      }
      case 'select': {
        const values = subqueryValues(scope, node.query, selectColumn(dialect, node.key) ?? dialect.jsonValue(node.key));
        const column = selectColumn(dialect, node.path);
        return column ? dialect.valueIn(column, values) : dialect.jsonValueIn(node.path, values);
      }
      default:
        return compileLeaf(node);
    }
  };

  const bound = (kind: 'time' | 'string', value: string | number): Sql => (kind === 'time' ? dialect.typedValue(value, 'bigint') : sql`${value}`);

  const compileLeaf = (node: Exclude<Where, { op: 'and' | 'or' | 'not' | 'const' | 'relatedTo' | 'relationHolds' | 'inQuery' | 'select' }>): Sql => {
    if (node.op === 'near') return compileNear(dialect, node);
    if (node.op === 'geoBox') return compileGeoBox(dialect, node);
    if (node.op === 'geoPolygon') return compileGeoPolygon(dialect, node);
    const column = columnFor(className, node.path);
    if (column) {
      // Built-in columns are never null and never arrays, so each operator has its plain SQL meaning.
      if (node.op === 'eq') {
        const value = columnValue(column.kind, node.value, node.op);
        return value === null ? sql`1=0` : sql`${column.column} = ${bound(column.kind, value)}`;
      }
      if (node.op === 'in') {
        const values = node.values.map((value) => columnValue(column.kind, value, node.op)).filter((value) => value !== null);
        return values.length === 0 ? sql`1=0` : dialect.columnIn(column.column, column.kind, values);
      }
      if (node.op === 'lt' || node.op === 'lte' || node.op === 'gt' || node.op === 'gte') {
        const value = columnValue(column.kind, node.value, node.op);
        return value === null ? sql`1=0` : sql`${column.column} ${operators[node.op]} ${bound(column.kind, value)}`;
      }
      if (node.op === 'exists') return sql`${column.column} IS NOT NULL`;
    }
    switch (node.op) {
      case 'eq':
        return dialect.jsonEquals(node.path, node.value);
      case 'in':
        return node.values.length === 0 ? sql`1=0` : dialect.jsonIn(node.path, node.values);
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte':
        return dialect.jsonCompare(node.path, node.op, node.value);
      case 'exists':
        return dialect.jsonExists(node.path);
      case 'regex':
        return dialect.jsonRegex(node.path, node.regex);
      case 'size':
        return dialect.jsonSize(node.path, node.size);
      case 'all':
        return node.values.length === 0 ? sql`1=0` : dialect.jsonContainsAll(node.path, node.values);
      default:
        // A tree stored by another version (a push's selector) may hold a node this one does not know: it must
        // fail, not become a bound undefined that selects something else.
        throw new Error(`Unknown where node ${JSON.stringify((node as { op?: unknown }).op)}.`);
    }
  };

  return compile(where);
}

/**
 * No `order` is insertion order, as the hosted service answered fresh data (documented as unspecified):
 * creation time, then the id, which within one process's millisecond is the order it issued them
 * (src/lib/ids.ts). Imported objects sit at their own createdAt. Index objects_created_id_idx (0004).
 */
const insertionOrder = sql`o.created_at ASC, o.id ASC`;

export function compileOrder(dialect: SqlDialect, className: string, order: OrderKey[]): Sql {
  if (order.length === 0) return insertionOrder;
  const keys = order.map((key) => {
    const column = columnFor(className, key.path);
    if (column) return sql`${column.column} ${sql.raw(key.descending ? 'DESC' : 'ASC')}`;
    return dialect.jsonOrder(key);
  });
  // The id last makes every order total, so pages never overlap or skip.
  keys.push(sql`o.id ASC`);
  return sql.join(keys, sql`, `);
}

const isScalar = (value: Json): value is string | number | boolean => value !== null && typeof value !== 'object';

/**
 * The equality findStatement reads through an index: the first top-level `eq` of a scalar, or `$in` of
 * scalars, on a JSON field, as the dialect's two sides, each with the rest of the where.
 */
function equalitySplit(scope: WhereScope, where: Where): (EqualitySides & { alone: boolean; oneValue: boolean }) | null {
  const { dialect, className } = scope;
  const conjuncts = where.op === 'and' ? where.items : [where];
  const node = conjuncts.find(
    (n) =>
      ((n.op === 'eq' && isScalar(n.value)) || (n.op === 'in' && n.values.length > 0 && n.values.every(isScalar))) && !columnFor(className, n.path),
  );
  if (node?.op !== 'eq' && node?.op !== 'in') return null;
  const values = (node.op === 'eq' ? [node.value] : node.values) as Array<string | number | boolean>;
  const sides = dialect.jsonEqualsBranches(node.path, values, scope);
  if (sides === null) return null;
  const rest = compileWhere(scope, { op: 'and', items: conjuncts.filter((other) => other !== node) });
  return { ...sides, value: sql`${sides.value} AND ${rest}`, arrays: sql`${sides.arrays} AND ${rest}`, alone: conjuncts.length === 1, oneValue: values.length === 1 };
}

/**
 * The rows of the first top-level $inQuery of the where, where the dialect reads them as a source of
 * their own (pointerSource), with the rest of the where; null otherwise. A subquery's ids are distinct
 * (object ids of one class), so the source holds each row once.
 */
function pointerSource(scope: WhereScope, where: Where, pinned: PinnedScope | null = null): { from: Sql; condition: Sql } | null {
  const conjuncts = where.op === 'and' ? where.items : [where];
  const node = conjuncts.find((n) => n.op === 'inQuery' && !n.inArray);
  if (node?.op !== 'inQuery') return null;
  const ids = subqueryValues(scope, node.query, sql`o.id`);
  const source = scope.dialect.pointerSource(node.path, node.query.className, ids, pinned ?? scope);
  if (source === null) return null;
  const rest = compileWhere(scope, { op: 'and', items: conjuncts.filter((other) => other !== node) });
  return { from: source.from, condition: sql`${source.condition} AND ${rest}` };
}

/**
 * A lone equality of a string on a column a unique index holds with the application (objectId, a promoted field:
 * username, email, mobilePhoneNumber, installationId): at most one row, read through that index for any value, so
 * with the master key or the public readers (no roles to read) one plan serves every run (the master key's
 * `where={"username":…}` planned at each run was about half of its database time).
 */
function uniqueEquality(className: string, where: Where): boolean {
  const conjuncts = where.op === 'and' ? where.items : [where];
  if (conjuncts.length !== 1) return false;
  const [node] = conjuncts;
  return node.op === 'eq' && typeof node.value === 'string' && columnFor(className, node.path)?.kind === 'string';
}

/**
 * A lone lower bound of a number on a JSON field, the page ordered by that field alone, rising (`{"score":{"$gte":n}}`,
 * `order=score`): PostgreSQL's generic plan reads the field's declared index in order from the bound for any value,
 * once the scope is in its text (dialect.pinnedScope: the partial index names its class) and the bound's edge is not
 * taken for the other end of a range (jsonCompare). test/storage/page-plans.test.ts asserts that plan.
 */
function risingRange(className: string, { where, order }: PageQuery): boolean {
  if ((where.op !== 'gt' && where.op !== 'gte') || typeof where.value !== 'number' || columnFor(className, where.path) !== null) return false;
  const path = where.path;
  return order.length === 1 && !order[0].descending && order[0].path.length === path.length && order[0].path.every((part, i) => part === path[i]);
}

/**
 * A lone lower bound on createdAt, the page in creation order (`{"createdAt":{"$gte":…}}`, `order=createdAt` or none),
 * named with any readers: a user's page (the role-protected one, planned at each run in 0.15-0.23 ms against 0.10-0.17
 * executing) then joins PageBatcher with the other pages of its shape, its roles resolved inside each page. In a batch
 * each page's bound is a value of the batch's JSON, so the plan is the generic one: for a class of some thousands it reads
 * objects_created_id_idx in order from the bound, filtering by the readers, as the custom plans do; for a smaller one it
 * sorts the range's bitmap (a third of the class, as it guesses a bound range). test/storage/page-batches.test.ts.
 */
function risingCreation({ where, order }: PageQuery): boolean {
  const isCreatedAt = (path: string[]) => path.length === 1 && path[0] === 'createdAt';
  if ((where.op !== 'gt' && where.op !== 'gte') || !isCreatedAt(where.path)) return false;
  return order.length === 0 || (order.length === 1 && !order[0].descending && isCreatedAt(order[0].path));
}

/**
 * A lone $nearSphere within a distance, nearest first (an unbounded one is read as such pages of growing radius:
 * SqlStore): whatever the point, PostgreSQL's generic plan seeks the box's latitude bands in objects_geo_cell_idx
 * and sorts the few points they hold, as the custom plans do (test/storage/page-plans.test.ts).
 */
function boundedNearest(where: Where): boolean {
  return where.op === 'near' && where.nearest && where.maxDistance !== null && where.maxDistance < Math.PI;
}

/**
 * A lone $inQuery in insertion order whose subquery is a lone equality of one value in insertion order: the
 * subquery's page is then pinned (a split equality alone), and with the outer page's scope and its probes' written
 * into the text too, PostgreSQL's generic plan reads the subquery's declared index and probes the pointer's, as the
 * custom plans do. Bound, that plan could use neither and read both classes whole (2 s a page: page-plans test).
 */
function pinnableInQuery(className: string, { where, order }: PageQuery): boolean {
  if (where.op !== 'inQuery' || where.inArray || order.length !== 0) return false;
  const inner = where.query;
  return inner.order.length === 0 && inner.where.op === 'eq' && isScalar(inner.where.value) && columnFor(inner.className, inner.where.path) === null
    && columnFor(className, where.path) === null;
}

/** The order reads only columns of the page's select, objectSelect or objectJsonSelect (the union's outer ORDER BY sees nothing else). */
function orderOnSelected(className: string, order: OrderKey[]): boolean {
  return order.every((key) => {
    const column = columnFor(className, key.path);
    return column === null || column.kind === 'time' || key.path[0] === 'objectId';
  });
}

/**
 * The statement of a page of a class: `select` (objectSelect, objectJsonSelect) of the rows `where` and the readers keep,
 * in `order`. An equality on a field is "holds the value, or is an array holding it" (an $in: "holds one
 * of the values, or is an array holding one"), which no single ordered index answers; where the dialect
 * splits it (jsonEqualsBranches), each side reads its own index
 * in order up to skip + limit rows, and the page is taken from their union: a page of an indexed
 * equality reads about `limit` rows however large the class (bench/RESULTS.md, "Objects").
 * test/storage/query-split.test.ts holds its pages to the unsplit statement's.
 */
export function findStatement(scope: WhereScope, select: Sql, query: PageQuery): Sql {
  return pageOf(scope, { select }, query).statement;
}

type PageQuery = { where: Where; order: OrderKey[]; limit: number; skip: number };

/**
 * What a page reads of each row (`select`, of `objects o`) and, when it differs, what the statement returns of
 * those (`columns`, of `o`): a split page's outer ORDER BY reads the selected columns as they are (o.data as
 * jsonb), so a page returning data as text (objectJsonColumns) casts it there, not in its sides.
 */
export interface PageSelect {
  select: Sql;
  columns?: Sql;
}

/**
 * findStatement's page as a store runs it: a reused shape (dialect.reusedShape, a named statement on PostgreSQL)
 * only when its whole scope is written into its text (dialect.pinnedScope: application, class, and the public
 * readers or none), the one page known to plan well once for every value. Any other page runs unnamed, planned
 * with its values at each run. Named, PostgreSQL weighs a generic plan from the sixth run on and takes it when its
 * estimate is below the custom plans' average; with the application and class bound that plan can use no declared
 * (partial) index and estimates the whole table, not the class, and with a user's readers bound it sorts all of a
 * value's rows: it flipped an $inQuery page to reading both classes whole (2 s a page), and counts the same way
 * (test/storage/page-plans.test.ts). Whether a shape flips depends on the data, so the rule names what is known to
 * plan well rather than excluding what was seen to flip.
 */
export function pageStatement(scope: WhereScope, select: PageSelect, query: PageQuery): Sql {
  const { statement, plannedOnce } = pageOf(scope, select, query);
  return plannedOnce ? scope.dialect.reusedShape(statement) : statement;
}

/**
 * A page picked by `picked` reading only each row's key (dialect.rowKey), then `read` of the rows it keeps, by that
 * key, in `order`: an $inQuery page's probes read the pointer's declared index alone where it holds the pointer's
 * class and the readers (SQLite: schema-ddl.ts), and the rows' JSON is read for the page's 20, not for the 100 the
 * subquery's ids probe: 570-620 -> 300 µs for bench:subqueries' statement (bench/RESULTS.md, Subqueries).
 */
function lateRows(rowKey: Sql, picked: (read: Sql) => Sql, read: Sql, order: Sql): Sql {
  return sql`SELECT ${read} FROM (${picked(sql`${rowKey} AS k`)}) p CROSS JOIN objects o ON ${rowKey} = p.k ORDER BY ${order}`;
}

function pageOf(scope: WhereScope, { select, columns }: PageSelect, query: PageQuery): { statement: Sql; plannedOnce: boolean } {
  const { dialect, appId, className } = scope;
  const nearest = query.order.length === 0 ? nearestOf(query.where) : null;
  const order = nearest ? nearestOrder(dialect, nearest) : compileOrder(dialect, className, query.order);
  const split = !nearest && orderOnSelected(className, query.order) ? equalitySplit(scope, query.where) : null;
  // Shapes one plan serves for any value, so their scope may be written into the text (dialect.pinnedScope; a
  // declared index is partial on its class): a split equality alone in insertion order reads the declared index
  // (value, created_at, id) in order, a rising range ordered by its field that index from its bound (risingRange),
  // and a bounded nearest-first page its box's bands of objects_geo_cell_idx (boundedNearest).
  const rising = split === null && risingRange(className, query);
  const creation = split === null && risingCreation(query);
  const near = nearest !== null && boundedNearest(query.where);
  const inQuery = split === null && pinnableInQuery(className, query);
  const pinned = (split !== null && split.alone && query.order.length === 0) || rising || creation || near || inQuery ? dialect.pinnedScope(appId, className, scope.readers) : null;
  const readable = pinned?.readable ?? readableSql(dialect, appId, scope.readers);
  const rows = (condition: Sql, source = sql`objects o`, read = columns ?? select) => sql`SELECT ${read} FROM ${source}
    WHERE o.app_id = ${pinned?.appId ?? dialect.boundScope(appId)} AND o.class_name = ${pinned?.className ?? dialect.boundScope(className)} AND ${condition} AND ${readable}`;
  // Literals, not parameters: with a bound LIMIT SQLite's planner does not know the page is small and may
  // read a whole class in the default order instead of a side's few index entries, and merges the split's
  // sides three times slower (bench/RESULTS.md). Both are whole numbers checked by the query parser.
  const page = sql.raw(`LIMIT ${Number(query.limit)} OFFSET ${Number(query.skip)}`);
  const publicOrMaster = scope.readers === null || (scope.readers.length === 1 && scope.readers[0] === '*');
  const source = split === null ? pointerSource(scope, query.where, inQuery ? pinned : null) : null;
  if (source !== null) {
    const picked = (read?: Sql) => sql`${rows(source.condition, source.from, read)} ORDER BY ${order} ${page}`;
    return { statement: dialect.rowKey === null ? picked() : lateRows(dialect.rowKey, picked, columns ?? select, order), plannedOnce: publicOrMaster && inQuery && pinned !== null };
  }
  if (split === null) {
    const statement = sql`${rows(compileWhere(scope, query.where))} ORDER BY ${order} ${page}`;
    return { statement, plannedOnce: (creation && pinned !== null) || (publicOrMaster && (uniqueEquality(className, query.where) || ((rising || near) && pinned !== null))) };
  }
  const top = sql.raw(String(query.limit + query.skip));
  // Each side a subquery of its own: SQLite allows ORDER BY and LIMIT only there in a compound select.
  const side = (statement: Sql) => sql`SELECT * FROM (${statement} ORDER BY ${order} LIMIT ${top})`;
  const statement = sql`SELECT ${columns ?? sql`*`} FROM (${side(rows(split.value, split.valueFrom, select))} a UNION ALL ${side(rows(split.arrays, split.arraysFrom, select))} b) o
    ORDER BY ${order} ${page}`;
  // Planned once only with nothing of the scope bound: not a user's readers (their generic plan sorts all of a value's
  // rows), nor an $in, whose probes bind the application and class (inBranches) and so read no declared index.
  return { statement, plannedOnce: pinned !== null && split.oneValue && (pinned.readable !== null || scope.readers === null) };
}

/**
 * The statement counting the rows of a class `where` and the readers keep (`n`): a top-level $inQuery
 * read from its ids as the page reads it (pointerSource), so a count probes the index a page probes
 * rather than leaving the choice to the statistics (a plain IN may scan the class on SQLite).
 */
export function countStatement(scope: WhereScope, where: Where): Sql {
  const { dialect, appId, className } = scope;
  const source = pointerSource(scope, where);
  return sql`SELECT count(*) AS n FROM ${source?.from ?? sql`objects o`}
    WHERE o.app_id = ${dialect.boundScope(appId)} AND o.class_name = ${dialect.boundScope(className)} AND ${source?.condition ?? compileWhere(scope, where)}
    AND ${readableSql(dialect, appId, scope.readers)}`;
}

export { operators as comparisonOperators };
