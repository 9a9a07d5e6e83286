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
 * Marks a query page's statement to run as a named prepared statement named by its text (its shape:
 * the where's values are bound), once the text has come often enough to be worth a name. Each connection
 * then parses it once; PostgreSQL keeps planning it per run with the values (a custom plan), because with
 * the application and class bound a generic plan cannot use a declared index (partial, one class's rows:
 * postgres/schema-ddl.ts) and costs more, so plan_cache_mode's auto choice keeps the custom plans.
 * Measured side by side on a page of 20 among 100,000 (bench/RESULTS.md, Objects): the database's CPU
 * per run 740 -> 560 µs for an indexed equality, 400 -> 330 µs for a range with order.
 */
export function preparedShape(statement: Sql): Sql {
  return sql`${sql.raw(shapeMarker)} ${statement}`;
}

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
      const [text, values] = args;
      if (typeof text !== 'string') return query(...args);
      const name = text.startsWith(shapeMarker) ? shapes.nameOf(text) : marker.exec(text)?.[1];
      return name === undefined ? query(...args) : query({ name, text, values });
    };
  });
}
