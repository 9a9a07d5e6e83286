import { isoDate } from '../lib/clock.ts';
import { own } from '../lib/lookup.ts';
import { stringEnd } from '../lib/json-limits.ts';
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
 * absent), then updatedAt and objectId, then the class's relation fields as their descriptors
 * (Objects/Relational Data/should fetch when save); `wire` is the object as the caller may see it (toWire).
 */
export function touchedFields(wire: JsonObject, touched: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  for (const key of touched) {
    if (key !== 'objectId' && key !== 'createdAt' && key !== 'updatedAt' && Object.hasOwn(wire, key)) out[key] = wire[key];
  }
  out.updatedAt = wire.updatedAt;
  out.objectId = wire.objectId;
  for (const [key, value] of Object.entries(wire)) {
    if (!Object.hasOwn(out, key) && isObject(value) && value.__type === 'Relation') out[key] = value;
  }
  return out;
}

/** Server-owned keys in stored fields (reachable through a dotted key such as "objectId.x"), which toWire overrides. */
const serverKeyInJson = /"(?:objectId|createdAt|updatedAt)":/;

/**
 * Whether JSON text as JSON.stringify writes it (no blanks, a key always right before its colon) holds a
 * server-owned key among its top-level keys: the regex first (most text holds none), then a scan of the
 * text's depth, strings skipped, so a key inside a Pointer or another nested object does not count.
 */
export function serverKeyAtTop(json: string): boolean {
  if (!serverKeyInJson.test(json)) return false;
  const fields = topLevelFields(json);
  // Text that is not JSON.stringify's: the parsing path decides.
  return fields === null || fields.some(({ key }) => key === 'objectId' || key === 'createdAt' || key === 'updatedAt');
}

/** A top-level field of JSON text: its key and where its value's text starts and ends (exclusive). */
export interface FieldText {
  key: string;
  start: number;
  end: number;
}

/**
 * The top-level fields of JSON text as JSON.stringify writes it (no blanks, a key always right before its
 * colon), in order, read by its depth with strings skipped; null when the text is not such text.
 */
export function topLevelFields(json: string): FieldText[] | null {
  if (json.charCodeAt(0) !== 123) return null;
  const fields: FieldText[] = [];
  let open: FieldText | null = null;
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34) {
      const start = i;
      i = stringEnd(json, i);
      if (i < 0) return null;
      if (depth === 1 && open === null) {
        if (json.charCodeAt(i + 1) !== 58) return null;
        const raw = json.slice(start + 1, i);
        open = { key: raw.includes('\\') ? (JSON.parse(json.slice(start, i + 1)) as string) : raw, start: i + 2, end: -1 };
        i++;
      }
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) depth--;
    if (open !== null && (depth === 0 || (c === 44 && depth === 1))) {
      open.end = i;
      fields.push(open);
      open = null;
    }
  }
  return depth === 0 ? fields : null;
}

/**
 * The JSON text of toWire(object) for an object read without `keys` or `returnACL`, from its stored
 * fields' text (Store.getObjectJson): the fields are spliced with the id and dates instead of parsed,
 * copied and serialised again (3.5 -> 0.9 µs an object, -15% CPU a get-by-id, bench/RESULTS.md).
 * Text holding a server-owned key at the top, whose value toWire replaces in place, is parsed and goes
 * through toWire (a nested one, as in a Pointer, does not: serverKeyAtTop).
 * test/objects.test.ts compares the bytes with the parsing path's.
 */
export function wireJson(ref: { className: string; objectId: string }, stored: StoredJson): string {
  const fields = stored.dataJson;
  if (serverKeyAtTop(fields)) {
    const data = JSON.parse(fields) as JsonObject;
    return JSON.stringify(toWire({ ...ref, createdAt: stored.createdAt, updatedAt: stored.updatedAt, acl: null, data }));
  }
  return withIdAndDates(ref, stored, fields);
}

/** The JSON text of an object's fields (`fields`, holding no server-owned key at the top) with its id and dates after them, as toWire puts them. */
export function withIdAndDates(ref: { objectId: string }, stored: { createdAt: number; updatedAt: number }, fields: string): string {
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
export function wirePageJson(
  className: string,
  found: readonly FoundJson[],
  count?: number,
  answeredClass?: string,
  objectJson: (one: FoundJson, index: number) => string = (one) => wireJson({ className, objectId: one.objectId }, one),
): string {
  const results = found.map(objectJson).join(',');
  const countJson = count === undefined ? '' : `,"count":${JSON.stringify(count)}`;
  const classJson = answeredClass === undefined ? '' : `,"className":${JSON.stringify(answeredClass)}`;
  return `{"results":[${results}]${countJson}${classJson}}`;
}
