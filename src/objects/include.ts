import { fail } from '../lib/errors.ts';
import { dictionary, own } from '../lib/lookup.ts';
import type { Projection } from './query.ts';
import type { FoundJson, Json, JsonObject, StoredObject } from './types.ts';
import { builtInClasses, classNamePattern, fieldPath, isObject } from './values.ts';
import { addedEntries, toWire, topLevelFields, wireJson, withEntries, withIdAndDates, type AddedEntries, type FieldText, type WireOptions } from './wire.ts';

/**
 * `include=post.author,tags`: which pointer fields are answered with their objects, as a tree of
 * keys (reference §8). Each level is read with one statement per class it reaches (readIncluded).
 */
export type IncludeTree = Map<string, IncludeTree>;

/** Pointers followed in one path at most: each is a level, so a statement of its own. */
export const maxIncludeDepth = 16;

/** Parses `include` (commas, blanks after them tolerated, dotted paths); null when it asks for nothing. */
export function parseInclude(raw: unknown): IncludeTree | null {
  if (raw === undefined || raw === '') return null;
  if (typeof raw !== 'string') fail('invalidQuery', 'include must be a comma-separated list of keys.');
  const tree: IncludeTree = new Map();
  for (const key of raw.split(',').map((k) => k.trim()).filter(Boolean)) {
    const path = fieldPath(key);
    if (path.length > maxIncludeDepth) fail('invalidQuery', `include may follow at most ${maxIncludeDepth} pointers in one path.`);
    let node = tree;
    for (const segment of path) {
      let child = node.get(segment);
      if (!child) node.set(segment, (child = new Map()));
      node = child;
    }
  }
  return tree.size === 0 ? null : tree;
}

/**
 * What to answer of an object at one place of the include tree: its own `keys` projection and the
 * fields whose pointers are expanded. `keys=post.title` with include=post restricts the included post
 * (its built-in fields kept), as Parse does (docs/compatibility.md).
 */
export interface IncludePlan {
  projection: Projection | null;
  children: Map<string, IncludePlan>;
}

const startsWith = (path: string[], key: string) => path[0] === key;

/** The plan of the root objects of a read: `keys` split between the levels; an include `keys` leaves out is dropped. */
export function planInclude(tree: IncludeTree | null, projection: Projection | null): IncludePlan {
  const children = new Map<string, IncludePlan>();
  if (!tree) return { projection, children };
  if (!projection) {
    for (const [key, sub] of tree) children.set(key, planInclude(sub, null));
    return { projection: null, children };
  }
  const nested = (path: string[]) => path.length > 1 && tree.has(path[0]);
  const own: Projection = {
    include: projection.include.filter((path) => !nested(path)),
    exclude: projection.exclude.filter((path) => !nested(path)),
  };
  for (const [key, sub] of tree) {
    const include = projection.include.filter((path) => nested(path) && startsWith(path, key)).map((path) => path.slice(1));
    const exclude = projection.exclude.filter((path) => nested(path) && startsWith(path, key)).map((path) => path.slice(1));
    const whole = own.include.some((path) => path.length === 1 && path[0] === key);
    if (include.length > 0 && !whole) own.include.push([key]);
    const answered = (projection.include.length === 0 || whole || include.length > 0) && !own.exclude.some((path) => path.length === 1 && path[0] === key);
    if (!answered) continue;
    const restricted = include.length > 0 && !whole;
    const childProjection = restricted || exclude.length > 0 ? { include: restricted ? include : [], exclude } : null;
    children.set(key, planInclude(sub, childProjection));
  }
  return { projection: own.include.length > 0 || own.exclude.length > 0 ? own : null, children };
}

interface PointerRef {
  className: string;
  objectId: string;
}

function pointerOf(value: unknown): PointerRef | null {
  if (!isObject(value) || value.__type !== 'Pointer') return null;
  const { className, objectId } = value;
  if (typeof className !== 'string' || typeof objectId !== 'string') return null;
  if (!classNamePattern.test(className) && !builtInClasses.has(className)) return null;
  return { className, objectId };
}

const refKey = (ref: PointerRef) => `${ref.className}\u0000${ref.objectId}`;

/** The objects an include read, by class and id; a pointer whose target is absent here stays a pointer. */
export type Included = ReadonlyMap<string, StoredObject>;

/** Reads the readable objects among `ids` of one class (the caller's readers), in one statement. */
export type ReadByIds = (className: string, ids: string[]) => Promise<StoredObject[]>;

