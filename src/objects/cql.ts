import { fail } from '../lib/errors.ts';
import { cqlParser, isCqlSyntaxError, type CqlSyntaxError } from './cql-grammar.ts';
import type { Json, JsonObject } from './types.ts';
import { isObject } from './values.ts';

/**
 * CQL (`/1.1/cloudQuery`) compiled to the REST query it stands for: a class and the parameters of
 * `GET /1.1/classes/<class>` (where, order, limit, skip, keys, include, count). The hosted guide says
 * the same ("CQL 最终还是转换成 REST API 里查询部分提到的各种 where 条件"), and it means a CQL query is
 * parsed, checked, refused and answered by the one find path every REST query takes.
 */
export interface CqlFind {
  className: string;
  params: Record<string, string>;
  /** count(*) or count(objectId) was selected: the answer carries `count`. */
  count: boolean;
}

/**
 * A CQL write: one object created per row of an insert, or one object (named by `objectId = …` in the
 * where, as the hosted service required) updated or deleted, when the rest of the where (`condition`,
 * a REST where) holds for it. Bodies are REST write bodies; `op(…)` values are their `__op` operations.
 */
export type CqlWrite =
  | { kind: 'insert'; className: string; rows: JsonObject[] }
  | { kind: 'update'; className: string; objectId: string; body: JsonObject; condition: JsonObject | null }
  | { kind: 'delete'; className: string; objectId: string; condition: JsonObject | null };

export type CqlStatement = ({ kind: 'find' } & CqlFind) | CqlWrite;

/** The hosted service's limit on a statement (CQL guide, "性能和建议"). */
export const maxCqlBytes = 4096;

type Value =
  | { v: 'lit'; value: Json }
  | { v: 'param'; offset: number }
  | { v: 'fn'; name: string; args: Value[] }
  | { v: 'array'; items: Value[] }
  | { v: 'object'; entries: Array<[string, Value]> };

type Path = string[];
type Condition =
  | { type: 'and' | 'or'; items: Condition[] }
  | { type: 'compare'; path: Path; op: string; value: Value }
  | { type: 'compareSelect'; path: Path; op: string; select: Select }
  | { type: 'inSelect'; path: Path; not: boolean; select: Select }
  | { type: 'in'; path: Path; not: boolean; values: Value[] }
  | { type: 'all'; path: Path; values: Value[] }
  | { type: 'exists'; path: Path; exists: boolean }
  | { type: 'size'; path: Path; value: Value }
  | { type: 'like' | 'regexp'; path: Path; not: boolean; value: Value }
  | { type: 'near'; path: Path; point: Value; min: Distance | null; max: Distance | null }
  | { type: 'within'; path: Path; southwest: Value; northeast: Value }
  | { type: 'related'; key: string; object: Value };
interface Distance {
  value: Value;
  unit: 'km' | 'miles' | 'radians';
}
type Column = { kind: 'all' | 'count' } | { kind: 'include' | 'field'; path: Path };
interface Select {
  type: 'select';
  columns: Column[];
  className: string;
  where: Condition | null;
  limit: { skip: Value | null; count: Value } | null;
  order: { keys: Array<{ sign: '+' | '-' | null; path: Path }>; direction: 'asc' | 'desc' } | null;
}
type Statement =
  | Select
  | { type: 'insert'; className: string; columns: Path[]; rows: Value[][] }
  | { type: 'update'; className: string; sets: Array<{ path: Path; value: Value }>; where: Condition }
  | { type: 'delete'; className: string; where: Condition };

export function cqlSyntaxError(detail: string): never {
  return fail('cqlSyntax', `CQL syntax error.Detail: ${detail}`);
}

function describeExpected(item: { type: string; text?: string; description?: string }): string {
  if (item.type === 'literal') return item.text ?? '';
  if (item.type === 'end') return 'end of input';
  return item.description ?? item.type;
}

/** The hosted service's wording: the line, a caret under the column, then what could have come there. */
function syntaxDetail(cql: string, error: CqlSyntaxError): string {
  const { line, column } = error.location.start;
  const text = cql.split(/\r\n|\r|\n/)[line - 1] ?? '';
  const expected = [...new Set((error.expected ?? []).map(describeExpected))];
  return `Parse error at line ${line}, column ${column}:\n${text}\n${' '.repeat(column - 1)}^\nExpected one of:\n${expected.join('\n')}\n\n`;
}

