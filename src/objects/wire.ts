import { isoDate } from '../lib/clock.ts';
import { own } from '../lib/lookup.ts';
import { stringEnd } from '../lib/json-limits.ts';
import type { FoundJson, JsonObject, StoredJson, StoredObject } from './types.ts';
import type { Projection } from './query.ts';
import { isObject } from './values.ts';
import { arrayMapEntries, hashMapOrder, hashMapRank, inHashMapOrder } from '../lib/hash-map-order.ts';

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

/**
 * Top-level fields up to which an object goes out in insertion order. The hosted service's object was a
 * Clojure map of its fields, ACL, createdAt, updatedAt and id: up to 8 entries (4 fields) an array map, kept
 * in insertion order with the dates and the id after the fields ({fields…, ACL, createdAt, updatedAt,
 * objectId}), and the class's relation descriptors after them; past it a hash map, whose keys, the dates and
 * id among them, go out in hash-map order (src/lib/hash-map-order.ts). The recordings show both sides of the
 * line (test/wire-key-order.test.ts).
 */
export const insertionOrderedFields = arrayMapEntries - 4;

const isRelation = (value: unknown) => isObject(value) && value.__type === 'Relation';

/** The object as clients see it: its fields, ACL only when asked for, ISO timestamps and id, in the hosted service's key order. */
export function toWire(object: StoredObject, options: WireOptions = {}): JsonObject {
  const out = copyFields(options.projection ? project(object.data, options.projection) : object.data);
  // Stored fields of these names (reached through dotted keys) are replaced, and go where the server's own go.
  delete out.objectId;
  delete out.createdAt;
  delete out.updatedAt;
  const hashed = Object.keys(out).length > insertionOrderedFields;
  // Relation descriptors came from the class's schema, after the object's own entries (R:_Role queries, R:Person).
  const descriptors: { key: string }[] = [];
  if (!hashed) {
    for (const key of Object.keys(out)) if (isRelation(out[key])) descriptors.push({ key });
  }
  const later = hashMapOrder(descriptors).map(({ key }) => {
    const value = out[key];
    delete out[key];
    return [key, value] as const;
  });
  const createdAt = isoDate(object.createdAt);
  // An object stored without an ACL (imported so) is public, which is what the default ACL says.
  if (options.returnAcl) out.ACL = object.acl ?? { '*': { read: true, write: true } };
  out.createdAt = createdAt;
  out.updatedAt = object.updatedAt === object.createdAt ? createdAt : isoDate(object.updatedAt);
  out.objectId = object.objectId;
  for (const [key, value] of later) out[key] = value;
  return hashed ? inHashMapOrder(out) : out;
}

/**
 * `wire` (an object as answered) with `added` entries set after its own, as the hosted service added an included
 * object's `__type` and `className` to its map: after the rest while the map holds up to arrayMapEntries, else
 * with every key in hash-map order (R:Objects/Relational Data/should set relation: a post of four fields, included,
 * lists all nine keys by hash; R:AV.Status/should follow: a user of six keys lists them, then the two).
 */
