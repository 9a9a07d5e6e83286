import { fail } from '../lib/errors.ts';
import type { Json, OrderKey, SubQuery, Where } from './types.ts';
import { geoConstraints, isGeoOperator } from './geo.ts';
import { parseRegex } from './regex.ts';
import { refuseQueryOperator } from './unsupported.ts';
import { checkClassName, checkJson, checkText, fieldPath, isObject, parseIsoDate } from './values.ts';

const timeFields = new Set(['createdAt', 'updatedAt']);

/** A typed query value becomes the stored sub-field it is compared with (Date → iso, Pointer → objectId). */
function target(path: string[], raw: unknown): { path: string[]; value: Json } {
  if (isObject(raw) && raw.__type === 'Date') {
    const ms = parseIsoDate(raw.iso);
    if (ms === null) fail('incorrectType', 'A Date in a query needs an ISO 8601 "iso" string.');
    if (path.length === 1 && timeFields.has(path[0])) return { path, value: ms };
    return { path: [...path, 'iso'], value: new Date(ms).toISOString() };
  }
  if (isObject(raw) && raw.__type === 'Pointer') {
    if (typeof raw.objectId !== 'string') fail('invalidPointer', 'A Pointer in a query needs an objectId.');
    return { path: [...path, 'objectId'], value: checkText(raw.objectId) };
  }
  if (path.length === 1 && timeFields.has(path[0]) && typeof raw === 'string') {
    const ms = parseIsoDate(raw);
    if (ms === null) fail('incorrectType', `${path[0]} must be compared with an ISO 8601 date.`);
    return { path, value: ms };
  }
  return { path, value: checkJson(raw) };
}

function equals(path: string[], raw: unknown): Where {
  const t = target(path, raw);
  return { op: 'eq', path: t.path, value: t.value };
}

/**
 * Longest $in/$nin/$all list. Each list is bound as one parameter, so this only bounds the work of one
 * query; SDKs send a few hundred at most (the JS SDK's containsAll sends 200).
 */
export const maxListLength = 10_000;
/** Longest $or/$and list, and most conditions in one where: each becomes SQL of its own. */
export const maxConditions = 1000;

function list(raw: unknown, operator: string, max = maxListLength, items = 'values'): unknown[] {
  if (!Array.isArray(raw)) fail('invalidQuery', `${operator} needs an array.`);
  if (raw.length > max) fail('invalidQuery', `${operator} may list at most ${max} ${items}.`);
  return raw;
}

/** $in: one 'in' node per compared path (a Pointer compares its objectId, a Date its iso string). */
function oneOf(path: string[], raw: unknown, operator: string): Where {
  const groups = new Map<string, { op: 'in'; path: string[]; values: Json[] }>();
  for (const value of list(raw, operator)) {
    const t = target(path, value);
    const key = t.path.join('.');
    const group = groups.get(key) ?? { op: 'in', path: t.path, values: [] };
    groups.set(key, group);
    group.values.push(t.value);
  }
  return groups.size === 1 ? [...groups.values()][0] : { op: 'or', items: [...groups.values()] };
}

/** Conditions (leaves) of a tree: a where with more is refused before any SQL is built. */
function conditionCount(where: Where): number {
  if (where.op === 'and' || where.op === 'or') return where.items.reduce((sum, item) => sum + conditionCount(item), 0);
  if (where.op === 'not') return conditionCount(where.item);
  if (where.op === 'inQuery' || where.op === 'select') return 1 + conditionCount(where.query.where);
  return 1;
}

/**
 * The query of $inQuery and $select, as the SDKs send it (`query._getParams()` with its className): a
 * where as an object or a JSON string, `order`, `skip` and `limit` under the outer query's rules
 * (default 100, at most 1000); what else it carries (keys, include, returnACL) changes no match.
 */
function subQuery(raw: unknown, operator: string, depth: number): SubQuery {
  if (depth >= maxNesting) fail('invalidQuery', `Subqueries and $and/$or may nest at most ${maxNesting} levels deep.`);
  if (!isObject(raw)) fail('invalidQuery', `${operator} needs a query object with a className.`);
  const { className } = raw;
  if (typeof className !== 'string') fail('invalidClassName', `${operator} needs the className of its query.`);
  checkClassName(className);
  return {
    className,
    where: parseNode(decodeWhere(raw.where), depth + 1),
    order: parseOrder(raw.order),
    limit: parseLimit(raw.limit),
    skip: parseSkip(raw.skip),
  };
}

