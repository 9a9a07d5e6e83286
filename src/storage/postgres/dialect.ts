import { sql } from 'kysely';
import { postgresClassIndexes, postgresMigrationLock } from './schema-ddl.ts';
import type { Regex } from '../../objects/regex.ts';
import type { Json, OrderKey } from '../../objects/types.ts';
import type { Comparison, EqualitySides, Sql, SqlDialect, ViolatedIndex } from '../sql/dialect.ts';
import { comparisonOperators } from '../sql/where.ts';
import { encodeImportBatch } from './import-batch.ts';
import { postgresRegex } from './regex.ts';
import { preparedShape } from './prepared.ts';
import { quoteLiteral } from '../sql/literal.ts';
import { jsonbTextAsJson } from './jsonb-text.ts';

/**
 * The field with its path as a quoted SQL literal, not a bound parameter: the planner matches an index
 * on an expression only when the query spells the same expression (a class index on
 * (data #> '{a}'::text[])).
 */
function field(path: string[]): Sql {
  return sql`(o.data #> ${pathLiteral(path)})`;
}

/** '{"a","b"}'::text[]: each element double-quoted for the array syntax, the whole single-quoted for SQL. */
export function pathLiteral(path: string[]): Sql {
  const array = `{${path.map((segment) => `"${segment.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;
  return sql.raw(`'${array.replaceAll("'", "''")}'::text[]`);
}

/**
 * The document {"a": {"b": value}} for the path a.b, or null when a segment is all digits (#> reads it
 * as an array position, which containment cannot say).
 */
function nested(path: string[], value: Json): string | null {
  if (path.some((segment) => /^\d+$/.test(segment))) return null;
  return JSON.stringify(path.reduceRight<Json>((inner, segment) => ({ [segment]: inner }), value));
}

/**
 * Documents whose containment in o.data means "the field equals the scalar or, being an array,
 * contains it" (what (o.data #> path) @> value says): o.data @> doc is what the GIN index on
 * objects.data (jsonb_path_ops) serves, with no index declared on the field.
 */
function scalarDocuments(path: string[], value: Json): string[] | null {
  const plain = nested(path, value);
  const inArray = nested(path, [value]);
  return plain === null || inArray === null ? null : [plain, inArray];
}

/**
 * An $in of scalars as the two sides of jsonEqualsBranches, each read through an index whatever the
 * statistics say. The value side: the ids of the rows equal to each value, probed one value at a time
 * (LATERAL, kept from being flattened by OFFSET 0) through the declared index on the field or, with none,
 * the GIN index (the same value as containment); as one condition on the whole list (containment of any
 * of its documents), the planner, estimating from a sample of whole documents, once took 106 rows of 20,000
 * for 3 and read the class in the page's order filtering every row (test/storage/query-plans.test.ts).
 * The array side: the declared index's range of arrays with containment, as for one value. Null (one
 * condition, jsonIn) for a path with a segment of digits, which containment cannot say.
 */
function inBranches(path: string[], values: Array<string | number | boolean>, scope: { appId: string; className: string }): EqualitySides | null {
  const inArrays = values.map((value) => nested(path, [value]));
  if (inArrays.some((doc) => doc === null)) return null;
  const x = field(path);
  // {"a": {"b": v}} for the path a.b, built around each probed value.
  const document = path.reduceRight<Sql>((inner, segment) => sql`jsonb_build_object(${segment}::text, ${inner})`, sql`i.v`);
  const probed = sql`SELECT m.id FROM unnest(${sql.val(values.map((value) => JSON.stringify(value)))}::jsonb[]) i(v)
    CROSS JOIN LATERAL (SELECT m.id FROM objects m WHERE m.app_id = ${scope.appId} AND m.class_name = ${scope.className}
      AND (m.data #> ${pathLiteral(path)}) = i.v AND m.data @> ${document} OFFSET 0) m`;
  return {
    value: sql`o.id = ANY(ARRAY(${probed}))`,
    arrays: sql`(${x} > 'true'::jsonb AND ${x} < '{}'::jsonb AND o.data @> ANY(${sql.val(inArrays)}::jsonb[]))`,
  };
}

