import { RE2JS } from 're2js';
import { fail } from '../lib/errors.ts';
import { maxRepeat, isAlnum, Parser, refuse, type Assertion, type Flags, type RegexNode } from './regex-parser.ts';

export type { Assertion, Ranges, RegexNode } from './regex-parser.ts';

/**
 * Roost's one regular-expression dialect for `$regex`: RE2 syntax, linear-time matching, the
 * same answer on every store. A pattern is parsed once, when the query is parsed, into a tree
 * with no flags left in it (case folding, `.` and `^`/`$` are resolved into explicit character
 * sets and anchors), so each store only spells the tree in its own syntax: SQLite runs the RE2
 * spelling through re2js, PostgreSQL an ARE spelling of the same tree
 * (src/storage/postgres/regex.ts). Anything outside the dialect is refused before a row is read.
 *
 * Refused: back-references, look-around, `\p{…}` Unicode classes, inline `(?x)`, repetition
 * counts over 255 (PostgreSQL's limit), patterns over 500 characters or compiling to more than
 * 500 RE2 instructions (per-character cost grows with the program).
 */

export const regexLimits = { maxLength: 500, maxRepeat, maxProgram: 500 } as const;

/** A validated pattern: its tree for stores that translate, and its RE2 spelling for re2js. */
export interface Regex {
  tree: RegexNode;
  re2: string;
}

// ── the RE2 spelling ─────────────────────────────────────────────────────────

function re2Char(cp: number): string {
  return cp < 0x80 && isAlnum(String.fromCharCode(cp)) ? String.fromCharCode(cp) : `\\x{${cp.toString(16)}}`;
}

const re2Asserts: Record<Assertion, string> = {
  textStart: '\\A',
  textEnd: '\\z',
  lineStart: '(?m:^)',
  lineEnd: '(?m:$)',
  wordBoundary: '\\b',
  notWordBoundary: '\\B',
};

export function re2Source(node: RegexNode): string {
  switch (node.kind) {
    case 'set': {
      const { ranges } = node;
      if (ranges.length === 0) return '[^\\x{0}-\\x{10ffff}]';
      if (ranges.length === 1 && ranges[0][0] === ranges[0][1]) return re2Char(ranges[0][0]);
      return `[${ranges.map(([lo, hi]) => (lo === hi ? re2Char(lo) : `${re2Char(lo)}-${re2Char(hi)}`)).join('')}]`;
    }
    case 'assert':
      return re2Asserts[node.at];
    case 'concat':
      return node.items.length === 1 ? re2Source(node.items[0]) : `(?:${node.items.map(re2Source).join('')})`;
    case 'alt':
      return `(?:${node.items.map(re2Source).join('|')})`;
    case 'repeat': {
      const count = node.max === null ? `{${node.min},}` : node.max === node.min ? `{${node.min}}` : `{${node.min},${node.max}}`;
      return `(?:${re2Source(node.item)})${count}`;
    }
  }
}

// ── compiling ────────────────────────────────────────────────────────────────

/** A Map that forgets its oldest entry beyond `limit`: apps repeat their patterns, users' searches do not. */
function bounded<T>(limit: number): { get(key: string): T | undefined; set(key: string, value: T): void } {
  const entries = new Map<string, T>();
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      if (entries.size >= limit) entries.delete(entries.keys().next().value!);
      entries.set(key, value);
    },
  };
}

const programs = bounded<RE2JS>(500);
const parsed = bounded<Regex>(500);

/** The re2js program for an RE2 spelling (compiling one costs about half a millisecond). */
export function re2Program(source: string): RE2JS {
  let program = programs.get(source);
  if (program === undefined) {
    program = RE2JS.compile(source, RE2JS.DISABLE_UNICODE_GROUPS);
    programs.set(source, program);
  }
  return program;
}

/** `$regex` with `$options`, validated into the dialect, or a 400 (invalidRegex). */
export function parseRegex(pattern: string, options: string): Regex {
  if (!/^[imsx]*$/.test(options)) fail('invalidRegex', '$options may hold only i, m, s and x.');
  if (pattern.length > regexLimits.maxLength) refuse(`a pattern may be at most ${regexLimits.maxLength} characters`);
  const key = `${options}/${pattern}`;
  const known = parsed.get(key);
  if (known) return known;
  const flags: Flags = { i: options.includes('i'), m: options.includes('m'), s: options.includes('s') };
  const tree = new Parser(pattern, options.includes('x')).parse(flags);
  const re2 = re2Source(tree);
  let program: RE2JS;
  try {
    // RE2 has the last word (nested repetitions, for one); Roost's parser accepts a part of its syntax.
    program = re2Program(re2);
  } catch (error) {
    // RE2's message would quote the spelling above, not what the client sent.
    const repeat = error instanceof Error && error.message.includes('invalid repeat count');
    refuse(repeat ? 'nested repetition counts may multiply to at most 1000' : 'unsupported syntax');
  }
  if (program.programSize() > regexLimits.maxProgram) {
    refuse(`the pattern is too complex (more than ${regexLimits.maxProgram} instructions once compiled)`);
  }
  const regex = { tree, re2 };
  parsed.set(key, regex);
  return regex;
}