/** $select / $dontSelect: `{query: {className, where, …}, key}`, the key whose values the field is compared with. */
function selectOf(path: string[], raw: unknown, operator: string, depth: number): Where {
  if (!isObject(raw) || !isObject(raw.query)) fail('invalidQuery', `${operator} needs a query and a key.`);
  if (typeof raw.key !== 'string') fail('invalidQuery', `${operator} needs the key to select, as a string.`);
  return { op: 'select', path, query: subQuery(raw.query, operator, depth), key: fieldPath(raw.key) };
}

function fieldConstraint(path: string[], spec: Record<string, unknown>, depth: number): Where {
  const items: Where[] = geoConstraints(path, spec);
  for (const [operator, raw] of Object.entries(spec)) {
    if (isGeoOperator(operator)) continue;
    switch (operator) {
      case '$ne':
        items.push({ op: 'not', item: equals(path, raw) });
        break;
      case '$lt':
      case '$lte':
      case '$gt':
      case '$gte': {
        const t = target(path, raw);
        if (typeof t.value !== 'number' && typeof t.value !== 'string') {
          fail('invalidQuery', `${operator} needs a number, a string or a Date.`);
        }
        items.push({ op: operator.slice(1) as 'lt', path: t.path, value: t.value });
        break;
      }
      case '$in':
        items.push(oneOf(path, raw, '$in'));
        break;
      case '$nin':
        items.push({ op: 'not', item: oneOf(path, raw, '$nin') });
        break;
      case '$all': {
        // Whole values, typed ones normalised as a write stores them: an array of pointers holds each pointer.
        const values = list(raw, '$all').map((value) => checkJson(value));
        // MongoDB's meaning, the hosted one: each value's equality, so a field holding that one scalar matches
        // too (the Python SDK's test_contains_all: `{"score": {"$all": [5]}}` finds score 5).
        const [first] = values;
        const oneScalar = first !== null && typeof first !== 'object' && values.every((value) => value === first);
        items.push(oneScalar ? equals(path, first) : { op: 'all', path, values });
        break;
      }
      case '$inQuery':
        items.push({ op: 'inQuery', path, query: subQuery(raw, operator, depth) });
        break;
      case '$notInQuery':
        items.push({ op: 'not', item: { op: 'inQuery', path, query: subQuery(raw, operator, depth) } });
        break;
      case '$select':
        items.push(selectOf(path, raw, operator, depth));
        break;
      case '$dontSelect':
        items.push({ op: 'not', item: selectOf(path, raw, operator, depth) });
        break;
      case '$exists':
        if (typeof raw !== 'boolean') fail('invalidQuery', '$exists needs true or false.');
        items.push(raw ? { op: 'exists', path } : { op: 'not', item: { op: 'exists', path } });
        break;
      case '$regex': {
        if (typeof raw !== 'string') fail('invalidQuery', '$regex needs a string.');
        const options = spec.$options ?? '';
        if (typeof options !== 'string') fail('invalidRegex', '$options may hold only i, m, s and x.');
        items.push({ op: 'regex', path, regex: parseRegex(raw, options) });
        break;
      }
      case '$options':
        if (!('$regex' in spec)) fail('invalidQuery', '$options goes with $regex.');
        break;
      case '$not':
        // What CQL's `not like` / `not regexp` compile to (src/objects/cql.ts), as in MongoDB.
        if (!isObject(raw) || !Object.keys(raw).every((key) => key.startsWith('$'))) fail('invalidQuery', '$not needs an object of operators.');
        items.push({ op: 'not', item: fieldConstraint(path, raw, depth + 1) });
        break;
      case '$size':
        if (!Number.isSafeInteger(raw) || (raw as number) < 0) fail('invalidQuery', '$size needs a whole number.');
        items.push({ op: 'size', path, size: raw as number });
        break;
      default:
        refuseQueryOperator(operator);
        fail('invalidQuery', `Unsupported query operator '${operator}'.`);
    }
  }
  return items.length === 1 ? items[0] : { op: 'and', items };
}

/** `{"$relatedTo":{"object":<Pointer>,"key":"likes"}}`: the objects the owner's relation `key` holds. */
function relatedTo(raw: unknown): Where {
  const usage = '$relatedTo needs {"object": <Pointer>, "key": <relation field>}.';
  if (!isObject(raw) || !isObject(raw.object) || typeof raw.key !== 'string') fail('invalidQuery', usage);
  const { className, objectId, __type } = raw.object;
  if (__type !== 'Pointer' || typeof className !== 'string' || typeof objectId !== 'string') fail('invalidQuery', usage);
  const path = fieldPath(raw.key);
  if (path.length !== 1) fail('invalidQuery', usage);
  return { op: 'relatedTo', owner: { className, objectId }, key: raw.key };
}