export function withEntries(wire: JsonObject, added: JsonObject): JsonObject {
  const out = { ...wire, ...added };
  return Object.keys(out).length > arrayMapEntries ? inHashMapOrder(out) : out;
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
export function wireJson(ref: { className: string; objectId: string }, stored: StoredJson, added?: AddedEntries): string {
  const fields = stored.dataJson;
  if (serverKeyAtTop(fields)) {
    const data = JSON.parse(fields) as JsonObject;
    const wire = toWire({ ...ref, createdAt: stored.createdAt, updatedAt: stored.updatedAt, acl: null, data });
    return JSON.stringify(added ? withEntries(wire, added.entries) : wire);
  }
  return withIdAndDates(ref, stored, fields, added);
}

/** Entries set after an object's own (withEntries), with their keys and their `"key":value` text. */
export interface AddedEntries {
  entries: JsonObject;
  keys: readonly string[];
  texts: readonly string[];
}

export function addedEntries(entries: JsonObject): AddedEntries {
  const keys = Object.keys(entries);
  return { entries, keys, texts: keys.map((key) => `${JSON.stringify(key)}:${JSON.stringify(entries[key])}`) };
}

/** Whether JavaScript objects list `key` before all others (an array index), which text in hash order would not. */
function isArrayIndex(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 48 && first <= 57 && String(Number(key) >>> 0) === key && key !== '4294967295';
}

const serverRanks = [hashMapRank('createdAt'), hashMapRank('updatedAt'), hashMapRank('objectId')];

/**
 * The JSON text of an object's fields (`fields`, holding no server-owned key at the top) with its dates and
 * id, in the order toWire gives them, and `added` (keys the fields do not hold) as withEntries sets them:
 * after up to insertionOrderedFields fields (an added entry's place in the array map among them), else all
 * keys in hash-map order, each field's text (`"key":value`, topLevelFields) moved whole, not parsed.
 */
export function withIdAndDates(ref: { objectId: string }, stored: { createdAt: number; updatedAt: number }, fields: string, added?: AddedEntries): string {
  const createdAt = isoDate(stored.createdAt);
  const updatedAt = stored.updatedAt === stored.createdAt ? createdAt : isoDate(stored.updatedAt);
  const dates = `"createdAt":"${createdAt}","updatedAt":"${updatedAt}"`;
  const id = `"objectId":${JSON.stringify(ref.objectId)}`;
  // The root's map counted its ACL, answered or not; an answer's added entries count the answer's keys only.
  const ordered = added ? arrayMapEntries - 3 - added.keys.length : insertionOrderedFields;
  // Fewer commas than that many fields need: no need to find the fields.
  const found = commasAtLeast(fields, ordered) ? topLevelFields(fields) : [];
  if (found !== null && found.length <= ordered && !fields.includes('"__type":"Relation"')) {
    const head = fields === '{}' ? '{' : `${fields.slice(0, -1)},`;
    return `${head}${dates},${id}${added ? `,${added.texts.join(',')}` : ''}}`;
  }
  // Text not as JSON.stringify writes it, relation descriptors to move, or an array index among the keys: the
  // parsing path decides.
  if (found === null || found.length <= ordered || found.some(({ key }) => isArrayIndex(key))) {
    const wire = toWire({ className: '', objectId: ref.objectId, createdAt: stored.createdAt, updatedAt: stored.updatedAt, acl: null, data: JSON.parse(fields) as JsonObject });
    return JSON.stringify(added ? withEntries(wire, added.entries) : wire);
  }
  const parts: string[] = [];
  // Without blanks, a field's text runs from just after the comma that ends the one before it.
  let from = 1;
  for (const field of found) {
    parts.push(fields.slice(from, field.end));
    from = field.end + 1;
  }
  parts.push(`"createdAt":"${createdAt}"`, `"updatedAt":"${updatedAt}"`, id);
  if (added) parts.push(...added.texts);
  const order = hashOrderOf(found, added?.keys ?? noKeys);
  let out = `{${parts[order[0]]}`;
  for (let i = 1; i < order.length; i++) out += `,${parts[order[i]]}`;
  return `${out}}`;
}

// The objects of a page mostly share their keys: the last order found is kept for the next.
const noKeys: readonly string[] = [];
let lastKeys: string[] = [];
let lastAdded = noKeys;
let lastOrder: number[] = [];

/** Where each field of `found`, then createdAt, updatedAt, objectId and `added`, goes in hash-map order: their indexes in that order. */
function hashOrderOf(found: readonly FieldText[], added: readonly string[]): number[] {
  if ((added === lastAdded || (added.length === lastAdded.length && added.every((key, i) => key === lastAdded[i]))) && found.length === lastKeys.length && found.every(({ key }, i) => key === lastKeys[i])) return lastOrder;
  const ranks = found.map(({ key }) => hashMapRank(key)).concat(serverRanks, added.map(hashMapRank));
  // Insertion sort of the indexes: a dozen entries or so, and stable (a full hash collision keeps its order).
  const order = [0];
  for (let i = 1; i < ranks.length; i++) {
    let at = i;
    while (at > 0 && ranks[order[at - 1]] > ranks[i]) at--;
    order.splice(at, 0, i);
  }
  lastKeys = found.map(({ key }) => key);
  lastAdded = added;
  lastOrder = order;
  return order;
}

function commasAtLeast(text: string, count: number): boolean {
  let at = -1;
  for (let i = 0; i < count; i++) if ((at = text.indexOf(',', at + 1)) < 0) return false;
  return true;
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