function parseStatement(cql: string): Statement {
  try {
    return cqlParser().parse(cql) as Statement;
  } catch (error) {
    if (isCqlSyntaxError(error)) cqlSyntaxError(syntaxDetail(cql, error));
    throw error;
  }
}

/** The placeholders in the order they are written: the parser keeps each one's offset in the text. */
function placeholders(tree: unknown, found: Array<{ v: 'param'; offset: number }> = []): typeof found {
  if (Array.isArray(tree)) for (const item of tree) placeholders(item, found);
  else if (isObject(tree)) {
    if (tree.v === 'param') found.push(tree as { v: 'param'; offset: number });
    else for (const item of Object.values(tree)) placeholders(item, found);
  }
  return found;
}

class Compiler {
  private readonly params: Map<object, Json>;

  /** Whether op() may be called: it makes a write's operation, and means nothing in a query. */
  private writing = false;

  constructor(
    tree: Statement,
    pvalues: Json[],
    private readonly now: number,
  ) {
    const found = placeholders(tree).sort((a, b) => a.offset - b.offset);
    // Values beside a statement without placeholders are not looked at, as hosted (the Python SDK's
    // test_cloud_query sends some); with placeholders, one value each.
    if (found.length > 0 && found.length !== pvalues.length) {
      cqlSyntaxError(`the statement has ${found.length} placeholders (?) and pvalues holds ${pvalues.length} values.`);
    }
    this.params = new Map(found.map((node, index) => [node, pvalues[index]]));
  }

  value(node: Value): Json {
    switch (node.v) {
      case 'lit':
        return node.value;
      case 'param':
        return this.operand(this.params.get(node) ?? null);
      case 'array':
        return node.items.map((item) => this.value(item));
      case 'object':
        return this.operand(Object.fromEntries(node.entries.map(([key, item]) => [key, this.value(item)])));
      case 'fn':
        return this.call(node.name, node.args.map((arg) => this.value(arg)));
    }
  }

  /**
   * A value compared with a key is data, never query syntax: an object with a `$` key (from pvalues or
   * written inline) would be read as operators by the where parser, so it is refused.
   */
  private operand(value: Json): Json {
    if (isObject(value) && Object.keys(value).some((key) => key.startsWith('$'))) {
      fail('invalidQuery', 'A CQL value may not be an object with keys starting with $.');
    }
    return value;
  }

  private call(name: string, args: Json[]): Json {
    const strings = (count: number): string[] => {
      if (args.length !== count || !args.every((arg) => typeof arg === 'string')) {
        cqlSyntaxError(`${name}() takes ${count} string argument${count === 1 ? '' : 's'}.`);
      }
      return args as string[];
    };
    switch (name) {
      case 'date':
        return { __type: 'Date', iso: strings(1)[0] };
      case 'pointer': {
        const [className, objectId] = strings(2);
        return { __type: 'Pointer', className, objectId };
      }
      case 'file':
        return { __type: 'File', id: strings(1)[0] };
      case 'base64':
        return { __type: 'Bytes', base64: strings(1)[0] };
      case 'geopoint': {
        if (args.length !== 2 || !args.every((arg) => typeof arg === 'number')) cqlSyntaxError('geopoint() takes a longitude and a latitude.');
        const [longitude, latitude] = args as number[];
        return { __type: 'GeoPoint', latitude, longitude };
      }
      case 'current_timestamp':
        if (args.length !== 0) cqlSyntaxError('current_timestamp() takes no arguments.');
        return { __type: 'Date', iso: new Date(this.now).toISOString() };
      case 'op': {
        const [operation, options = {}] = args;
        if (!this.writing) cqlSyntaxError('op() is a value of insert and update only.');
        if (typeof operation !== 'string' || !isObject(options) || args.length > 2) cqlSyntaxError("op() takes an operation's name and an object of its arguments.");
        return { ...options, __op: operation };
      }
      default:
        return cqlSyntaxError(`unknown function ${name}().`);
    }
  }