/** $and/$or nesting allowed; deeper trees are refused rather than handed to the SQL parser. */
const maxNesting = 16;

function clauses(raw: unknown, operator: string, depth: number): Where[] {
  if (depth >= maxNesting) fail('invalidQuery', `$and/$or may nest at most ${maxNesting} levels deep.`);
  return list(raw, operator, maxConditions, 'clauses').map((item) => parseNode(item, depth + 1));
}

/** Parses the `where` language into the neutral tree; bad input is a 4xx ApiError. */
export function parseWhere(raw: unknown): Where {
  const where = parseNode(raw, 0);
  if (conditionCount(where) > maxConditions) fail('invalidQuery', `A where may hold at most ${maxConditions} conditions.`);
  return where;
}

function parseNode(raw: unknown, depth: number): Where {
  if (raw === undefined || raw === null) return { op: 'const', value: true };
  if (Array.isArray(raw)) return { op: 'and', items: clauses(raw, 'where', depth) };
  if (!isObject(raw)) fail('invalidQuery', 'where must be a JSON object.');
  const items: Where[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (key === '$or') items.push({ op: 'or', items: clauses(value, '$or', depth) });
    else if (key === '$and') items.push({ op: 'and', items: clauses(value, '$and', depth) });
    else if (key === '$relatedTo') items.push(relatedTo(value));
    else if (key.startsWith('$')) {
      // An operator where a field name goes ($relatedTo, $nor, …): named as one, not refused as a key (105).
      refuseQueryOperator(key);
      fail('invalidQuery', `Unsupported query operator '${key}'.`);
    } else {
      const path = fieldPath(key);
      const isConstraint = isObject(value) && Object.keys(value).some((k) => k.startsWith('$'));
      items.push(isConstraint ? fieldConstraint(path, value as Record<string, unknown>, depth) : equals(path, value));
    }
  }
  return items.length === 1 ? items[0] : { op: 'and', items };
}

/**
 * A where as sent: a JSON string (a query string's, or a push body's) is decoded, anything else taken
 * as it is; null when there is none (every object).
 */
export function decodeWhere(raw: unknown): unknown {
  if (raw === undefined || raw === '') return null;
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return fail('invalidJson', 'where is not valid JSON.');
  }
}

/** Reads a where given as a JSON string in a query string. */
export function parseWhereParam(raw: unknown): Where {
  return parseWhere(decodeWhere(raw));
}

export function parseOrder(raw: unknown): OrderKey[] {
  if (raw === undefined || raw === '') return [];
  if (typeof raw !== 'string') fail('invalidQuery', 'order must be a comma-separated list of keys.');
  return raw
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean)
    .map((key) => {
      const descending = key.startsWith('-');
      return { path: fieldPath(descending ? key.slice(1) : key), descending };
    });
}

function integerParam(raw: unknown, name: string): number | null {
  if (raw === undefined || raw === '') return null;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) fail('invalidQuery', `${name} must be a whole number.`);
  return value;
}

export const maxLimit = 1000;

export function parseLimit(raw: unknown): number {
  const value = integerParam(raw, 'limit');
  return value === null ? 100 : Math.min(value, maxLimit);
}

export function parseSkip(raw: unknown): number {
  return integerParam(raw, 'skip') ?? 0;
}

/** keys=a,b.c,-d: what to include (or with '-', leave out) of each result. */
export interface Projection {
  include: string[][];
  exclude: string[][];
}

export function parseKeys(raw: unknown): Projection | null {
  if (raw === undefined || raw === '') return null;
  if (typeof raw !== 'string') fail('invalidQuery', 'keys must be a comma-separated list.');
  const projection: Projection = { include: [], exclude: [] };
  for (const key of raw.split(',').map((k) => k.trim()).filter(Boolean)) {
    if (key.startsWith('-')) projection.exclude.push(fieldPath(key.slice(1)));
    else projection.include.push(fieldPath(key));
  }
  return projection;
}

/**
 * Every field path a `where` tree tests in the class it queries (a subquery's field, not the fields of
 * the subquery's class: queryReads in src/objects/query-reach.ts has those), for callers that must keep
 * some fields out of reach.
 */
export function wherePaths(where: Where): string[][] {
  switch (where.op) {
    case 'and':
    case 'or':
      return where.items.flatMap(wherePaths);
    case 'not':
      return wherePaths(where.item);
    case 'const':
    case 'relatedTo':
      return [];
    case 'relationHolds':
      return [[where.key]];
    default:
      return [where.path];
  }
}