/**
 * Reads every object the plan reaches, one level of the tree at a time: the pointers of a level are
 * collected from all its objects, then each class they name is read once (never once per row). An
 * array's pointers are expanded but not followed further ("只能包含到数组本身", reference §8).
 */
export async function readIncluded(roots: readonly StoredObject[], plan: IncludePlan, read: ReadByIds): Promise<Included> {
  const found = new Map<string, StoredObject>();
  const asked = new Set<string>();
  let level: IncludeLevel = roots.map((object) => ({ data: object.data, plan }));
  while (level.length > 0) {
    const { wanted, followed } = pointersOf(level, asked);
    const reads = [...wanted].map(([className, ids]) => read(className, ids));
    for (const objects of await Promise.all(reads)) {
      for (const object of objects) found.set(refKey(object), object);
    }
    level = followed.flatMap(({ key, plan: at }) => {
      const object = found.get(key);
      return object ? [{ data: object.data, plan: at }] : [];
    });
  }
  return found;
}

/** Objects of one level of the include tree, each with the plan at its place. */
type IncludeLevel = Array<{ data: JsonObject; plan: IncludePlan }>;

/**
 * The pointers a level's objects hold under their plans' fields (an array's elements too), by class, each
 * once (`asked` holds those already read), and the targets whose own pointers are followed a level down.
 */
function pointersOf(level: IncludeLevel, asked: Set<string>): { wanted: Map<string, string[]>; followed: Array<{ key: string; plan: IncludePlan }> } {
  const wanted = new Map<string, string[]>();
  const followed: Array<{ key: string; plan: IncludePlan }> = [];
  const want = (ref: PointerRef) => {
    const key = refKey(ref);
    if (asked.has(key)) return key;
    asked.add(key);
    const ids = wanted.get(ref.className) ?? [];
    wanted.set(ref.className, ids);
    ids.push(ref.objectId);
    return key;
  };
  for (const { data, plan: at } of level) {
    for (const [field, child] of at.children) {
      const value = own(data, field);
      const ref = pointerOf(value);
      if (ref) {
        const key = want(ref);
        if (child.children.size > 0) followed.push({ key, plan: child });
      } else if (Array.isArray(value)) {
        for (const element of value) {
          const inArray = pointerOf(element);
          if (inArray) want(inArray);
        }
      }
    }
  }
  return { wanted, followed };
}

/**
 * Whether a read's include is answered as stored text (ObjectService.readIncludedJson, includedPageJson):
 * one level of pointers, no `keys` and no ACL; deeper paths, `keys` and `returnACL` take renderIncluded.
 */
export function includesAsStored(plan: IncludePlan, returnAcl: boolean): boolean {
  return plan.projection === null && !returnAcl && plan.children.size > 0 && [...plan.children.values()].every((child) => child.projection === null && child.children.size === 0);
}

/** Included objects as the JSON text renderIncluded gives them, by class and id (refKey). */
export type IncludedJson = ReadonlyMap<string, string>;

/** Reads the objects a level wants (ids by class) as their stored JSON text, in one statement. */
export type ReadJsonByIds = (wanted: ReadonlyMap<string, string[]>) => Promise<Array<FoundJson & { className: string }>>;

/** Keys that renderIncluded overwrites in place when an object's own fields hold them: such text is parsed. */
const includedKeyInJson = /"(?:__type|className)":/;

/**
 * readIncluded of a one-level plan (includesAsStored), every class in one read, with each included object as the JSON text of
 * includedWire(toWire(object)), spliced from its stored text (wireJson) rather than parsed, copied and
 * serialised; text holding `__type` or `className` (whose places the object's own keys keep) is parsed.
 */
export async function readIncludedJson(roots: readonly JsonObject[], plan: IncludePlan, read: ReadJsonByIds): Promise<IncludedJson> {
  const { wanted } = pointersOf(roots.map((data) => ({ data, plan })), new Set());
  const found = new Map<string, string>();
  if (wanted.size === 0) return found;
  for (const one of await read(wanted)) found.set(refKey(one), includedObjectJson(one.className, one));
  return found;
}

function includedObjectJson(className: string, one: FoundJson): string {
  const ref = { className, objectId: one.objectId };
  if (includedKeyInJson.test(one.dataJson)) {
    const object: StoredObject = { ...ref, createdAt: one.createdAt, updatedAt: one.updatedAt, acl: null, data: JSON.parse(one.dataJson) as JsonObject };
    return JSON.stringify(includedWire(toWire(object), className));
  }
  return wireJson(ref, one, pointerEntries(className));
}

