import { RE2JS } from 're2js';
import { fail } from '../lib/errors.ts';
import { caseGroups } from './case-folds.ts';

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

export const regexLimits = { maxLength: 500, maxRepeat: 255, maxProgram: 500 } as const;

/** Inclusive code point ranges, sorted and disjoint. */
export type Ranges = Array<[number, number]>;
export type Assertion = 'textStart' | 'textEnd' | 'lineStart' | 'lineEnd' | 'wordBoundary' | 'notWordBoundary';

export type RegexNode =
  | { kind: 'set'; ranges: Ranges }
  | { kind: 'assert'; at: Assertion }
  | { kind: 'concat'; items: RegexNode[] }
  | { kind: 'alt'; items: RegexNode[] }
  | { kind: 'repeat'; min: number; max: number | null; item: RegexNode };

/** A validated pattern: its tree for stores that translate, and its RE2 spelling for re2js. */
export interface Regex {
  tree: RegexNode;
  re2: string;
}

const maxRune = 0x10ffff;
const digit: Ranges = [[0x30, 0x39]];
const word: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
const space: Ranges = [[0x09, 0x0a], [0x0c, 0x0d], [0x20, 0x20]];
const newline = 0x0a;

/** POSIX classes as RE2 defines them: ASCII only, whatever the locale. */
const posix: Record<string, Ranges> = {
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

function fold(ranges: Ranges): Ranges {
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

// ── parsing ───────────────────────────────────────────────────────────────────

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
}

function refuse(why: string): never {
  fail('invalidRegex', `Invalid regular expression: ${why}.`);
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isAlnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c);
const xSpace = new Set([' ', '\t', '\n', '\r', '\f', '\v']);

class Parser {
  private pos = 0;
  private readonly chars: string[];

  constructor(pattern: string, private readonly extended: boolean) {
    this.chars = Array.from(pattern);
  }

  parse(flags: Flags): RegexNode {
    const tree = this.alternation(flags);
    if (this.pos < this.chars.length) refuse('unmatched )');
    return tree;
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.pos + offset];
  }

  /** In x mode, white space and # comments between tokens mean nothing. */
  private skipExtended(): void {
    if (!this.extended) return;
    for (;;) {
      const c = this.peek();
      if (c !== undefined && xSpace.has(c)) this.pos++;
      else if (c === '#') {
        while (this.peek() !== undefined && this.peek() !== '\n') this.pos++;
      } else return;
    }
  }

  private alternation(outer: Flags): RegexNode {
    const flags = { ...outer }; // (?i) lasts to the end of the enclosing group, across its |
    const items = [this.concatenation(flags)];
    while (this.peek() === '|') {
      this.pos++;
      items.push(this.concatenation(flags));
    }
    return items.length === 1 ? items[0] : { kind: 'alt', items };
  }

  private concatenation(flags: Flags): RegexNode {
    const items: RegexNode[] = [];
    for (;;) {
      this.skipExtended();
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') break;
      const atoms = this.atom(flags);
      if (atoms.length === 0) continue;
      // A quantifier after \Q…\E applies to its last character only, as in RE2.
      items.push(...atoms.slice(0, -1), this.quantified(atoms[atoms.length - 1]));
    }
    return items.length === 1 ? items[0] : { kind: 'concat', items };
  }

  /** {n}, {n,} or {n,m} at the current position, or null when the brace is a plain character (as in RE2). */
  private repeatCount(): { min: number; max: number | null; length: number } | null {
    const text = this.chars.slice(this.pos, this.pos + 24).join('');
    const match = /^\{(\d+)(,(\d*))?\}/.exec(text);
    if (!match) return null;
    const leadingZero = (s: string | undefined) => s !== undefined && s.length > 1 && s[0] === '0';
    if (leadingZero(match[1]) || leadingZero(match[3])) return null;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === '' ? null : Number(match[3]);
    return { min, max, length: match[0].length };
  }

  private quantified(atom: RegexNode): RegexNode {
    let quantifiers = 0;
    let node = atom;
    for (;;) {
      this.skipExtended();
      const c = this.peek();
      let min: number;
      let max: number | null;
      if (c === '*' || c === '+' || c === '?') {
        this.pos++;
        [min, max] = c === '*' ? [0, null] : c === '+' ? [1, null] : [0, 1];
      } else if (c === '{') {
        const count = this.repeatCount();
        if (count === null) return node;
        this.pos += count.length;
        ({ min, max } = count);
        if (min > regexLimits.maxRepeat || (max !== null && max > regexLimits.maxRepeat)) {
          refuse(`repetition counts may be at most ${regexLimits.maxRepeat}`);
        }
        if (max !== null && max < min) refuse('repetition {n,m} needs n <= m');
      } else return node;
      if (++quantifiers > 1) refuse('nested repetition operator');
      if (this.peek() === '?') this.pos++; // lazy: which match is found, not whether one is
      node = repeat(node, min, max);
    }
  }

  /** The next atom; none for a flag group such as (?i), several for \Q…\E. */
  private atom(flags: Flags): RegexNode[] {
    const c = this.chars[this.pos++];
    if (c === '(') {
      const group = this.group(flags);
      return group === null ? [] : [group];
    }
    if (c === '\\' && this.peek() === 'Q') {
      // \Q…\E: everything up to \E (or the end) is literal, as the SDKs' startsWith/contains send it.
      const items: RegexNode[] = [];
      for (this.pos++; this.pos < this.chars.length && !(this.peek() === '\\' && this.peek(1) === 'E'); this.pos++) {
        items.push(literal(this.chars[this.pos], flags));
      }
      if (this.pos < this.chars.length) this.pos += 2;
      return items;
    }
    return [this.single(c, flags)];
  }

  private single(c: string, flags: Flags): RegexNode {
    switch (c) {
      case '[':
        return set(this.bracket(flags));
      case '.':
        return set(flags.s ? [[0, maxRune]] : negate([[newline, newline]]));
      case '^':
        return { kind: 'assert', at: flags.m ? 'lineStart' : 'textStart' };
      case '$':
        return { kind: 'assert', at: flags.m ? 'lineEnd' : 'textEnd' };
      case '*':
      case '+':
      case '?':
        return refuse('missing argument to repetition operator');
      case '{':
        this.pos--;
        if (this.repeatCount() !== null) refuse('missing argument to repetition operator');
        this.pos++;
        return literal('{', flags);
      case '\\':
        return this.escape(flags);
      default:
        return literal(c, flags);
    }
  }

  private group(outer: Flags): RegexNode | null {
    let flags = outer;
    if (this.peek() === '?') {
      this.pos++;
      const rest = this.chars.slice(this.pos, this.pos + 4).join('');
      if (/^(=|!|<=|<!)/.test(rest)) refuse('look-around is not supported');
      if (rest.startsWith('P=') || rest.startsWith('P>')) refuse('back-references are not supported');
      const named = /^P?</.test(rest);
      if (named) {
        this.pos += rest[0] === 'P' ? 2 : 1;
        const start = this.pos;
        while (this.peek() !== undefined && /^\w$/.test(this.peek()!)) this.pos++;
        if (this.pos === start || this.peek() !== '>') refuse('invalid group name');
        this.pos++;
      } else {
        const changed = this.flagGroup(outer);
        if (changed.scoped === false) {
          Object.assign(outer, changed.flags); // (?i): the rest of the enclosing group
          return null;
        }
        flags = changed.flags;
      }
    }
    const inner = this.alternation(flags);
    if (this.peek() !== ')') refuse('missing )');
    this.pos++;
    return inner;
  }

  /** (?:, or (?flags) or (?flags: with flags from i, m, s, U and at most one '-'; x only through $options. */
  private flagGroup(outer: Flags): { flags: Flags; scoped: boolean } {
    const flags = { ...outer };
    let negated = false;
    let letters = 0;
    let lettersAfterMinus = 0;
    if (this.peek() === ':') {
      this.pos++;
      return { flags, scoped: true }; // (?:…)
    }
    for (;;) {
      const c = this.chars[this.pos++];
      if (c === 'i' || c === 'm' || c === 's') {
        flags[c] = !negated;
        letters++;
        if (negated) lettersAfterMinus++;
      } else if (c === 'U') {
        letters++; // ungreedy: which match is found, not whether one is
        if (negated) lettersAfterMinus++;
      } else if (c === '-' && !negated) {
        negated = true;
      } else if ((c === ')' || c === ':') && letters > 0 && (!negated || lettersAfterMinus > 0)) {
        return { flags, scoped: c === ':' };
      } else if (c === 'x') {
        refuse('the x flag is set with $options, not inline');
      } else {
        refuse('unsupported group syntax');
      }
    }
  }

  /** A character after a backslash, as RE2 reads it both inside and outside brackets. */
  private escapedChar(): number {
    const c = this.chars[this.pos++];
    if (c === undefined) refuse('trailing backslash');
    switch (c) {
      case 'a':
        return 7;
      case 'f':
        return 12;
      case 'n':
        return 10;
      case 'r':
        return 13;
      case 't':
        return 9;
      case 'v':
        return 11;
      case '0': {
        let value = 0;
        for (let i = 0; i < 2 && /^[0-7]$/.test(this.peek() ?? ''); i++) value = value * 8 + Number(this.chars[this.pos++]);
        return value;
      }
      case 'x': {
        if (this.peek() === '{') {
          const end = this.chars.indexOf('}', this.pos);
          const hex = end < 0 ? '' : this.chars.slice(this.pos + 1, end).join('');
          if (!/^[0-9A-Fa-f]{1,8}$/.test(hex) || parseInt(hex, 16) > maxRune) refuse('invalid \\x{…} escape');
          this.pos = end + 1;
          return parseInt(hex, 16);
        }
        const hex = this.chars.slice(this.pos, this.pos + 2).join('');
        if (!/^[0-9A-Fa-f]{2}$/.test(hex)) refuse('invalid \\x escape');
        this.pos += 2;
        return parseInt(hex, 16);
      }
    }
    if (c >= '1' && c <= '9') refuse('back-references are not supported');
    if (c === 'p' || c === 'P') refuse('Unicode classes \\p{…} are not supported');
    if (c.codePointAt(0)! < 0x80 && !isAlnum(c)) return c.codePointAt(0)!;
    refuse(`invalid escape \\${c}`);
  }

  /** \d \s \w and their negations, or null when the escape is something else. */
  private perlClass(): Ranges | null {
    const c = this.peek(1);
    const base = c === 'd' || c === 'D' ? digit : c === 's' || c === 'S' ? space : c === 'w' || c === 'W' ? word : null;
    if (this.peek() !== '\\' || base === null) return null;
    this.pos += 2;
    return c === c!.toUpperCase() ? negate(base) : base;
  }

  private escape(flags: Flags): RegexNode {
    const c = this.peek();
    const asserts: Record<string, Assertion> = { A: 'textStart', z: 'textEnd', b: 'wordBoundary', B: 'notWordBoundary' };
    if (c !== undefined && asserts[c]) {
      this.pos++;
      return { kind: 'assert', at: asserts[c] };
    }
    this.pos--;
    const perl = this.perlClass();
    if (perl) return set(flags.i ? foldPerl(perl) : perl);
    this.pos++;
    const cp = this.escapedChar();
    return set(flags.i ? fold([[cp, cp]]) : [[cp, cp]]);
  }

  /** After '[': a bracket expression up to its ']', as code point ranges. */
  private bracket(flags: Flags): Ranges {
    const negated = this.peek() === '^';
    if (negated) this.pos++;
    let ranges: Ranges = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) refuse('missing ]');
      if (c === ']' && !first) break;
      first = false;
      if (c === '[' && this.peek(1) === ':') {
        const end = this.chars.indexOf(']', this.pos);
        const name = end < 0 ? '' : this.chars.slice(this.pos + 2, end).join('');
        const match = /^(\^?)([a-z]+):$/.exec(name);
        if (match && posix[match[2]]) {
          const group = flags.i ? fold(posix[match[2]]) : posix[match[2]];
          ranges.push(...(match[1] ? negate(group) : group));
          this.pos = end + 1;
          continue;
        }
        if (match) refuse(`unknown class [:${match[2]}:]`);
      }
      if (c === '\\' && (this.peek(1) === 'p' || this.peek(1) === 'P')) refuse('Unicode classes \\p{…} are not supported');
      const perl = this.perlClass();
      if (perl) {
        ranges.push(...(flags.i ? foldPerl(perl) : perl));
        continue;
      }
      const lo = this.bracketChar();
      let hi = lo;
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.pos++;
        if (this.perlClass()) refuse('a range cannot end in a class');
        hi = this.bracketChar();
        if (hi < lo) refuse('invalid character class range');
      }
      ranges.push(...(flags.i ? fold([[lo, hi]]) : [[lo, hi] as [number, number]]));
    }
    this.pos++;
    ranges = normalise(ranges);
    return negated ? negate(ranges) : ranges;
  }

  private bracketChar(): number {
    const c = this.chars[this.pos++];
    if (c !== '\\') return c.codePointAt(0)!;
    return this.escapedChar();
  }
}

