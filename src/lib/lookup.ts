/**
 * Objects indexed by text from a request. A plain object answers an inherited member for a key it
 * does not hold ('toString' is a function, 'constructor' is Object), and assigning '__proto__'
 * replaces its prototype instead of adding a key: a class, field or setting named so once reached
 * SQL as a function's source or changed Object.prototype itself. Tables and maps keyed by such text
 * are built with these helpers, so no call site has to remember the rule.
 */

/** A fixed table with no prototype: reading a key it was not built with gives undefined. */
export function table<T>(entries: Record<string, T>): Readonly<Record<string, T | undefined>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}

/**
 * A map with no prototype, filled from `from` (own keys only): every key, '__proto__' included, is an
 * ordinary entry. JSON.stringify, spreads and Object.entries read it like any object.
 */
export function dictionary<T>(from?: Readonly<Record<string, T>> | null): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  if (from) for (const key of Object.keys(from)) out[key] = from[key];
  return out;
}

/** `object[key]` when the object holds the key itself (parsed JSON, stored fields), else undefined. */
export function own<T>(object: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return object != null && Object.hasOwn(object, key) ? object[key] : undefined;
}
