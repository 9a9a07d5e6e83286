import type { FoundJsonTuple } from '../sql/object-row.ts';
import { Flushes } from './flushes.ts';

/** Pages one statement carries at most; the rest go in the next one. */
const maxPagesPerStatement = 64;

/** A page's statement: its text (a named shape's, the same for every value) and its bound values. */
export interface PageRun {
  text: string;
  values: readonly unknown[];
}

interface Waiting {
  values: readonly unknown[];
  resolve: (rows: FoundJsonTuple[]) => void;
  reject: (error: unknown) => void;
}

interface Shape {
  /** The statement of several pages of this text (batchedPages), or null when its text cannot be batched. */
  batched: string | null;
  waiting: Waiting[];
  flushes: Flushes;
}

/** A page's columns (objectJsonColumns) and nothing else: an include level's rows carry their class, which splitPages does not read. */
const pageColumns = /^(\/\*[^*]*\*\/ )?SELECT o\.id, o\.created_at, o\.updated_at, o\.data::text AS data FROM /;

/**
 * The statement running several pages of one text at once (PageBatcher): each page's values one element of one JSON
 * array bound as `$1`, read from that element as text into a row of their types once a page (`v`: `$n::type` becomes
 * `v.pn::type`; OFFSET 0 keeps the row from being flattened back into the page, where each use would read the JSON again,
 * for each row: a near page's distance, read for its ~30 candidates, took 0.9 ms batched against 0.1 alone), and the page
 * itself a LATERAL subquery per element, so each page keeps its own order and limit and reads its index as it does alone. `text` is a page read as
 * stored (objectJsonColumns: id, created_at, updated_at, data as text), and each page comes back as one row (splitPages):
 * its 1-based position, its ids as a JSON array, and its dates and data as one text, each row's `created,updated,data`
 * joined by U+0001 (which JSON text never holds raw). One row a page instead of twenty: the driver's parse of a
 * DataRow, its message and its row array were most of a page's cost in the client. Both aggregates read the page's
 * rows in its order (one input, its ORDER BY and LIMIT applied below them). Null when the text is not one this can rewrite: a parameter
 * without an explicit cast (`$n::type`, which the page's casts from text as its bound value would be read; one type a
 * parameter), a dollar-quoted string, or a backslash (an escape string's quotes would mislead the scan).
 *
 * The values arrive as JSON (jsonb_array_elements: parsed once a statement), not as unnest of arrays: PostgreSQL sizes an array parameter's
 * unnest exactly in a custom plan, so a batch of a few pages always priced its custom plan below the generic one and
 * was planned at every run; a set-returning function of JSON is guessed at 100 rows either way, and the statement
 * takes its generic plan after five runs as the page does alone.
 */
export function batchedPages(text: string): string | null {
  if (text.includes('\\') || !pageColumns.test(text)) return null;
  let out = '';
  let from = 0;
  const types = new Map<number, string>();
  for (let at = 0; at < text.length; at++) {
    const c = text[at];
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, at + 1);
      if (end < 0) return null;
      at = end; // a doubled quote reads as two strings, side by side: the same scan
      continue;
    }
    if (c !== '$') continue;
    const digits = /^\d+/.exec(text.slice(at + 1, at + 12));
    if (digits === null || /[\w$]/.test(text[at - 1] ?? '')) return null;
    const end = at + 1 + digits[0].length;
    const type = /^::(\w+(\[\])?)/.exec(text.slice(end, end + 40))?.[1];
    const n = Number(digits[0]);
    if (type === undefined || (types.get(n) ?? type) !== type) return null;
    types.set(n, type);
    out += `${text.slice(from, at)}v.p${n}`;
    from = end;
    at = end - 1;
  }
  out += text.slice(from);
  const marker = /^\/\*[^*]*\*\/ /.exec(out)?.[0] ?? '';
  const columns = [...types].map(([n, type]) => `(b.v ->> ${n - 1})::${type} AS p${n}`);
  const values = columns.length === 0 ? '' : `
    CROSS JOIN LATERAL (SELECT ${columns.join(', ')} OFFSET 0) v`;
  return `${marker}SELECT b.i::int AS page, p.ids, p.rest FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS b(v, i)${values}
    CROSS JOIN LATERAL (SELECT json_agg(q.id)::text AS ids, string_agg(q.created_at || ',' || q.updated_at || ',' || q.data, chr(1)) AS rest
      FROM (${out.slice(marker.length)}) q) p`;
}

