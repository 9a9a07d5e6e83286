import { fail } from '../lib/errors.ts';
import { caseVariants, digit, fold, foldPerl, maxRune, negate, newline, normalise, posix, space, word, type Ranges } from './regex-sets.ts';

/** The parser of the `$regex` dialect (src/objects/regex.ts): a pattern and its flags become a flag-free tree. */

export type { Ranges };
export type Assertion = 'textStart' | 'textEnd' | 'lineStart' | 'lineEnd' | 'wordBoundary' | 'notWordBoundary';

export type RegexNode =
  | { kind: 'set'; ranges: Ranges }
  | { kind: 'assert'; at: Assertion }
  | { kind: 'concat'; items: RegexNode[] }
  | { kind: 'alt'; items: RegexNode[] }
  | { kind: 'repeat'; min: number; max: number | null; item: RegexNode };

/** Largest repetition count: PostgreSQL's (DUPMAX). */
export const maxRepeat = 255;

export interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
}

export function refuse(why: string): never {
  fail('invalidRegex', `Invalid regular expression: ${why}.`);
}

export const isAlnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c);
const xSpace = new Set([' ', '\t', '\n', '\r', '\f', '\v']);

export class Parser {
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
        if (min > maxRepeat || (max !== null && max > maxRepeat)) {
          refuse(`repetition counts may be at most ${maxRepeat}`);
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

function set(ranges: Ranges): RegexNode {
  return { kind: 'set', ranges: normalise(ranges) };
}

function literal(c: string, flags: Flags): RegexNode {
  const cp = c.codePointAt(0)!;
  if (!flags.i) return set([[cp, cp]]);
  const members = caseVariants(cp);
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
