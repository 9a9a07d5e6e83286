/**
 * Limits on the shape of a JSON text, checked by one pass over the text BEFORE it is parsed: a text
 * beyond them is refused without building a single object. What a body costs the event loop (parse,
 * validation, serialisation, the SQLite write) grows with its values more than with its bytes: 1 MiB
 * of `{},{},…` took ~600 ms, 1 MiB of one string ~20 ms.
 */
export interface JsonLimits {
  /** Deepest nesting of objects and arrays (the top-level object is 1). */
  maxDepth: number;
  /** Most keys in one object. */
  maxKeys: number;
  /** Most keys and values in the whole text, together: objects, arrays, strings, numbers, booleans, nulls and keys. */
  maxValues: number;
  /** Most objects and arrays in the whole text: each costs several times a scalar to build, check and store. */
  maxContainers: number;
}

export type JsonLimitBreach = { limit: 'depth' | 'keys' | 'values' | 'containers'; max: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Index of the quote that closes the string opened at `start` (one preceded by an even number of backslashes), or -1 when it is never closed. */
export function stringEnd(text: string, start: number): number {
  let at = start;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at;
  }
}

/**
 * The first limit the text breaks, or null. Counts tokens only: a malformed text is left for the
 * parser to refuse (it never passes here for a breach it does not have).
 */
export function checkJsonShape(text: string, limits: JsonLimits): JsonLimitBreach | null {
  // Per open container: -1 for an array, else the keys counted so far in that object.
  const keys: number[] = [];
  let values = 0;
  let containers = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return null;
      i = end;
      // A key is followed by ':' (after optional whitespace); anything else is a string value.
      let next = i + 1;
      while (next < length && text.charCodeAt(next) <= 0x20) next++;
      if (text.charCodeAt(next) === 0x3a && keys.length > 0 && keys[keys.length - 1] >= 0) {
        if (++keys[keys.length - 1] > limits.maxKeys) return { limit: 'keys', max: limits.maxKeys };
        if (++values > limits.maxValues) return { limit: 'values', max: limits.maxValues };
        i = next;
      } else if (++values > limits.maxValues) return { limit: 'values', max: limits.maxValues };
    } else if (c === 0x7b || c === 0x5b) {
      if (++values > limits.maxValues) return { limit: 'values', max: limits.maxValues };
      if (++containers > limits.maxContainers) return { limit: 'containers', max: limits.maxContainers };
      keys.push(c === 0x7b ? 0 : -1);
      if (keys.length > limits.maxDepth) return { limit: 'depth', max: limits.maxDepth };
    } else if (c === 0x7d || c === 0x5d) {
      keys.pop();
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e) {
      // A number or literal (-1.5e3, true, false, null): one value, whatever its length.
      if (++values > limits.maxValues) return { limit: 'values', max: limits.maxValues };
      while (i + 1 < length) {
        const d = text.charCodeAt(i + 1);
        if (d === 0x2c || d === 0x7d || d === 0x5d || d <= 0x20 || d === QUOTE || d === 0x7b || d === 0x5b || d === 0x3a) break;
        i++;
      }
    }
  }
  return null;
}
