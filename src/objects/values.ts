import { catalogue, fail } from '../lib/errors.ts';
import type { GeoPoint, Json, JsonObject } from './types.ts';

/** A class name: a letter, then letters, digits and '_' (a leading '_' is the server's built-in classes). */
export const classNamePattern = /^[A-Za-z][A-Za-z0-9_]{0,127}$/;
/**
 * A key, and each segment of a dotted one: letters, digits and '_', a digit first too (`2fa` is a real
 * app's field; the hosted service's rule is "letters, digits and underscores, starting with a letter or
 * digit"), never '__' first (reserved). A single leading '_' stays accepted (docs/compatibility.md).
 */
const fieldName = /^(?!__)[A-Za-z0-9_]{1,128}$/;
/** Classes the server defines; other names starting with "_" are reserved. */
export const builtInClasses = new Set(['_User', '_Installation', '_Role', '_File', '_Follower', '_Followee', '_Status']);
/** Fields the server owns: silently dropped from write bodies (SDKs send them back). */
export const serverFields = new Set(['objectId', 'createdAt', 'updatedAt']);
/** Fields no dotted key may write into: the server's own, and the ACL (written whole, as `ACL`). */
const reservedRoots = new Set([...serverFields, 'ACL']);
/** Names no write may use as a field, in any letter case (the exact server fields and `ACL` are read before). */
const reservedNames = new Set(['objectid', 'createdat', 'updatedat', 'acl', 'classname']);

/** Ids the server could have issued or imported; anything else cannot name a stored object. */
const plausibleId = /^[A-Za-z0-9_-]{1,64}$/;

export function isPlausibleId(id: string): boolean {
  return plausibleId.test(id);
}