  condition(node: Condition): JsonObject {
    const on = (path: Path, constraint: Json): JsonObject => ({ [path.join('.')]: constraint });
    switch (node.type) {
      case 'and':
      case 'or':
        return { [`$${node.type}`]: node.items.map((item) => this.condition(item)) };
      case 'compare': {
        const value = this.value(node.value);
        return on(node.path, node.op === '=' ? value : { [comparisons[node.op]]: value });
      }
      case 'compareSelect':
        if (node.op !== '=' && node.op !== '!=') cqlSyntaxError(`a subquery is compared with = or != only, not ${node.op}.`);
        return on(node.path, this.keySelect(node.select, node.op === '!='));
      case 'inSelect':
        return on(node.path, this.keySelect(node.select, node.not, true));
      case 'in':
        return on(node.path, { [node.not ? '$nin' : '$in']: node.values.map((item) => this.value(item)) });
      case 'all':
        return on(node.path, { $all: node.values.map((item) => this.value(item)) });
      case 'exists':
        return on(node.path, { $exists: node.exists });
      case 'size':
        return on(node.path, { $size: this.value(node.value) });
      case 'like':
      case 'regexp': {
        const pattern = this.value(node.value);
        if (typeof pattern !== 'string') cqlSyntaxError(`${node.type} needs a string pattern.`);
        const regex = { $regex: node.type === 'like' ? likeToRegex(pattern) : pattern };
        return on(node.path, node.not ? { $not: regex } : regex);
      }
      case 'near': {
        const constraint: JsonObject = { $nearSphere: this.value(node.point) };
        if (node.min) constraint[`$minDistanceIn${units[node.min.unit]}`] = this.value(node.min.value);
        if (node.max) constraint[`$maxDistanceIn${units[node.max.unit]}`] = this.value(node.max.value);
        return on(node.path, constraint);
      }
      case 'within':
        return on(node.path, { $within: { $box: [this.value(node.southwest), this.value(node.northeast)] } });
      case 'related':
        return { $relatedTo: { object: this.value(node.object), key: node.key } };
    }
  }

  /**
   * `key in (select …)`: a subquery of the objects (`select *`: $inQuery) or of one key's values
   * (`select name`: $select), as the REST API spells them.
   */
  private keySelect(select: Select, negated: boolean, objectsAllowed = false): JsonObject {
    const query = this.subquery(select);
    const fields = select.columns.flatMap((column) => (column.kind === 'field' ? [column.path] : []));
    const everything = select.columns.length === 1 && select.columns[0].kind === 'all';
    if (everything && objectsAllowed) return { [negated ? '$notInQuery' : '$inQuery']: query };
    if (fields.length !== 1 || select.columns.length !== 1) cqlSyntaxError('a subquery must select one key (select name from …).');
    return { [negated ? '$dontSelect' : '$select']: { query, key: fields[0].join('.') } };
  }

  private subquery(select: Select): JsonObject {
    const { params } = this.find(select);
    const query: JsonObject = { className: select.className, where: JSON.parse(params.where) as Json };
    if (params.limit !== undefined) query.limit = Number(params.limit);
    if (params.skip !== undefined) query.skip = Number(params.skip);
    if (params.order !== undefined) query.order = params.order;
    return query;
  }

  private wholeNumber(node: Value, name: string): string {
    const value = this.value(node);
    if (!Number.isSafeInteger(value) || (value as number) < 0) cqlSyntaxError(`the ${name} of limit must be a whole number.`);
    return String(value);
  }

  find(select: Select): CqlFind {
    const params: Record<string, string> = { where: JSON.stringify(select.where ? this.condition(select.where) : {}) };
    const fields = select.columns.flatMap((column) => (column.kind === 'field' ? [column.path.join('.')] : []));
    const includes = select.columns.flatMap((column) => (column.kind === 'include' ? [column.path.join('.')] : []));
    const all = select.columns.some((column) => column.kind === 'all');
    const count = select.columns.some((column) => column.kind === 'count');
    if (select.order) {
      params.order = select.order.keys
        .map(({ sign, path }) => ((sign ?? (select.order?.direction === 'desc' ? '-' : '+')) === '-' ? '-' : '') + path.join('.'))
        .join(',');
    }
    if (select.limit) {
      params.limit = this.wholeNumber(select.limit.count, 'count');
      if (select.limit.skip) params.skip = this.wholeNumber(select.limit.skip, 'skip');
    }
    if (count) {
      params.count = '1';
      // count(*) alone counts without listing, as `count=1&limit=0` does.
      if (!all && fields.length === 0 && includes.length === 0) params.limit = '0';
    }
    if (!all && fields.length > 0) params.keys = [...new Set([...fields, ...includes.map((path) => path.split('.')[0])])].join(',');
    if (includes.length > 0) params.include = includes.join(',');
    return { className: select.className, params, count };
  }

