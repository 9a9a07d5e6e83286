import { caseGroups } from './case-folds.ts';

/** Character sets of the `$regex` dialect as code point ranges (src/objects/regex.ts). */

/** Inclusive code point ranges, sorted and disjoint. */
export type Ranges = Array<[number, number]>;

export const maxRune = 0x10ffff;
export const digit: Ranges = [[0x30, 0x39]];
export const word: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
export const space: Ranges = [[0x09, 0x0a], [0x0c, 0x0d], [0x20, 0x20]];
export const newline = 0x0a;

/** POSIX classes as RE2 defines them: ASCII only, whatever the locale. */
export const posix: Record<string, Ranges> = {
  alnum: [[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]],
  alpha: [[0x41, 0x5a], [0x61, 0x7a]],
  ascii: [[0x00, 0x7f]],
  blank: [[0x09, 0x09], [0x20, 0x20]],
  cntrl: [[0x00, 0x1f], [0x7f, 0x7f]],
  digit,
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e]],
  space: [[0x09, 0x0d], [0x20, 0x20]],
  upper: [[0x41, 0x5a]],
  word,
  xdigit: [[0x30, 0x39], [0x41, 0x46], [0x61, 0x66]],
};

export function normalise(ranges: Ranges): Ranges {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function negate(ranges: Ranges): Ranges {
  const out: Ranges = [];
  let next = 0;
  for (const [lo, hi] of normalise(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= maxRune) out.push([next, maxRune]);
  return out;
}

// ── case folding ──────────────────────────────────────────────────────────────

/** Each character that has case, with the characters it equals under i (src/objects/case-folds.ts). */
const orbits = new Map<number, number[]>();
for (const group of caseGroups.split(',')) {
  const members = group.split(' ').map((hex) => parseInt(hex, 16));
  for (const cp of members) orbits.set(cp, members);
}

export function fold(ranges: Ranges): Ranges {
  const out: Ranges = [...ranges];
  for (const [lo, hi] of ranges) {
    if (hi - lo < orbits.size) {
      for (let cp = lo; cp <= hi; cp++) for (const other of orbits.get(cp) ?? []) out.push([other, other]);
    } else {
      for (const [cp, members] of orbits) if (cp >= lo && cp <= hi) for (const other of members) out.push([other, other]);
    }
  }
  return normalise(out);
}

/** \D, \S, \W under i: the class is folded before it is negated, as RE2 does. */
export function foldPerl(ranges: Ranges): Ranges {
  const negated = ranges[0]?.[0] === 0;
  return negated ? negate(fold(negate(ranges))) : fold(ranges);
}

/** The characters equal to one under i (itself alone when it has no case). */
export function caseVariants(cp: number): number[] {
  return orbits.get(cp) ?? [cp];
}
