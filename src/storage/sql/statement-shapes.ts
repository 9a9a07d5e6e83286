import { CompiledQuery } from 'kysely';

/** A value a statement's shape takes out of its text: the values its parameters are made from. */
export type Value = string | number;

/**
 * How each parameter follows from the shape's values: one of them as it is (`value`), text with each value's
 * JSON.stringify written in (`text`: dialects bind `"v"`, `{"f":["v"]}`, `["v"]`), an array of such, or the
 * same for every value.
 */
type Recipe =
  | { kind: 'value'; at: number }
  | { kind: 'text'; parts: string[]; at: number[] }
  | { kind: 'each'; items: Recipe[] }
  | { kind: 'same'; parameter: unknown };

function made(recipe: Recipe, values: readonly Value[]): unknown {
  switch (recipe.kind) {
    case 'value':
      return values[recipe.at];
    case 'text': {
      let text = recipe.parts[0];
      for (let i = 0; i < recipe.at.length; i++) text += JSON.stringify(values[recipe.at[i]]) + recipe.parts[i + 1];
      return text;
    }
    case 'each':
      return recipe.items.map((item) => made(item, values));
    case 'same':
      return recipe.parameter;
  }
}

function sameParameter(a: unknown, b: unknown): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((element, i) => sameParameter(element, b[i]));
  return Object.is(a, b);
}

/** What marks probe `i` in any text it reaches, however that text quotes it. */
const probeMark = (i: number) => `Pr#${i}#`;

/**
 * Values no query sends, one a value of the shape and of its type, with characters a dialect would have to
 * escape, fold or normalise (quotes, backslash, %, _, case, a combining accent, U+2028), so a parameter made
 * of a value in any form but itself or its JSON text shows as no recipe. Numbers: negative binary fractions,
 * exact in their text; at `times` (values the caller has already made the whole milliseconds a time column
 * compares, which its statement takes unchanged) whole negative numbers inside the time range, ages before any
 * date a query sends.
 */
function probesFor(values: readonly Value[], times: readonly number[]): Value[] {
  return values.map((value, i) => {
    if (times.includes(i)) return -(2 ** 52 + 7 * i);
    return typeof value === 'number' ? -(1_000_003 + 7 * i) / 1024 : `\u0000'"\\%_A\u0301\u2028${probeMark(i)}`;
  });
}

/** The recipe of one parameter as it came with the probes; null when a probe is in it in a form no recipe writes. */
function recipeOf(parameter: unknown, probes: readonly Value[], texts: readonly string[]): Recipe | null {
  if (Array.isArray(parameter)) {
    const items: Recipe[] = [];
    for (const element of parameter) {
      const recipe = recipeOf(element, probes, texts);
      if (recipe === null) return null;
      items.push(recipe);
    }
    return { kind: 'each', items };
  }
  const at = probes.findIndex((probe) => Object.is(probe, parameter));
  if (at >= 0) return { kind: 'value', at };
  if (typeof parameter !== 'string') return { kind: 'same', parameter };
  const parts = [''];
  const order: number[] = [];
  for (let rest = parameter; ; ) {
    let first = -1;
    let which = -1;
    texts.forEach((text, i) => {
      const found = rest.indexOf(text);
      if (found >= 0 && (first < 0 || found < first)) [first, which] = [found, i];
    });
    if (first < 0) {
      parts[parts.length - 1] += rest;
      break;
    }
    parts[parts.length - 1] += rest.slice(0, first);
    order.push(which);
    parts.push('');
    rest = rest.slice(first + texts[which].length);
  }
  if (probes.some((_, i) => parts.some((part) => part.includes(probeMark(i))))) return null;
  return order.length === 0 ? { kind: 'same', parameter } : { kind: 'text', parts, at: order };
}

/**
 * Shapes past these are built afresh every time, never learnt: learning searches each parameter for each
 * value's text, so its cost grows with the square of the values (an $in of 5,000 held a SQLite node for
 * seconds a page; 32 values cost a first page ~1 ms, 8 values ~0.3), and every key is kept (a whole node's
 * values are in it). Anyone with the app key sends pages; a page of many values is rarely repeated, and
 * building it is linear.
 */
const maxLearntValues = 16;
const maxKeyLength = 2048;

interface Entry {
  sql: string;
  recipes: Recipe[];
}

/**
 * Compiled statements by shape (issue 14 point 3). A read whose SQL text is the same for every value of one
 * shape (a query page: page-shapes.ts) is built and compiled (Kysely: 30–60 µs and much garbage) once a shape;
 * each later read only makes its parameters from its values. A shape's recipe is learnt by building it a second
 * time with probe values and reading where each probe lands; it is kept only when it remakes the first build's
 * text and parameters from that read's own values, so a shape whose parameters follow from its values in any
 * other way (rounded, escaped, folded) is built afresh every time, never guessed. The callers' keys name
 * everything else the text depends on. test/objects-page-shapes.test.ts holds reads from a recipe to the same
 * reads built afresh.
 */
export class StatementShapes {
  private readonly entries = new Map<string, Entry | null>();
  constructor(private readonly maxShapes = 1000) {}

  /**
   * The statement of shape `key` for `values`: from the shape's recipe, or `build(values)` (then learnt). `times`:
   * the positions of values that are whole milliseconds of a time column (probed with such: probesFor).
   */
  compiled(key: string, values: readonly Value[], build: (values: readonly Value[]) => CompiledQuery, times: readonly number[] = []): CompiledQuery {
    if (values.length > maxLearntValues || key.length > maxKeyLength) return build(values);
    const entry = this.entries.get(key);
    if (entry) return CompiledQuery.raw(entry.sql, entry.recipes.map((recipe) => made(recipe, values)));
    const compiled = build(values);
    if (entry === undefined) this.entries.set(key, learnt(values, compiled, build, times));
    if (this.entries.size > this.maxShapes) this.entries.delete(this.entries.keys().next().value as string);
    return compiled;
  }
}

function learnt(values: readonly Value[], compiled: CompiledQuery, build: (values: readonly Value[]) => CompiledQuery, times: readonly number[]): Entry | null {
  const probes = probesFor(values, times);
  const probed = build(probes);
  const texts = probes.map((probe) => JSON.stringify(probe));
  const recipes: Recipe[] = [];
  for (const parameter of probed.parameters) {
    const recipe = recipeOf(parameter, probes, texts);
    if (recipe === null) return null;
    recipes.push(recipe);
  }
  const remade = recipes.map((recipe) => made(recipe, values));
  return probed.sql === compiled.sql && sameParameter(remade, compiled.parameters) ? { sql: compiled.sql, recipes } : null;
}
