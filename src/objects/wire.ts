import { isoDate } from '../lib/clock.ts';
import { own } from '../lib/lookup.ts';
import type { FoundJson, JsonObject, StoredJson, StoredObject } from './types.ts';
import type { Projection } from './query.ts';
import { isObject } from './values.ts';

export interface WireOptions {
  projection?: Projection | null;
  returnAcl?: boolean;
}

// `keys` names come from the request: only a field the object holds itself is picked or followed.
function pick(source: JsonObject, path: string[], into: JsonObject): void {
  const [head, ...rest] = path;
  if (!Object.hasOwn(source, head)) return;
  if (rest.length === 0) {
    into[head] = source[head];
    return;
  }
  const child = source[head];
  if (!isObject(child)) return;
  const have = own(into, head);
  const target = (isObject(have) ? have : (into[head] = {})) as JsonObject;
  pick(child as JsonObject, rest, target);
}

function drop(data: JsonObject, path: string[]): void {
  const [head, ...rest] = path;
  if (rest.length === 0) delete data[head];
  else {
    const child = own(data, head);
    if (isObject(child)) drop(child as JsonObject, rest);
  }
}

function project(data: JsonObject, projection: Projection): JsonObject {
  let out: JsonObject = data;
  if (projection.include.length > 0) {
    out = {};
    for (const path of projection.include) pick(data, path, out);
  } else {
    out = structuredClone(data);
  }
  for (const path of projection.exclude) drop(out, path);
  return out;
}

/**
 * A shallow copy of the fields. Object.assign instead of a spread literal: V8 builds new hidden
 * classes for every `{...data, more}` of a parsed object (6 µs of a 100 µs get-by-id), not for
 * this. Assign would call the `__proto__` setter where spread defines the key, so such a field
 * keeps the spread.
 */
function copyFields(data: JsonObject): JsonObject {
  return Object.hasOwn(data, '__proto__') ? { ...data } : Object.assign({}, data);
}

/** The object as clients see it: its fields, id and ISO timestamps, and the ACL only when asked for. */
export function toWire(object: StoredObject, options: WireOptions = {}): JsonObject {
  const out = copyFields(options.projection ? project(object.data, options.projection) : object.data);
  const createdAt = isoDate(object.createdAt);
  out.objectId = object.objectId;
  out.createdAt = createdAt;
  out.updatedAt = object.updatedAt === object.createdAt ? createdAt : isoDate(object.updatedAt);
  // An object stored without an ACL (imported so) is public, which is what the default ACL says.
  if (options.returnAcl) out.ACL = object.acl ?? { '*': { read: true, write: true } };
  return out;
}

/**
 * What an update asked to answer with the object (new=true, fetchWhenSave) sends, as the hosted
 * service did: only the fields the update touched, at their new values (a field it deleted is
 * absent), then updatedAt and objectId; `wire` is the object as the caller may see it (toWire).
 */
export function touchedFields(wire: JsonObject, touched: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  for (const key of touched) {
    if (key !== 'objectId' && key !== 'createdAt' && key !== 'updatedAt' && Object.hasOwn(wire, key)) out[key] = wire[key];
  }
  out.updatedAt = wire.updatedAt;
  out.objectId = wire.objectId;
  return out;
}

/** Server-owned keys in stored fields (reachable through a dotted key such as "objectId.x"), which toWire overrides. */
const serverKeyInJson = /"(?:objectId|createdAt|updatedAt)":/;

/**
 * The JSON text of toWire(object) for an object read without `keys` or `returnACL`, from its stored
 * fields' text (Store.getObjectJson): the fields are spliced with the id and dates instead of parsed,
 * copied and serialised again (3.5 -> 0.9 µs an object, -15% CPU a get-by-id, bench/RESULTS.md).
 * Text that may hold a server-owned key at the top, whose value toWire replaces in place, is parsed
 * and goes through toWire (a nested one, as in a Pointer, takes that path too; only slower).
 * test/objects.test.ts compares the bytes with the parsing path's.
 */
export function wireJson(ref: { className: string; objectId: string }, stored: StoredJson): string {
  const fields = stored.dataJson;
  if (serverKeyInJson.test(fields)) {
    const data = JSON.parse(fields) as JsonObject;
    return JSON.stringify(toWire({ ...ref, createdAt: stored.createdAt, updatedAt: stored.updatedAt, acl: null, data }));
  }
  const createdAt = isoDate(stored.createdAt);
  const updatedAt = stored.updatedAt === stored.createdAt ? createdAt : isoDate(stored.updatedAt);
  const head = fields === '{}' ? '{' : `${fields.slice(0, -1)},`;
  return `${head}"objectId":${JSON.stringify(ref.objectId)},"createdAt":"${createdAt}","updatedAt":"${updatedAt}"}`;
}

/**
 * The JSON text of a query's answer, {results, count?, className?} as the route's object would be
 * serialised, from found objects' stored fields (wireJson each): the page path for a query without
 * `keys`, `returnACL` or `include` (src/http/routes/classes.ts). test/objects-pages.test.ts compares
 * the bytes with the parsing path's.
 */
export function wirePageJson(className: string, found: readonly FoundJson[], count?: number, answeredClass?: string): string {
  const results = found.map((one) => wireJson({ className, objectId: one.objectId }, one)).join(',');
  const countJson = count === undefined ? '' : `,"count":${JSON.stringify(count)}`;
  const classJson = answeredClass === undefined ? '' : `,"className":${JSON.stringify(answeredClass)}`;
  return `{"results":[${results}]${countJson}${classJson}}`;
}