export const postgresDialect: SqlDialect = {
  kind: 'postgres',
  classIndexes: postgresClassIndexes,
  underMigrationLock: postgresMigrationLock,

  jsonEquals(path: string[], value: Json): Sql {
    const x = field(path);
    if (value === null) return sql`(${x} IS NULL OR ${x} = 'null'::jsonb)`;
    if (typeof value === 'object') {
      // Containment first (the GIN index narrows to documents holding at least the value), then exact equality.
      const doc = nested(path, value);
      const exact = sql`coalesce(${x} = ${JSON.stringify(value)}::jsonb, false)`;
      return doc === null ? exact : sql`(o.data @> ${doc}::jsonb AND ${exact})`;
    }
    const docs = scalarDocuments(path, value);
    // jsonb containment: a scalar contains itself and a top-level array contains its scalar elements.
    if (docs === null) return sql`coalesce(${x} @> ${JSON.stringify(value)}::jsonb, false)`;
    return sql`(o.data @> ${docs[0]}::jsonb OR o.data @> ${docs[1]}::jsonb)`;
  },

  jsonEqualsBranches(path, values, scope) {
    if (values.length !== 1) return inBranches(path, values, scope);
    const [value] = values;
    const x = field(path);
    const json = JSON.stringify(value);
    // The array side twice: as a range of the declared index (jsonb's order puts every non-empty array
    // after true and before {}; on a field that holds no arrays it is empty) and as containment, which
    // the GIN index serves on fields that do (a path with a numeric segment has no such document); the
    // planner takes the cheaper.
    const inArray = nested(path, [value]);
    const holds = inArray === null ? sql`${x} @> ${json}::jsonb` : sql`o.data @> ${inArray}::jsonb`;
    return { value: sql`${x} = ${json}::jsonb`, arrays: sql`(${x} > 'true'::jsonb AND ${x} < '{}'::jsonb AND ${holds})` };
  },

  jsonIn(path: string[], values: Json[]): Sql {
    const x = field(path);
    // As jsonEquals, each kind of value with the whole list bound as one jsonb[] parameter.
    const any: Sql[] = [];
    const scalars = values.filter((v) => v !== null && typeof v !== 'object');
    const docs = scalars.map((v) => scalarDocuments(path, v));
    if (scalars.length && docs.every((d) => d !== null)) {
      // A bitmap scan of the GIN index per document.
      any.push(sql`o.data @> ANY(${sql.val(docs.flat())}::jsonb[])`);
    } else if (scalars.length) {
      any.push(sql`coalesce(${x} @> ANY(${sql.val(scalars.map((v) => JSON.stringify(v)))}::jsonb[]), false)`);
    }
    const composite = values.filter((v) => v !== null && typeof v === 'object').map((v) => JSON.stringify(v));
    if (composite.length) any.push(sql`coalesce(${x} = ANY(${sql.val(composite)}::jsonb[]), false)`);
    if (values.includes(null)) any.push(sql`(${x} IS NULL OR ${x} = 'null'::jsonb)`);
    return sql`(${sql.join(any, sql` OR `)})`;
  },

  typedValue: (value, type) => sql`${value}::${sql.raw(type)}`,

  columnIn(column: Sql, kind: 'time' | 'string', values: Array<string | number>): Sql {
    return sql`${column} = ANY(${sql.val(values)}::${sql.raw(kind === 'time' ? 'bigint[]' : 'text[]')})`;
  },

  jsonCompare(path: string[], op: Comparison, value: string | number): Sql {
    const x = field(path);
    if (typeof value === 'number') {
      // Numbers only by jsonb's own order (strings sort below every number, booleans and the rest above;
      // ±1e400 lie past every double), so the whole test is one range of an index on the field, which the
      // planner estimates from its statistics: with jsonb_typeof(x) = 'number' instead it took 0.5% of
      // the rows for the test and sorted a bitmap of half a class (12 ms a page at 10,000 objects).
      // IS NOT NULL: false, not NULL, for a missing field (NOT keeps its meaning).
      // A lower bound's edge is wrapped in IS TRUE (the same test, x being not null) so that the planner does not
      // pair it with the bound as one range: paired, a bound parameter's range is guessed at 0.5% of the rows, and
      // the generic plan of a rising range page read a bitmap of the whole range and sorted it, priced above the
      // custom plans, so the page was planned at every run; alone, `x >= $1` is a third of them, and that plan reads
      // the index in order (where.ts risingRange). The edge is then a filter, past the numbers in the index's order.
      const edge = op === 'gt' || op === 'gte' ? sql`(${x} < '1e400'::jsonb) IS TRUE` : sql`${x} > '-1e400'::jsonb`;
      return sql`(${x} IS NOT NULL AND ${x} ${comparisonOperators[op]} ${JSON.stringify(value)}::jsonb AND ${edge})`;
    }
    // Strings in byte order, as SQLite compares them, spelt as the declared index's `<name>_s` (schema-ddl.ts)
    // with its condition, so a range reads it. IS NOT NULL: false, not NULL, for a missing field.
    return sql`(${x} IS NOT NULL AND jsonb_typeof(${x}) = 'string' AND (o.data #>> ${pathLiteral(path)}) COLLATE "C" ${comparisonOperators[op]} ${value})`;
  },

  jsonExists(path: string[]): Sql {
    return sql`${field(path)} IS NOT NULL`;
  },

  jsonRegex(path: string[], regex: Regex): Sql {
    const x = field(path);
    return sql`coalesce(jsonb_typeof(${x}) = 'string' AND (${x} #>> '{}') ~ ${postgresRegex(regex.tree)}, false)`;
  },

  jsonSize(path: string[], size: number): Sql {
    const x = field(path);
    // Bound as bigint: PostgreSQL would type the parameter integer and refuse a $size past 2^31 (a 500,
    // and for a push a page query that fails each time it is tried).
    return sql`coalesce(jsonb_typeof(${x}) = 'array' AND jsonb_array_length(${x}) = ${size}::bigint, false)`;
  },

  jsonContainsAll(path: string[], values: Json[]): Sql {
    const x = field(path);
    return sql`coalesce(jsonb_typeof(${x}) = 'array' AND ${x} @> ${JSON.stringify(values)}::jsonb, false)`;
  },

  jsonOrder(key: OrderKey): Sql {
    // NULL (missing) sorts first ascending, as SQLite does, so both stores page alike.
    return sql`${field(key.path)} ${sql.raw(key.descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST')}`;
  },

  pointerIn(path, className, ids, scope) {
    const objectId = pathLiteral([...path, 'objectId']);
    // The objects holding each id, probed one id at a time through an index on the field's objectId
    // (LATERAL, kept from being flattened by OFFSET 0), as one array of object ids: an IN or a join on the
    // subquery left the planner guessing half the class matched, and it read the class in the page's
    // order filtering each row (46 ms against 3.8 ms a page at 20,000 objects).
    return sql`o.id = ANY(ARRAY(SELECT x.id FROM (${ids}) i(v) CROSS JOIN LATERAL (SELECT m.id FROM objects m
      WHERE m.app_id = ${scope.appId} AND m.class_name = ${scope.className} AND (m.data #> ${objectId}) = to_jsonb(i.v)
      AND coalesce((m.data #> ${pathLiteral([...path, 'className'])}) = ${JSON.stringify(className)}::jsonb, false) OFFSET 0) x))`;
  },

  pointerSource(path, className, ids, scope) {
    // pointerIn's probes as the page's rows themselves: each row read once, not probed then read again by id.
    return {
      from: sql`(${ids}) i(v) CROSS JOIN LATERAL (SELECT * FROM objects m WHERE m.app_id = ${scope.appId}
        AND m.class_name = ${scope.className} AND (m.data #> ${pathLiteral([...path, 'objectId'])}) = to_jsonb(i.v) OFFSET 0) o`,
      condition: sql`coalesce(${field([...path, 'className'])} = ${JSON.stringify(className)}::jsonb, false)`,
    };
  },

  pointerInArray(path, className, ids, scope) {
    // Driven from the subquery's ids as pointerIn is: for each id, the objects whose array holds
    // {"className": …, "objectId": id}, a containment the GIN index on data answers; DISTINCT, as one
    // object may hold several of the ids. A path segment of digits (an array position for #>) cannot be
    // said as containment: its elements are read row by row.
    const template = nested(path, [{ className, objectId: '' }]);
    if (template === null) {
      return sql`coalesce(jsonb_typeof(${field(path)}) = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements(${field(path)}) e(v)
        WHERE e.v ->> 'className' = ${className} AND e.v ->> 'objectId' IN (SELECT i.v FROM (${ids}) i(v))), false)`;
    }
    const doc = sql`jsonb_set(${template}::jsonb, ${pathLiteral([...path, '0', 'objectId'])}, to_jsonb(i.v))`;
    return sql`o.id = ANY(ARRAY(SELECT DISTINCT x.id FROM (${ids}) i(v) CROSS JOIN LATERAL (SELECT m.id FROM objects m
      WHERE m.app_id = ${scope.appId} AND m.class_name = ${scope.className} AND m.data @> ${doc} OFFSET 0) x))`;
  },

  jsonValue(path: string[]): Sql {
    return field(path);
  },

  textAsValue(text: Sql): Sql {
    return sql`to_jsonb(${text})`;
  },

  timeAsValue(ms: Sql): Sql {
    return sql`jsonb_build_object('__type', 'Date', 'iso', to_char(to_timestamp(${ms} / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || to_char(${ms} % 1000, 'FM"."000"Z"'))`;
  },

  valueIn(value: Sql, values: Sql): Sql {
    return sql`coalesce(${value} IN (${values}), false)`;
  },

  jsonValueIn(path: string[], values: Sql): Sql {
    const x = field(path);
    return sql`coalesce(${x} IN (${values}) OR (jsonb_typeof(${x}) = 'array'
      AND EXISTS (SELECT 1 FROM jsonb_array_elements(${x}) e(v) WHERE e.v IN (${values}))), false)`;
  },

  readableBy(readers: readonly string[], roles: Sql | null): Sql {
    const direct = sql`o.readers && ${sql.val([...readers])}::text[]`;
    // ARRAY(roles) is an InitPlan: run once a statement, and only when a row reaches it.
    return roles === null ? direct : sql`(${direct} OR o.readers && ARRAY(${roles}))`;
  },

  // Both parameters typed in the text, so a page holding it can be batched (PageBatcher reads each from JSON as text).
  memberRoles: (appId, members) => sql`SELECT roost_member_roles(${appId}::text, ${sql.val([...members])}::text[])`,

  encodeJson: (value) => (value === null ? null : JSON.stringify(value)),
  decodeJson: <T>(raw: unknown) => (raw ?? null) as T,
  // jsonb's text, which the driver would parse, made JSON.stringify's without building the object (jsonb-text.ts).
  storedText: (data) => sql`${data}::text`,
  dataJson: (raw) => (typeof raw === 'string' && raw.startsWith('{') ? jsonbTextAsJson(raw) : JSON.stringify((typeof raw === 'string' ? JSON.parse(raw) : raw) ?? {})),
  encodeReaders: (readers) => readers,
  rowLock: sql`FOR UPDATE`,
  rowLockOf: (alias: string) => sql`FOR UPDATE OF ${sql.raw(alias)}`,
  rowLockSkipLocked: sql`FOR UPDATE SKIP LOCKED`,
  // A transaction-scoped advisory lock on the key's hash, released at commit.
  serialiseOn: (key: string) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`,
  relaxedCommit: sql`SET LOCAL synchronous_commit = off`,
  // A list is bound as one array parameter, whatever its length.
  idsPerStatement: Infinity,

  jsonField(document: Sql, field: string): Sql {
    return sql`(${document} ->> ${field})`;
  },

  jsonSet(document: Sql, field: string, value: Json): Sql {
    return sql`jsonb_set(${document}, ${sql.val([field])}::text[], ${JSON.stringify(value)}::jsonb)`;
  },

  textRows(columns: Array<Array<string | null>>): Sql {
    const names = columns.map((_, i) => (i === 0 ? 'v' : `v${i + 1}`));
    const arrays = columns.map((column) => sql`${column}::text[]`);
    return sql`unnest(${sql.join(arrays)}) AS t(${sql.raw(names.join(', '))})`;
  },

  refRows(refs) {
    const columns = [refs.map((ref) => ref.className), refs.map((ref) => ref.objectId)];
    return { rows: () => postgresDialect.textRows(columns), parameters: columns };
  },

  idsPresent(appId: string, className: string, ids: string[]) {
    // One primary-key probe per id (LATERAL): right after a bulk load the statistics are stale,
    // and the planner otherwise scans the whole class through another index.
    return sql<{ id: string }>`SELECT t.id FROM unnest(${ids}::text[]) AS t(id)
      CROSS JOIN LATERAL (SELECT 1 FROM objects o WHERE o.app_id = ${appId} AND o.class_name = ${className}
        AND o.id = t.id LIMIT 1) x`;
  },

  // Rows encoded for COPY on the parse threads.
  importBatch: encodeImportBatch,
  boundScope: (value: string) => sql`${value}`,
  afterAnalyze: [],
  reusedShape: preparedShape,
  pinnedScope: (appId, className, readers) => ({
    appId: sql.raw(quoteLiteral(appId)),
    className: sql.raw(quoteLiteral(className)),
    readable: readers !== null && readers.length === 1 && readers[0] === '*' ? sql`o.readers && '{*}'::text[]` : null,
  }),
  // An index-only scan needs every column a statement reads of the table in the index, and a declared index holds
  // expressions of data, not data: the planner reads the rows whatever else the index holds (bench/RESULTS.md, Subqueries).
  rowKey: null,

  uniqueViolation(error: unknown): ViolatedIndex | null {
    const e = error as { code?: string; constraint?: string };
    if (e?.code !== '23505') return null;
    return { name: e.constraint ?? '' };
  },
};
