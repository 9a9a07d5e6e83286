import { CompiledQuery } from 'kysely';
import type { OrderKey, Readers, Where } from '../../objects/types.ts';
import { isTimeField } from './where.ts';

/**
 * A page's query with its values taken out: `key` names everything its statement's text and the way its
 * parameters follow from the values depend on (structure, paths, each value's type), `values` are the
 * equality, $in, range and $relatedTo values in the order the walk meets them.
 */
interface Shape {
  key: string;
  values: Array<string | number>;
}

type Value = string | number;

/**
 * Walks a where, writing its shape into `key` and taking each shaped value out into `values`, or (given
 * `replace`) putting replace's values back in that order: the same walk both ways, so a shape's values
 * and its probe's line up. Values on the time columns stay in the key (columnValue rounds, clamps or
 * parses them); a node whose values are not plain scalars stays in the key whole. Null for a where
 * whose values are unbounded in number and read through arithmetic (geo), which no recipe derives.
 */
class ShapeWalk {
  readonly key: string[] = [];
  readonly values: Value[] = [];
  constructor(private readonly replace?: readonly Value[]) {}

  private take(value: Value): Value {
    this.values.push(value);
    this.key.push(typeof value === 'number' ? 'n' : 's');
    return this.replace ? this.replace[this.values.length - 1] : value;
  }

  where(node: Where): Where | null {
    switch (node.op) {
      case 'and':
      case 'or': {
        this.key.push(`${node.op}(`);
        const items: Where[] = [];
        for (const item of node.items) {
          const walked = this.where(item);
          if (walked === null) return null;
          items.push(walked);
        }
        this.key.push(')');
        return { op: node.op, items };
      }
      case 'not': {
        this.key.push('not(');
        const item = this.where(node.item);
        this.key.push(')');
        return item && { op: 'not', item };
      }
      case 'eq':
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte':
        if (!isScalar(node.value) || isTimeField(node.path)) return this.whole(node);
        this.key.push(`${node.op}${JSON.stringify(node.path)}:`);
        return { ...node, value: this.take(node.value) } as Where;
      case 'in':
        // Repeated values stay in the key: a dialect may fold them (SQLite's keys), which a probe of distinct ones would not.
        if (!node.values.every(isScalar) || new Set(node.values).size !== node.values.length || isTimeField(node.path)) return this.whole(node);
        this.key.push(`in${JSON.stringify(node.path)}:`);
        return { ...node, values: (node.values as Value[]).map((value) => this.take(value)) };
      case 'relatedTo':
        this.key.push(`rel${JSON.stringify([node.owner.className, node.key])}:`);
        return { ...node, owner: { className: node.owner.className, objectId: this.take(node.owner.objectId) as string } };
      case 'inQuery':
      case 'select': {
        const { where, ...rest } = node.query;
        this.key.push(`${node.op}${JSON.stringify({ ...node, query: rest })}(`);
        const inner = this.where(where);
        this.key.push(')');
        return inner && ({ ...node, query: { ...node.query, where: inner } } as Where);
      }
      case 'near':
      case 'geoBox':
      case 'geoPolygon':
        return null;
      default:
        return this.whole(node);
    }
  }

  private whole(node: Where): Where {
    this.key.push(JSON.stringify(node));
    return node;
  }
}

const isScalar = (value: unknown): value is Value => typeof value === 'string' || typeof value === 'number';

/** The rest of a page's query that its statement depends on, all of it part of the key. */
export interface PageShapeQuery {
  appId: string;
  className: string;
  readers: Readers;
  where: Where;
  order: OrderKey[];
  limit: number;
  skip: number;
}

function shapeOf(select: string, query: PageShapeQuery): Shape | null {
  const walk = new ShapeWalk();
  if (walk.where(query.where) === null) return null;
  const scope = JSON.stringify([select, query.appId, query.className, query.readers, query.order, query.limit, query.skip]);
  return { key: `${scope}${walk.key.join(' ')}`, values: walk.values };
}

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
 * exact in their text.
 */
function probesFor(values: readonly Value[]): Value[] {
  return values.map((value, i) => (typeof value === 'number' ? -(1_000_003 + 7 * i) / 1024 : `\u0000'"\\%_A\u0301\u2028${probeMark(i)}`));
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

interface Entry {
  sql: string;
  recipes: Recipe[];
}

/**
 * Compiled page statements by query shape (issue 14 point 3): a page's SQL text is the same for every value
 * of one shape, so its statement is built and compiled (Kysely: 23–37 µs and much garbage a page) once a
 * shape and, for each later page, only its parameters are made again from its values (bench/RESULTS.md,
 * "Objects"). A shape's recipe is learnt by compiling it a second time with probe values and reading where
 * each probe lands; it is kept only when it remakes the first compile's text and parameters from the first
 * page's own values. test/objects-page-shapes.test.ts holds pages with the cache to the statement built afresh.
 */
export class PageShapes {
  private readonly entries = new Map<string, Entry | null>();
  constructor(private readonly maxShapes = 1000) {}

  /**
   * The compiled page: from the shape's entry, or `compile(query)` (then learnt). `select` names what the
   * statement reads of each row (it is part of the shape).
   */
  compiled(select: string, query: PageShapeQuery, compile: (query: PageShapeQuery) => CompiledQuery): CompiledQuery {
    const shape = shapeOf(select, query);
    if (shape === null) return compile(query);
    const entry = this.entries.get(shape.key);
    if (entry) return CompiledQuery.raw(entry.sql, entry.recipes.map((recipe) => made(recipe, shape.values)));
    const compiled = compile(query);
    if (entry === undefined) this.learn(shape, query, compiled, compile);
    return compiled;
  }

  private learn(shape: Shape, query: PageShapeQuery, compiled: CompiledQuery, compile: (query: PageShapeQuery) => CompiledQuery): void {
    if (this.entries.size >= this.maxShapes) this.entries.clear();
    const probes = probesFor(shape.values);
    const walk = new ShapeWalk(probes);
    const probed = compile({ ...query, where: walk.where(query.where) as Where });
    const texts = probes.map((probe) => JSON.stringify(probe));
    const recipes: Recipe[] = [];
    for (const parameter of probed.parameters) {
      const recipe = recipeOf(parameter, probes, texts);
      if (recipe === null) return void this.entries.set(shape.key, null);
      recipes.push(recipe);
    }
    const remade = recipes.map((recipe) => made(recipe, shape.values));
    const holds = probed.sql === compiled.sql && sameParameter(remade, compiled.parameters);
    // A shape whose recipe does not remake its first page is compiled afresh every time (null), never guessed.
    this.entries.set(shape.key, holds ? { sql: compiled.sql, recipes } : null);
  }
}
