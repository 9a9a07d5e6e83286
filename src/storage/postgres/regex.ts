import type { Assertion, Ranges, RegexNode } from '../../objects/regex.ts';

/**
 * A validated `$regex` tree (src/objects/regex.ts) spelled as a PostgreSQL ARE that matches the
 * same strings. The tree has no flags left, so the ARE is used with `~` and PostgreSQL's default
 * options (`.`, `^`, `$` are never emitted: sets, `\A` and `\Z` say exactly what is meant);
 * characters are written as \u escapes, so neither the locale nor ARE metacharacters play a part.
 * PostgreSQL text never holds NUL or a lone surrogate, so those leave the sets.
 */

const wordClass = '[0-9A-Za-z_]';

const asserts: Record<Assertion, string> = {
  textStart: '\\A',
  textEnd: '\\Z',
  lineStart: '(?<![^\\n])',
  lineEnd: '(?![^\\n])',
  // RE2's \b is ASCII; PostgreSQL's \y follows the locale, so the boundary is spelled out.
  wordBoundary: `(?:(?<=${wordClass})(?!${wordClass})|(?<!${wordClass})(?=${wordClass}))`,
  notWordBoundary: `(?:(?<=${wordClass})(?=${wordClass})|(?<!${wordClass})(?!${wordClass}))`,
};

/** Matches nothing: a character after the end of the text. */
const never = '(?:\\Z.)';

function char(cp: number): string {
  if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a)) return String.fromCharCode(cp);
  const hex = cp.toString(16).padStart(cp > 0xffff ? 8 : 4, '0');
  return cp > 0xffff ? `\\U${hex}` : `\\u${hex}`;
}

/** Removes what PostgreSQL text cannot hold: NUL and the surrogate block. */
function storable(ranges: Ranges): Ranges {
  const out: Ranges = [];
  for (const [lo, hi] of ranges) {
    for (const [a, b] of [
      [Math.max(lo, 1), Math.min(hi, 0xd7ff)],
      [Math.max(lo, 0xe000), hi],
    ]) {
      if (a <= b) out.push([a, b]);
    }
  }
  return out;
}

function set(ranges: Ranges): string {
  const kept = storable(ranges);
  if (kept.length === 0) return never;
  if (kept.length === 1 && kept[0][0] === kept[0][1]) return char(kept[0][0]);
  return `[${kept.map(([lo, hi]) => (lo === hi ? char(lo) : `${char(lo)}-${char(hi)}`)).join('')}]`;
}

export function postgresRegex(node: RegexNode): string {
  switch (node.kind) {
    case 'set':
      return set(node.ranges);
    case 'assert':
      return asserts[node.at];
    case 'concat':
      return node.items.length === 1 ? postgresRegex(node.items[0]) : `(?:${node.items.map(postgresRegex).join('')})`;
    case 'alt':
      return `(?:${node.items.map(postgresRegex).join('|')})`;
    case 'repeat': {
      // Greediness never changes whether a match exists; bounded counts are at most 255 (DUPMAX).
      const count = node.max === null ? (node.min === 0 ? '*' : node.min === 1 ? '+' : `{${node.min},}`) : `{${node.min},${node.max}}`;
      return `(?:${postgresRegex(node.item)})${count}`;
    }
  }
}
