// The order in which a Clojure hash map of keyword keys lists its keys. The hosted service (Clojure) built
// its answers as maps keyed by keywords: up to 8 entries an array map, which keeps insertion order, past 8 a
// PersistentHashMap, which lists its keys by their hashes, 5 bits at a time from the lowest (a trie of
// 32-way nodes). Every hash-ordered answer in the hosted recordings (users, files, objects of five fields
// or more) lists its keys in exactly this order (test/wire-key-order.test.ts); an order of all keys, so any
// subset of keys comes out in the order the whole set gives it.

const imul = Math.imul;
const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
const mixK1 = (k: number) => imul(rotl(imul(k, 0xcc9e2d51), 15), 0x1b873593);
const mixH1 = (h: number, k: number) => (imul(rotl(h ^ k, 13), 5) + 0xe6546b64) | 0;

function fmix(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** clojure.lang.Murmur3.hashUnencodedChars: UTF-16 units two at a time. */
function hashChars(s: string): number {
  let h = 0;
  const n = s.length;
  for (let i = 1; i < n; i += 2) h = mixH1(h, mixK1(s.charCodeAt(i - 1) | (s.charCodeAt(i) << 16)));
  if (n & 1) h ^= mixK1(s.charCodeAt(n - 1));
  return fmix(h, 2 * n);
}

/** Keyword.hasheq: the symbol's hash (Util.hashCombine of the name's and a nil namespace's 0) plus the golden ratio. */
function keywordHash(name: string): number {
  const seed = hashChars(name);
  const symbol = seed ^ ((0x9e3779b9 + (seed << 6) + (seed >> 2)) | 0);
  return (symbol + 0x9e3779b9) | 0;
}

/** The key's place in the trie walk: its hash's 5-bit groups, lowest first, as one number (7 groups, < 2^35). */
function trieRank(name: string): number {
  const h = keywordHash(name);
  let rank = 0;
  for (let shift = 0; shift < 32; shift += 5) rank = rank * 32 + ((h >>> shift) & 31);
  return rank;
}

// Keys are field names: few per application. Bounded so hostile key names cannot grow it without end.
const ranks = new Map<string, number>();
const maxRanks = 10_000;

/** A key's place in a Clojure hash map of keyword keys: keys go out by ascending rank. */
export function hashMapRank(name: string): number {
  let rank = ranks.get(name);
  if (rank === undefined) {
    rank = trieRank(name);
    if (ranks.size >= maxRanks) ranks.clear();
    ranks.set(name, rank);
  }
  return rank;
}

/** Largest map a Clojure array map holds (PersistentArrayMap.HASHTABLE_THRESHOLD, in entries); one more makes a hash map. */
export const arrayMapEntries = 8;

/** `keys` in the order a Clojure hash map of them as keywords lists them (ties, a full hash collision, keep their order). */
export function hashMapOrder<T extends { key: string }>(entries: T[]): T[] {
  return entries.sort((a, b) => hashMapRank(a.key) - hashMapRank(b.key));
}

/** A copy of `object` with its keys in hashMapOrder. */
export function inHashMapOrder<T extends Record<string, unknown>>(object: T): T {
  const keys = Object.keys(object);
  const ordered = hashMapOrder(keys.map((key) => ({ key })));
  if (ordered.every(({ key }, i) => key === keys[i])) return object;
  const out: Record<string, unknown> = {};
  for (const { key } of ordered) {
    if (key === '__proto__') Object.defineProperty(out, key, { value: object[key], enumerable: true, writable: true, configurable: true });
    else out[key] = object[key];
  }
  return out as T;
}
