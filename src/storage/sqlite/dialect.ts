import { sql } from 'kysely';
import { sqliteClassIndexes, sqliteWriteLock } from './schema-ddl.ts';
import type { Regex } from '../../objects/regex.ts';
import type { Json, OrderKey } from '../../objects/types.ts';
import type { Comparison, Sql, SqlDialect, ViolatedIndex } from '../sql/dialect.ts';
import type { ImportBatch, ImportRecord } from '../ops-store.ts';
import { comparisonOperators } from '../sql/where.ts';

function jsonPath(path: string[]): string {
  return '$' + path.map((segment) => `."${segment}"`).join('');
}

/**
 * json_extract(o.data, '<path>') with the path as a quoted SQL literal, not a bound parameter: the
 * planner matches an index on an expression only when the query spells the same expression, and an
 * index on json_extract(data, '$."a"') holds a literal.
 */
function extract(path: string[]): Sql {
  return sql`json_extract(o.data, ${pathLiteral(path)})`;
}

function pathLiteral(path: string[]): Sql {
  return sql.raw(`'${jsonPath(path).replaceAll("'", "''")}'`);
}

/** The type of the field, '' when it is missing, so a comparison on it is never NULL (NOT keeps its meaning). */
function typeOf(path: string[]): Sql {
  return sql`coalesce(json_type(o.data, ${pathLiteral(path)}), '')`;
}

/** json_type names of the values a JS scalar can equal. */
function typesOf(value: string | number | boolean): string[] {
  if (typeof value === 'string') return ['text'];
  if (typeof value === 'number') return ['integer', 'real'];
  return [value ? 'true' : 'false'];
}

