import { sql } from 'kysely';
import type pg from 'pg';
import type { Sql } from '../sql/dialect.ts';

const marker = /^\/\* prepared:([a-z_]+) \*\//;
const shapeMarker = '/* prepared-shape */';

/**
 * Marks a statement to run as a named prepared statement: each connection parses and plans it once,
 * then only binds and executes. For statements whose text never changes and whose plan does not depend
 * on the values (lookups by primary or unique key). Planning was most of their database time: 0.42 ms
 * planning against 0.09 ms executing a batch of get-by-ids (objects has many indexes to consider).
 */
export function prepared(name: string, statement: Sql): Sql {
  return sql`/* prepared:${sql.raw(name)} */ ${statement}`;
}

/**
 * Marks a read to run as a named prepared statement named by its text (its shape: the values are bound), once
 * the text has come often enough to be worth a name. Each connection then parses it once, and from its sixth run
 * PostgreSQL may plan it once for every value (a generic plan), which it does when that plan's estimate is below
 * the custom plans' average. Only for reads that plan alike for any value: probes of the primary key (include
 * levels) and a page whose application, class and readers are written into its text (dialect.pinnedScope, where.ts
 * pageStatement), whose generic plan reads the declared index: the where page's database CPU ~550 -> 133 µs
 * (bench/RESULTS.md, Objects). With the application and class bound, a generic plan can use no declared (partial)
 * index and estimates the whole table, not the class; PostgreSQL took such plans after five runs for an $inQuery
 * page (2 s against 2.5 ms) and for counts (a range's 0.7 -> 54 ms at 100,000 objects), so other pages and counts
 * run unnamed (test/storage/page-plans.test.ts).
 */
export function preparedShape(statement: Sql): Sql {
  return sql`${sql.raw(shapeMarker)} ${statement}`;
}

/** Whether a statement's text is a reused shape's (preparedShape): a page planned alike for every value. */
export const isPreparedShape = (text: string): boolean => text.startsWith(shapeMarker);

/**
 * The names of page shapes, each a prepared statement on every connection that runs it: a text gets
 * one after `admitAfter` runs (a page at a skip of its own, read once, does not), and at most
 * `maxShapes` do, so the statements each connection keeps stay bounded; past them, texts run unnamed.
 */
export class ShapeNames {
  private readonly seen = new Map<string, number>();
  private readonly names = new Map<string, string>();
  constructor(private readonly admitAfter = 3, private readonly maxShapes = 200, private readonly maxCounted = 5000) {}

  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.names.size >= this.maxShapes) return name;
    const runs = (this.seen.get(text) ?? 0) + 1;
    if (runs < this.admitAfter) {
      if (this.seen.size >= this.maxCounted) this.seen.clear();
      this.seen.set(text, runs);
      return undefined;
    }
    this.seen.delete(text);
    const given = `roost_shape_${this.names.size}`;
    this.names.set(text, given);
    return given;
  }
}

/** Makes the pool's clients run marked statements by name (kysely hands pg only text and values). */
export function runPreparedByName(pool: pg.Pool, shapes = new ShapeNames()): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const [first, values] = args;
      // Text and values (Kysely), or a config without a name (PostgresStore's pages, rows as arrays).
      const config: pg.QueryConfig | null = typeof first === 'string' ? { text: first, values: values as unknown[] } : (first as pg.QueryConfig | null);
      if (typeof config?.text !== 'string' || config.name !== undefined) return query(...args);
      const text = config.text;
      const name = text.startsWith(shapeMarker) ? shapes.nameOf(text) : marker.exec(text)?.[1];
      return name === undefined ? query(...args) : query({ ...config, name });
    };
  });
}