/** The pages of batchedPages' rows, in the order of their values; `count` pages. */
export function splitPages(rows: readonly unknown[][], count: number): FoundJsonTuple[][] {
  const pages: FoundJsonTuple[][] = Array.from({ length: count }, () => []);
  for (const [page, ids, rest] of rows as Array<[number, string | null, string | null]>) {
    if (ids === null || rest === null) continue;
    const found = pages[page - 1];
    let from = 0;
    for (const id of JSON.parse(ids) as string[]) {
      const first = rest.indexOf(',', from);
      const second = rest.indexOf(',', first + 1);
      let end = rest.indexOf('\u0001', second + 1);
      if (end < 0) end = rest.length;
      found.push([id, Number(rest.slice(from, first)), Number(rest.slice(first + 1, second)), rest.slice(second + 1, end)]);
      from = end + 1;
    }
  }
  return pages;
}

/**
 * A bound value as the page's statement reads it, as text (what the driver sends), or undefined for one this does not
 * carry: an array of strings (a user's readers, `$n::text[]`) as an array literal, each element quoted and escaped.
 */
function asText(value: unknown): string | null | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value) && value.every((element) => typeof element === 'string')) {
    return `{${value.map((element: string) => `"${element.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
  }
  return value === null ? null : undefined;
}

/**
 * Query pages on PostgreSQL, coalesced as LookupBatcher coalesces get-by-ids: the pages of one named shape (the same
 * text, planned once for every value: where.ts pageStatement) that arrive in one turn of the event loop, or while
 * two statements of the shape are in flight (Flushes), go as one statement (batchedPages) on one connection. Each statement
 * is a write to a socket, a bind and an execution in a database process and a reply to parse: for a 20-object
 * `where` page that was about as much as the page itself on both sides (bench/RESULTS.md, Objects). A page alone
 * goes as it is. The readers' clauses are in the page's text, so they stay inside each page. A batch that fails runs
 * its pages one by one, so each gets its own answer. A statement with a value asText does not carry runs alone, and so does
 * one batchedPages does not rewrite (an include level's: its rows carry their class). test/storage/page-batches.test.ts
 * holds pages made together to the same pages made one at a time.
 */
export class PageBatcher {
  /** The shapes with pages waiting or in flight; each flushes on its own, so a slow shape holds up no other. */
  private readonly shapes = new Map<string, Shape>();
  private readonly batchedTexts = new Map<string, string | null>();

  /** `run`: one statement's rows as arrays, in its columns' order. */
  constructor(private readonly run: (statement: PageRun) => Promise<unknown[][]>) {}

  find(statement: PageRun): Promise<FoundJsonTuple[]> {
    const shape = this.shapeOf(statement.text);
    const found = new Promise<FoundJsonTuple[]>((resolve, reject) => shape.waiting.push({ values: statement.values, resolve, reject }));
    shape.flushes.request();
    return found;
  }

  private shapeOf(text: string): Shape {
    const known = this.shapes.get(text);
    if (known !== undefined) return known;
    const shape: Shape = {
      batched: this.batchedText(text),
      waiting: [],
      flushes: new Flushes(
        () => this.flush(text, shape),
        () => shape.waiting.length > 0,
      ),
    };
    this.shapes.set(text, shape);
    return shape;
  }

  private batchedText(text: string): string | null {
    let batched = this.batchedTexts.get(text);
    if (batched === undefined) {
      batched = batchedPages(text);
      if (this.batchedTexts.size >= 1000) this.batchedTexts.clear();
      this.batchedTexts.set(text, batched);
    }
    return batched;
  }

  private flush(text: string, shape: Shape): void {
    const waiting = shape.waiting;
    shape.waiting = [];
    for (let start = 0; start < waiting.length; start += maxPagesPerStatement) {
      const pages = waiting.slice(start, start + maxPagesPerStatement);
      void shape.flushes.run(() => this.runPages(text, shape.batched, pages)).then(() => {
        if (shape.flushes.idle && shape.waiting.length === 0 && this.shapes.get(text) === shape) this.shapes.delete(text);
      });
    }
  }

  private async runPages(text: string, batched: string | null, waiting: Waiting[]): Promise<void> {
    const values = batched === null || waiting.length === 1 ? null : waiting.map((w) => w.values.map(asText));
    if (values === null || values.some((page) => page.includes(undefined))) {
      await Promise.all(waiting.map((w) => this.alone(text, w)));
      return;
    }
    let rows: unknown[][];
    try {
      rows = await this.run({ text: batched!, values: [JSON.stringify(values)] });
    } catch {
      await Promise.all(waiting.map((w) => this.alone(text, w)));
      return;
    }
    const pages = splitPages(rows, waiting.length);
    waiting.forEach((w, i) => w.resolve(pages[i]));
  }

  private async alone(text: string, w: Waiting): Promise<void> {
    try {
      w.resolve((await this.run({ text, values: w.values })) as FoundJsonTuple[]);
    } catch (error) {
      w.reject(error);
    }
  }
}