  /** The values a write sets: keys as written (dotted paths too, as REST bodies take them). */
  private body(entries: Array<{ path: Path; value: Value }>): JsonObject {
    this.writing = true;
    const body: JsonObject = {};
    for (const { path, value } of entries) {
      const key = path.join('.');
      if (Object.hasOwn(body, key)) cqlSyntaxError(`${key} is set twice.`);
      body[key] = this.value(value);
    }
    this.writing = false;
    return body;
  }

  /**
   * Splits an update's or delete's where into the object it names and a condition on it: the hosted
   * service wrote one object per statement, named by `objectId = …` at the top of the where.
   */
  private target(where: Condition): { objectId: string; condition: JsonObject | null } {
    const items = where.type === 'and' ? where.items : [where];
    const named = items.filter((item) => item.type === 'compare' && item.op === '=' && item.path.length === 1 && item.path[0] === 'objectId');
    const objectId = named.length === 1 && named[0].type === 'compare' ? this.value(named[0].value) : null;
    if (typeof objectId !== 'string') {
      fail('invalidQuery', 'CQL update and delete write one object: the where must hold objectId = <id> (and-ed with any other condition).');
    }
    const rest = items.filter((item) => item !== named[0]);
    if (rest.length === 0) return { objectId, condition: null };
    return { objectId, condition: rest.length === 1 ? this.condition(rest[0]) : this.condition({ type: 'and', items: rest }) };
  }

  statement(tree: Statement): CqlStatement {
    switch (tree.type) {
      case 'select':
        return { kind: 'find', ...this.find(tree) };
      case 'insert':
        return {
          kind: 'insert',
          className: tree.className,
          rows: tree.rows.map((row, index) => {
            if (row.length !== tree.columns.length) {
              cqlSyntaxError(`row ${index + 1} has ${row.length} values for ${tree.columns.length} columns.`);
            }
            return this.body(tree.columns.map((path, column) => ({ path, value: row[column] })));
          }),
        };
      case 'update': {
        const body = this.body(tree.sets);
        return { kind: 'update', className: tree.className, body, ...this.target(tree.where) };
      }
      case 'delete':
        return { kind: 'delete', className: tree.className, ...this.target(tree.where) };
    }
  }
}

const comparisons: Record<string, string> = { '!=': '$ne', '<': '$lt', '<=': '$lte', '>': '$gt', '>=': '$gte' };
const units = { km: 'Kilometers', miles: 'Miles', radians: 'Radians' } as const;

/** `like`: `%` is any run of characters, everything else itself; the whole value must match, as in SQL. */
function likeToRegex(pattern: string): string {
  const literal = (text: string) => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
  return `^${pattern.split('%').map(literal).join('.*')}$`;
}

/**
 * Reads pvalues as sent: a JSON array, as text (a query string) or already parsed (a JSON body); text may hold
 * the array's text once more (the Python SDK's do_cloud_query(cql, [values]) encodes the list twice).
 */
export function parsePvalues(raw: unknown): Json[] {
  if (raw === undefined || raw === '') return [];
  let value = raw;
  for (let depth = 0; depth < 2 && typeof value === 'string'; depth++) {
    try {
      value = JSON.parse(value);
    } catch {
      fail('invalidJson', 'pvalues must be a JSON array.');
    }
  }
  if (!Array.isArray(value)) fail('invalidJson', 'pvalues must be a JSON array.');
  return value as Json[];
}

/** Compiles a CQL statement with its placeholder values; bad CQL is 400 code 300, as hosted. */
export function compileCql(cql: unknown, pvalues: Json[], now: number): CqlStatement {
  if (typeof cql !== 'string' || cql.trim() === '') cqlSyntaxError('cql is missing.');
  if (Buffer.byteLength(cql, 'utf8') > maxCqlBytes) cqlSyntaxError(`a statement may be at most ${maxCqlBytes} bytes.`);
  const tree = parseStatement(cql);
  return new Compiler(tree, pvalues, now).statement(tree);
}