/** A Pointer to a user, as the wire and the stores hold one. */
export function userPointer(objectId: string): { __type: 'Pointer'; className: '_User'; objectId: string } {
  return { __type: 'Pointer', className: '_User', objectId };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Refuses a class name that is neither a user class name nor a built-in class (103, the hosted text). */
export function checkClassName(className: string): void {
  if (!classNamePattern.test(className) && !builtInClasses.has(className)) fail('invalidClassName');
}

/** The hosted service's refusal of a key, naming it. */
export function invalidKey(key: string): never {
  return fail('invalidKeyName', `${catalogue.invalidKeyName.message} The column is: '${key}'.`);
}

/** Splits "a.b.c" into its segments, refusing names the server cannot store or query. */
export function fieldPath(key: string): string[] {
  const path = key.split('.');
  if (!path.every((segment) => fieldName.test(segment))) invalidKey(key);
  return path;
}

/**
 * fieldPath of a key a write sets: a dotted key may not reach into objectId, createdAt, updatedAt or
 * ACL, and no key may be a reserved name in another letter case (`objectid`, `Acl`, `className`).
 */
export function writePath(key: string): string[] {
  const path = fieldPath(key);
  if (path.length > 1 && reservedRoots.has(path[0])) {
    fail('invalidKeyName', `Invalid key name '${key}': ${path[0]} cannot be written through a dotted key.`);
  }
  if (reservedNames.has(path[0].toLowerCase())) invalidKey(key);
  return path;
}

const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

export function parseIsoDate(value: unknown): number | null {
  if (typeof value !== 'string' || !isoPattern.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** A GeoPoint's coordinates, or the hosted refusal (302) when either is not a number in range. */
export function checkGeoPoint(value: Record<string, unknown>): GeoPoint {
  const { latitude, longitude } = value;
  const inRange = (n: unknown, limit: number): n is number => typeof n === 'number' && n >= -limit && n <= limit;
  if (!inRange(latitude, 90) || !inRange(longitude, 180)) fail('invalidGeoPoint');
  return { latitude, longitude };
}

/** Whether a stored value is a GeoPoint (what checkJson keeps of one). */
export function isGeoPoint(value: unknown): value is GeoPoint & { __type: 'GeoPoint' } {
  return isObject(value) && value.__type === 'GeoPoint' && typeof value.latitude === 'number' && typeof value.longitude === 'number';
}

function typed(value: Record<string, unknown>): JsonObject {
  switch (value.__type) {
    case 'Date': {
      const ms = parseIsoDate(value.iso);
      if (ms === null) fail('incorrectType', 'A Date needs an ISO 8601 "iso" string.');
      return { __type: 'Date', iso: new Date(ms).toISOString() };
    }
    case 'Pointer':
      if (typeof value.className !== 'string' || !(classNamePattern.test(value.className) || builtInClasses.has(value.className))) {
        fail('invalidPointer', 'A Pointer needs a valid className.');
      }
      if (typeof value.objectId !== 'string' || value.objectId === '') fail('invalidPointer', 'A Pointer needs an objectId.');
      return { __type: 'Pointer', className: value.className, objectId: value.objectId };
    case 'GeoPoint': {
      const { latitude, longitude } = checkGeoPoint(value);
      // Only the three fields, whatever else was sent (docs/compatibility.md, "GeoPoint").
      return { __type: 'GeoPoint', latitude, longitude };
    }
    case 'Bytes':
      if (typeof value.base64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value.base64)) {
        fail('incorrectType', 'Bytes need a base64 string.');
      }
      return { __type: 'Bytes', base64: value.base64 };
    case 'File':
    case 'Relation':
      return checkJson(value, false) as JsonObject;
    default:
      return fail('incorrectType', `Unknown type '${String(value.__type)}'.`);
  }
}

/** Nesting deeper than this is refused (as MongoDB-backed services do); SQLite's JSON stops at 1000. */
export const maxDepth = 100;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The one rule for text the stores keep or compare: PostgreSQL cannot hold U+0000 in text or jsonb,
 * and a lone UTF-16 surrogate has no UTF-8 form (jsonb refuses it; a text parameter silently turns it
 * into U+FFFD). Every store refuses both alike, in values, keys and the strings a lookup compares.
 */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'Strings may not contain the NUL character.';
  if (loneSurrogate.test(text)) return 'Strings must be valid Unicode (a lone surrogate was found).';
  return null;
}

/** Refuses text that textProblem names (code 111). */
export function checkText(text: string): string {
  const problem = textProblem(text);
  if (problem) fail('incorrectType', problem);
  return text;
}

/**
 * Every string and key anywhere in `value` passes textProblem (for JSON kept whole, like settings);
 * the first that does not is refused with code 111.
 */
export function checkTextDeep(value: unknown, depth = 0): void {
  if (depth > maxDepth) fail('incorrectType', `Values may nest at most ${maxDepth} levels deep.`);
  if (typeof value === 'string') checkText(value);
  else if (Array.isArray(value)) for (const item of value) checkTextDeep(item, depth + 1);
  else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      checkText(key);
      checkTextDeep(item, depth + 1);
    }
  }
}

/**
 * Validates a value to be stored: typed values are normalised, nested keys may not hold
 * '$' or '.', and anything JSON cannot carry is refused.
 */
export function checkJson(value: unknown, allowTyped = true, depth = 0): Json {
  if (depth > maxDepth) fail('incorrectType', `Values may nest at most ${maxDepth} levels deep.`);
  if (typeof value === 'string') return checkText(value);
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) fail('incorrectType', 'Numbers must be finite.');
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => checkJson(item, true, depth + 1));
  if (isObject(value)) {
    if (allowTyped && '__type' in value) return typed(value);
    if ('__op' in value) fail('incorrectType', 'Operations (__op) are allowed only on top-level keys.');
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      // '__proto__' would replace the object's prototype instead of becoming a key (the body parser refuses it too).
      if (key.includes('$') || key.includes('.') || key === '__proto__' || textProblem(key) !== null) {
        fail('invalidNestedKey', `Invalid nested key '${key}'.`);
      }
      out[key] = checkJson(item, true, depth + 1);
    }
    return out;
  }
  return fail('incorrectType', 'Unsupported value.');
}

export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as Json[];
    return a.length === other.length && a.every((item, i) => deepEqual(item, other[i]));
  }
  const left = Object.keys(a);
  const right = b as JsonObject;
  return left.length === Object.keys(right).length && left.every((key) => deepEqual(a[key], right[key]));
}