function bindable(value: string | number | boolean): string | number {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

/**
 * A scalar (its json_type and value) is one of the listed scalars: each kind's list is one JSON
 * parameter read by json_each, so $in with thousands of values is a short expression over few variables.
 */
function scalarIn(type: Sql, value: Sql, values: Json[]): Sql[] {
  const strings = values.filter((v) => typeof v === 'string');
  const numbers = values.filter((v) => typeof v === 'number');
  const flags = [...new Set(values.filter((v) => typeof v === 'boolean').map((v) => (v ? 'true' : 'false')))];
  const parts: Sql[] = [];
  if (strings.length) parts.push(sql`(${type} = 'text' AND ${value} IN (SELECT value FROM json_each(${JSON.stringify(strings)})))`);
  if (numbers.length) {
    parts.push(sql`(${type} IN ('integer', 'real') AND ${value} IN (SELECT value FROM json_each(${JSON.stringify(numbers)})))`);
  }
  if (flags.length) parts.push(sql`${type} IN (${sql.join(flags.map((flag) => sql.lit(flag)))})`);
  return parts;
}

/**
 * What readableBy searches the readers column for: the principal quoted as in the JSON array.
 * Principals never contain quotes (parseAcl), so it occurs exactly when it is an element.
 */
export function readerNeedle(principal: string): string {
  return JSON.stringify(principal);
}

/**
 * A row whose readers name a role (the needle of 'role:') and share one with `roles`: rows without role
 * entries never run the roles query, and `IN (SELECT …)` is built once a statement (SQLite's OP_Once).
 */
export function byRoles(roles: Sql): Sql {
  return sql`(instr(o.readers, '"role:') > 0 AND EXISTS (SELECT 1 FROM json_each(o.readers) j WHERE j.value IN (${roles})))`;
}

/** The most values an $in is split with (jsonEqualsBranches); a longer list stays one condition (jsonIn). */
const maxSplitValues = 1000;

export const sqliteDialect: SqlDialect = {
  kind: 'sqlite',
  classIndexes: sqliteClassIndexes,
  underMigrationLock: sqliteWriteLock,

  jsonEquals(path: string[], value: Json): Sql {
    const p = pathLiteral(path);
    if (value === null) return sql`coalesce(json_type(o.data, ${p}), 'null') = 'null'`;
    if (typeof value === 'object') {
      return sql`(json_type(o.data, ${p}) IN ('object', 'array') AND json_extract(o.data, ${p}) = json(${JSON.stringify(value)}))`;
    }
    const types = sql.join(typesOf(value).map((t) => sql.lit(t)));
    const bound = bindable(value);
    // The cheap comparison first: most rows fail it, and SQLite caches the parse for json_type.
    return sql`(CASE
      WHEN json_extract(o.data, ${p}) = ${bound} AND json_type(o.data, ${p}) IN (${types}) THEN 1
      WHEN json_type(o.data, ${p}) = 'array' THEN EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e WHERE e.type IN (${types}) AND e.value = ${bound})
      ELSE 0 END)`;
  },

  jsonEqualsBranches(path, values, scope) {
    // A long $in stays one condition (jsonIn): its valueFrom would read every match of the list and sort them.
    if (values.length > maxSplitValues) return null;
    const p = pathLiteral(path);
    // The values are bound (the one value as a parameter, lists as scalarIn's JSON parameters): a page's text
    // is the same for every value, so the statement cache keeps one statement, not one a value (a prepare is
    // 70-170 µs; 500 groups or 1,000 categories overflowed the 500-text cache). They were literals since 1a14819,
    // which saw SQLite sort all of a bound value's matches (1 ms against 94 µs); with the class bound as +?, no
    // value samples (afterAnalyze) and literal limits, the plans are the same bound or literal, with and without
    // statistics (test/storage/query-split.test.ts asserts the value's side unsorted).
    const elements = scalarIn(sql`e.type`, sql`e.value`, values);
    const arrays = sql`(json_type(o.data, ${p}) = 'array' AND EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e WHERE ${sql.join(elements, sql` OR `)}))`;
    // An array's json_extract is its text, '[' first: a range of a declared index that holds no scalar
    // of the types compared, and nothing at all on a field that holds no arrays. Read first (CROSS JOIN
    // fixes SQLite's loop order), then the rows by rowid: left to choose, with statistics of some indexes
    // and not others, the planner read the whole class through another index (9.8 ms against 0.25 ms).
    const arraysFrom = sql`(SELECT rowid AS r FROM objects WHERE app_id = +${scope.appId} AND class_name = +${scope.className}
      AND json_extract(data, ${p}) >= '[' AND json_extract(data, ${p}) < '\\') arrays CROSS JOIN objects o ON o.rowid = arrays.r`;
    const one = values.length === 1 ? values[0] : null;
    if (one !== null) {
      const types = sql.join(typesOf(one).map((t) => sql.lit(t)));
      // One value as `=`, read in the page's order from the declared index. json_extract's value tells its type
      // but for 0 and 1 (true and false read as 1 and 0) and a string starting with '[' or '{' (an array's or
      // object's text): only those run the json_type test, which parses each row's JSON (~8 µs a page of 20).
      // The test of the bound value keeps the text the same for every value of a type (StatementShapes). The row's
      // JSON is read by its rowid, not as o.data, so the rest reads the declared index alone where it holds what the
      // page reads (a subquery's page: its readers, id and creation time; schema-ddl.ts): 200 -> 160 µs for the
      // 100 posts of bench:subqueries' page (bench/RESULTS.md, Subqueries).
      const typeTold = typeof one === 'number' ? sql`${one} NOT IN (0, 1)` : typeof one === 'string' ? sql`substr(${one}, 1, 1) NOT IN ('[', '{')` : sql`0`;
      const typed = sql`EXISTS (SELECT 1 FROM objects t WHERE t.rowid = o.rowid AND json_type(t.data, ${p}) IN (${types}))`;
      return { value: sql`(${extract(path)} = ${bindable(one)} AND (${typeTold} OR ${typed}))`, arrays, arraysFrom };
    }
    // Several values: their rows first, through the declared index, then by rowid (as arraysFrom): left to
    // choose, with no statistics the planner read the class in the page's order to spare the sort.
    const keys = JSON.stringify([...new Set(values.map(bindable))]);
    const valueFrom = sql`(SELECT rowid AS r FROM objects WHERE app_id = +${scope.appId} AND class_name = +${scope.className}
      AND json_extract(data, ${p}) IN (SELECT value FROM json_each(${keys}))) matched CROSS JOIN objects o ON o.rowid = matched.r`;
    // The index holds json_extract, where true is 1 and '1' is not 1: each kind of value tested with its types after it.
    const exact = scalarIn(sql`json_type(o.data, ${p})`, extract(path), values);
    return { value: sql`(${sql.join(exact, sql` OR `)})`, valueFrom, arrays, arraysFrom };
  },

  jsonIn(path: string[], values: Json[]): Sql {
    const p = pathLiteral(path);
    const any = scalarIn(sql`json_type(o.data, ${p})`, sql`json_extract(o.data, ${p})`, values);
    const elements = scalarIn(sql`e.type`, sql`e.value`, values);
    if (elements.length) {
      any.push(sql`(json_type(o.data, ${p}) = 'array' AND EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e WHERE ${sql.join(elements, sql` OR `)}))`);
    }
    if (values.includes(null)) any.push(sql`coalesce(json_type(o.data, ${p}), 'null') = 'null'`);
    const composite = values.filter((v) => v !== null && typeof v === 'object');
    if (composite.length) {
      // json_each gives objects and arrays as minified text, as json_extract does.
      any.push(sql`(json_type(o.data, ${p}) IN ('object', 'array') AND json_extract(o.data, ${p}) IN (SELECT value FROM json_each(${JSON.stringify(composite)})))`);
    }
    // coalesce: a missing field is "not in" (NULL would drop the row from a $nin as well).
    return sql`coalesce(${sql.join(any, sql` OR `)}, 0)`;
  },

  typedValue: (value) => sql`${value}`,

  columnIn(column: Sql, _kind: 'time' | 'string', values: Array<string | number>): Sql {
    return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
  },

  jsonCompare(path: string[], op: Comparison, value: string | number): Sql {
    const types = sql.join(typesOf(value).map((t) => sql.lit(t)));
    // The type test first makes the whole false (not NULL) for a missing field; the comparison reads an index on the field.
    // The bound as +? (no affinity either way, so it compares alike): with sqlite_stat4's samples, a bound value there was
    // looked up in them and the page prepared again at every run (range + order 180-290 -> 100-170 µs in-process).
    if (typeof value === 'string') return sql`(${typeOf(path)} IN (${types}) AND ${extract(path)} ${comparisonOperators[op]} +${value})`;
    // A number above 1 from below (or below 0 from above) is passed by no boolean (json_extract reads true and false
    // as 1 and 0), so a value json_extract reads below every text (a number: texts, arrays and objects read as text)
    // is a number: a test of the index's own value, where json_type parses each row's JSON (a range page of 20,
    // 49 -> 42 µs in its statement). The bound's test keeps the text one for every number (StatementShapes); a
    // missing field still makes the whole false.
    const typeTold = op === 'gt' || op === 'gte' ? sql`+${value} > 1` : sql`+${value} < 0`;
    return sql`((coalesce(${typeTold} AND ${extract(path)} < '', 0) OR ${typeOf(path)} IN (${types})) AND ${extract(path)} ${comparisonOperators[op]} +${value})`;
  },

  jsonExists(path: string[]): Sql {
    return sql`json_type(o.data, ${jsonPath(path)}) IS NOT NULL`;
  },

  jsonRegex(path: string[], regex: Regex): Sql {
    const p = jsonPath(path);
    return sql`coalesce(json_type(o.data, ${p}) = 'text' AND roost_regexp(json_extract(o.data, ${p}), ${regex.re2}), 0)`;
  },

  jsonSize(path: string[], size: number): Sql {
    const p = jsonPath(path);
    return sql`coalesce(json_type(o.data, ${p}) = 'array' AND json_array_length(o.data, ${p}) = ${size}, 0)`;
  },

  jsonContainsAll(path: string[], values: Json[]): Sql {
    const p = jsonPath(path);
    // No listed value (one JSON parameter) is missing from the array; integer and real are one kind.
    return sql`coalesce(json_type(o.data, ${p}) = 'array' AND NOT EXISTS (SELECT 1 FROM json_each(${JSON.stringify(values)}) v
      WHERE NOT EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e
        WHERE (CASE WHEN v.type IN ('integer', 'real') THEN e.type IN ('integer', 'real') ELSE e.type = v.type END) AND e.value IS v.value)), 0)`;
  },

  jsonOrder(key: OrderKey): Sql {
    return sql`${extract(key.path)} ${sql.raw(key.descending ? 'DESC' : 'ASC')}`;
  },

  pointerIn(path: string[], className: string, ids: Sql): Sql {
    const id = extract([...path, 'objectId']);
    // The ids without the id column's text affinity (+), which keeps the planner off an index on an
    // expression (it scanned the class through a Bloom filter: 26 ms against 0.7 ms at 20,000 objects).
    return sql`(${id} IS NOT NULL AND ${id} IN (SELECT +i.v FROM (${ids}) i) AND coalesce(${extract([...path, 'className'])} = ${className}, 0))`;
  },

  pointerSource(path, className, ids, scope) {
    // Each id looked up in turn through an index on the field's objectId (CROSS JOIN fixes the loop
    // order): as a plain IN the planner's choice hung on the statistics, and without them (no ANALYZE
    // since the index was declared) it read the whole class in the page's order (32 ms against 0.3 ms a
    // page at 100,000 objects).
    return {
      from: sql`(${ids}) i CROSS JOIN objects o ON o.app_id = +${scope.appId} AND o.class_name = +${scope.className}
        AND ${extract([...path, 'objectId'])} = +i.v`,
      condition: sql`coalesce(${extract([...path, 'className'])} = ${className}, 0)`,
    };
  },

  pointerInArray(path, className, ids) {
    const p = pathLiteral(path);
    // The subquery's ids are read once (an uncorrelated IN: SQLite keeps them in an ephemeral index)
    // and each element of the row's array probes them. No index holds array elements: the rows read are
    // those the rest of the where leaves (the rows holding an array, with an index declared on the field).
    return sql`(json_type(o.data, ${p}) = 'array' AND EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e
      WHERE e.type = 'object' AND json_extract(e.value, '$.className') = ${className}
      AND json_extract(e.value, '$.objectId') IN (SELECT +i.v FROM (${ids}) i)))`;
  },

  jsonValue(path: string[]): Sql {
    // The value as minified JSON text: strings quoted, so '1' and 1 differ; writes store typed values
    // (pointers, dates) in one key order (src/objects/values.ts), so their texts compare as the values.
    return sql`(o.data -> ${pathLiteral(path)})`;
  },

  textAsValue(text: Sql): Sql {
    return sql`json_quote(${text})`;
  },

  timeAsValue(ms: Sql): Sql {
    // The text writes store (toISOString: milliseconds, Z) in their key order, so the texts compare as the values;
    // the milliseconds apart, as a fraction of a second in a double would round some of them.
    return sql`json_object('__type', 'Date', 'iso', strftime('%Y-%m-%dT%H:%M:%S', ${ms} / 1000, 'unixepoch') || printf('.%03dZ', ${ms} % 1000))`;
  },

  valueIn(value: Sql, values: Sql): Sql {
    return sql`coalesce(${value} IN (${values}), 0)`;
  },

  jsonValueIn(path: string[], values: Sql): Sql {
    const p = pathLiteral(path);
    // An element as jsonValue gives a field: its JSON text, read by its full path.
    return sql`coalesce((o.data -> ${p}) IN (${values}) OR (json_type(o.data, ${p}) = 'array'
      AND EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e WHERE (o.data -> e.fullkey) IN (${values}))), 0)`;
  },

  readableBy(readers: readonly string[], roles: Sql | null): Sql {
    // A string search in the readers' JSON array text, no JSON parse (readerNeedle).
    const direct = sql.join(readers.map((r) => sql`instr(o.readers, ${readerNeedle(r)}) > 0`), sql` OR `);
    if (roles === null) return sql`(${direct})`;
    return sql`(${direct} OR ${byRoles(roles)})`;
  },

  memberRoles: () => null,

  encodeJson: (value) => (value === null ? null : JSON.stringify(value)),
  decodeJson: <T>(raw: unknown) => (raw === null || raw === undefined ? null : JSON.parse(String(raw))) as T,
  storedText: (data) => data,
  // The stored text as it is: writes and imports store JSON.stringify's output, the same text parsing and
  // stringifying it again gives (push's json_set on _Installation rows writes otherwise; those are never sent so).
  dataJson: (raw) => (typeof raw === 'string' && raw.startsWith('{') ? raw : JSON.stringify(raw === null || raw === undefined ? {} : (JSON.parse(String(raw)) ?? {}))),
  encodeReaders: (readers) => JSON.stringify(readers),
  rowLock: sql``,
  // No row locks and nothing to serialise on: write transactions begin IMMEDIATE, one writer at a time across processes.
  rowLockOf: () => sql``,
  rowLockSkipLocked: sql``,
  serialiseOn: () => null,
  relaxedCommit: null,
  // Each id is bound on its own, well inside the 32,766 bound parameters of a statement.
  idsPerStatement: 1000,

  jsonField(document: Sql, field: string): Sql {
    return sql`json_extract(${document}, ${jsonPath([field])})`;
  },

  jsonSet(document: Sql, field: string, value: Json): Sql {
    return sql`json_set(${document}, ${jsonPath([field])}, json(${JSON.stringify(value)}))`;
  },

  textRows(columns: Array<Array<string | null>>): Sql {
    // One JSON parameter: an array of rows, each row an array read by position.
    const names = columns.map((_, i) => (i === 0 ? 'v' : `v${i + 1}`));
    const rows = JSON.stringify(columns[0].map((_, r) => columns.map((column) => column[r])));
    const fields = names.map((name, i) => `json_extract(value, '$[${i}]') AS ${name}`).join(', ');
    return sql`(SELECT ${sql.raw(fields)} FROM json_each(${rows})) AS t`;
  },

  refRows(refs) {
    // One JSON object, each id a key and its class the value, read with json_each's key and value: no
    // json_extract a pair (textRows' rows: ~1 µs a pair, a third of a 37-pair level's statement). json_each yields
    // every member of the text, a key given twice (one id in two classes) too: test/include-pages.test.ts. The ids
    // need no escapes (plausible ids); each class is written as JSON once a run of it (refs come grouped by class).
    let text = '';
    let className: string | undefined;
    let classJson = '';
    for (const ref of refs) {
      if (ref.className !== className) [className, classJson] = [ref.className, JSON.stringify(ref.className)];
      text += `,"${ref.objectId}":${classJson}`;
    }
    text = `{${text.slice(1)}}`;
    return { rows: () => sql`(SELECT value AS v, key AS v2 FROM json_each(${text})) AS t`, parameters: [text] };
  },

  idsPresent(appId: string, className: string, ids: string[]) {
    return sql<{ id: string }>`SELECT id FROM objects WHERE app_id = ${appId} AND class_name = ${className} AND id IN (${sql.join(ids)})`;
  },

  // The records themselves: the SQLite store inserts them with multi-row VALUES.
  importBatch: (appId: string, className: string, records: ImportRecord[]): ImportBatch => ({ kind: 'records', appId, className, records }),
  // Unary plus: the planner no longer matches the bound name with objects_role_name_key's `class_name = '_Role'`
  // (which ties the plan to the value, so SQLite re-planned a page's statement at every run: with afterAnalyze,
  // 140 -> 36 µs a page of 20 among 100,000), nor looks a bound application up in sqlite_stat4's samples, which
  // an ANALYZE not run by an import leaves (the page re-planned at every run again: 4-5 times its time). The
  // column keeps its index; text compares with text as before.
  boundScope: (value: string) => sql`+${value}`,
  // SQLite keeps a statement per text already, and literal values tie its plan to them.
  pinnedScope: () => null,
  rowKey: sql`o.rowid`,
  // ANALYZE's value samples (sqlite_stat4) tie every plan with a bound app or class to their values, so each
  // run re-plans; sqlite_stat1's counts stay, and ANALYZE sqlite_schema reloads them on this connection. Other
  // connections (a server running while `roost import` ran) load statistics only with the schema, and new rows in
  // an existing sqlite_stat1 do not change it: a schema change (a view made and dropped) makes them reload it at
  // their next statement. Without it such a server planned $nearSphere pages with no statistics until restarted
  // (0007's latitude range: ~650 against ~300 µs a page; test/storage/statistics-reload.test.ts).
  afterAnalyze: [
    sql`DELETE FROM sqlite_stat4`,
    sql`ANALYZE sqlite_schema`,
    sql`CREATE VIEW IF NOT EXISTS roost_statistics_changed AS SELECT 1`,
    sql`DROP VIEW IF EXISTS roost_statistics_changed`,
  ],
  reusedShape: (statement: Sql) => statement,

  uniqueViolation(error: unknown): ViolatedIndex | null {
    const e = error as { code?: string; message?: string };
    if (e?.code !== 'SQLITE_CONSTRAINT_UNIQUE' && e?.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return null;
    // "objects.app_id, objects.username"; an index on expressions: "index 'name'".
    const failed = /UNIQUE constraint failed: (.*)$/.exec(e.message ?? '')?.[1] ?? '';
    const named = /^index '(.*)'$/.exec(failed);
    if (named) return { name: named[1] };
    const columns = failed.split(', ').map((column) => column.split('.'));
    return { table: columns[0][0], columns: columns.map((column) => column[1] ?? '') };
  },
};