// An included object's two added entries, made once a class: a page includes dozens of objects of a few classes,
// and one AddedEntries each also lets withIdAndDates' last-order check find the same keys.
const pointerEntriesByClass = new Map<string, AddedEntries>();

function pointerEntries(className: string): AddedEntries {
  let entries = pointerEntriesByClass.get(className);
  if (!entries) {
    // Class names are per application and unbounded across them: a long-lived node keeps the recent ones.
    if (pointerEntriesByClass.size >= 1000) pointerEntriesByClass.clear();
    entries = addedEntries({ __type: 'Pointer', className });
    pointerEntriesByClass.set(className, entries);
  }
  return entries;
}

/**
 * An included object as answered: the object as read directly with `__type: "Pointer"` and its `className`
 * added, in the order the hosted service's map of them gave (withEntries: past 8 keys, all in hash-map order).
 */
function includedWire(wire: JsonObject, className: string): JsonObject {
  return withEntries(wire, { __type: 'Pointer', className });
}

/** A root of an included page: its fields' text (topLevelFields) and the values of its included fields, parsed from that text alone. */
export interface IncludingRoot {
  fields: readonly FieldText[];
  data: JsonObject;
}

/**
 * The root as includedRootJson splices it; null when its text holds a server-owned key at the top (toWire
 * overwrites it in place) or is not JSON.stringify's: the caller answers through renderIncluded.
 */
export function includingRoot(json: string, plan: IncludePlan): IncludingRoot | null {
  const fields = topLevelFields(json);
  if (fields === null) return null;
  const data = dictionary<Json>();
  for (const { key, start, end } of fields) {
    if (key === 'objectId' || key === 'createdAt' || key === 'updatedAt') return null;
    if (plan.children.has(key)) data[key] = JSON.parse(json.slice(start, end)) as Json;
  }
  return { fields, data };
}

/**
 * The JSON text of renderIncluded(root, plan, …) for a one-level plan: the root's stored text with each
 * included pointer (alone or in an array) replaced by its object's text, the rest of the text kept as
 * stored (the text as JSON.stringify writes it: what the page without include sends too).
 * test/include-pages.test.ts holds the bytes to renderIncluded's.
 */
export function includedRootJson(root: FoundJson, { fields, data }: IncludingRoot, plan: IncludePlan, included: IncludedJson): string {
  const json = root.dataJson;
  const expand = (value: Json): string => {
    const ref = pointerOf(value);
    return (ref && included.get(refKey(ref))) ?? JSON.stringify(value);
  };
  let out = '';
  let from = 0;
  for (const { key, start, end } of fields) {
    if (!plan.children.has(key)) continue;
    const value = data[key];
    const ref = pointerOf(value);
    const spliced = Array.isArray(value) ? `[${value.map(expand).join(',')}]` : ref && included.get(refKey(ref));
    if (spliced === undefined || spliced === null) continue;
    out += json.slice(from, start) + spliced;
    from = end;
  }
  return withIdAndDates(root, root, out + json.slice(from));
}

/** How an object of a class goes out (a `_User` never with its secrets); toWire for most. */
export type ObjectView = (object: StoredObject, options: WireOptions) => JsonObject;

/**
 * The object as clients see it with its includes expanded: each included pointer becomes the whole
 * object as its own view answers it, `__type` still "Pointer" and `className` kept (reference §8).
 */
export function renderIncluded(
  object: StoredObject,
  plan: IncludePlan,
  included: Included,
  options: { view: ObjectView; returnAcl: boolean },
): JsonObject {
  const out = options.view(object, { projection: plan.projection, returnAcl: options.returnAcl });
  for (const [field, child] of plan.children) {
    if (!Object.hasOwn(out, field)) continue;
    const value = out[field];
    const expand = (element: Json, at: IncludePlan): Json => {
      const ref = pointerOf(element);
      const target = ref && included.get(refKey(ref));
      if (!target) return element;
      return includedWire(renderIncluded(target, at, included, options), target.className);
    };
    if (Array.isArray(value)) {
      const elementPlan: IncludePlan = { projection: child.projection, children: new Map() };
      out[field] = value.map((element) => expand(element, elementPlan));
    } else {
      out[field] = expand(value, child);
    }
  }
  return out;
}