/** \D, \S, \W under i: the class is folded before it is negated, as RE2 does. */
function foldPerl(ranges: Ranges): Ranges {
  const negated = ranges[0]?.[0] === 0;
  return negated ? negate(fold(negate(ranges))) : fold(ranges);
}

function set(ranges: Ranges): RegexNode {
  return { kind: 'set', ranges: normalise(ranges) };
}

function literal(c: string, flags: Flags): RegexNode {
  const cp = c.codePointAt(0)!;
  if (!flags.i) return set([[cp, cp]]);
  const members = orbits.get(cp) ?? [cp];
  return set(members.map((m) => [m, m] as [number, number]));
}

/** Matches only the empty string (assertions, empty groups). */
function zeroWidth(node: RegexNode): boolean {
  if (node.kind === 'assert') return true;
  if (node.kind === 'concat' || node.kind === 'alt') return node.items.every(zeroWidth);
  return false;
}

/**
 * A repeated assertion asserts once (or not at all with a minimum of 0): said so here, as
 * PostgreSQL refuses a quantifier on a constraint.
 */
function repeat(item: RegexNode, min: number, max: number | null): RegexNode {
  if (zeroWidth(item)) {
    return min === 0 ? { kind: 'concat', items: [] } : item;
  }
  return { kind: 'repeat', min, max, item };
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
