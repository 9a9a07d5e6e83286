import { sql } from 'kysely';
import type { Regex } from '../../objects/regex.ts';
import type { Json, OrderKey } from '../../objects/types.ts';
import type { Comparison, Sql, SqlDialect, ViolatedIndex } from '../sql/dialect.ts';
import { comparisonOperators } from '../sql/where.ts';
import { postgresRegex } from './regex.ts';

function field(path: string[]): Sql {
  return sql`(o.data #> ${sql.val(path)}::text[])`;
}

export const postgresDialect: SqlDialect = {
  kind: 'postgres',

  jsonEquals(path: string[], value: Json): Sql {
    const x = field(path);
    if (value === null) return sql`(${x} IS NULL OR ${x} = 'null'::jsonb)`;
    if (typeof value === 'object') return sql`coalesce(${x} = ${JSON.stringify(value)}::jsonb, false)`;
    // jsonb containment: a scalar contains itself and a top-level array contains its scalar elements.
    return sql`coalesce(${x} @> ${JSON.stringify(value)}::jsonb, false)`;
  },

  jsonIn(path: string[], values: Json[]): Sql {
    const x = field(path);
    // As jsonEquals, each kind of value with the whole list bound as one jsonb[] parameter.
    const any: Sql[] = [];
    const scalars = values.filter((v) => v !== null && typeof v !== 'object').map((v) => JSON.stringify(v));
    if (scalars.length) any.push(sql`coalesce(${x} @> ANY(${sql.val(scalars)}::jsonb[]), false)`);
    const composite = values.filter((v) => v !== null && typeof v === 'object').map((v) => JSON.stringify(v));
    if (composite.length) any.push(sql`coalesce(${x} = ANY(${sql.val(composite)}::jsonb[]), false)`);
    if (values.includes(null)) any.push(sql`(${x} IS NULL OR ${x} = 'null'::jsonb)`);
    return sql`(${sql.join(any, sql` OR `)})`;
  },

  columnIn(column: Sql, kind: 'time' | 'string', values: Array<string | number>): Sql {
    return sql`${column} = ANY(${sql.val(values)}::${sql.raw(kind === 'time' ? 'bigint[]' : 'text[]')})`;
  },

  jsonCompare(path: string[], op: Comparison, value: string | number): Sql {
    const x = field(path);
    if (typeof value === 'number') {
      return sql`coalesce(jsonb_typeof(${x}) = 'number' AND ${x} ${comparisonOperators[op]} ${JSON.stringify(value)}::jsonb, false)`;
    }
    return sql`coalesce(jsonb_typeof(${x}) = 'string' AND (${x} #>> '{}') COLLATE "C" ${comparisonOperators[op]} ${value}, false)`;
  },

  jsonExists(path: string[]): Sql {
    return sql`${field(path)} IS NOT NULL`;
  },

  jsonRegex(path: string[], regex: Regex): Sql {
    const x = field(path);
    return sql`coalesce(jsonb_typeof(${x}) = 'string' AND (${x} #>> '{}') ~ ${postgresRegex(regex.tree)}, false)`;
  },

  jsonSize(path: string[], size: number): Sql {
    const x = field(path);
    return sql`coalesce(jsonb_typeof(${x}) = 'array' AND jsonb_array_length(${x}) = ${size}, false)`;
  },

  jsonContainsAll(path: string[], values: Json[]): Sql {
    const x = field(path);
    return sql`coalesce(jsonb_typeof(${x}) = 'array' AND ${x} @> ${JSON.stringify(values)}::jsonb, false)`;
  },

  jsonOrder(key: OrderKey): Sql {
    // NULL (missing) sorts first ascending, as SQLite does, so both stores page alike.
    return sql`${field(key.path)} ${sql.raw(key.descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST')}`;
  },

  readableBy(readers: readonly string[]): Sql {
    return sql`o.readers && ${sql.val([...readers])}::text[]`;
  },

  encodeJson: (value) => (value === null ? null : JSON.stringify(value)),
  decodeJson: <T>(raw: unknown) => (raw ?? null) as T,
  encodeReaders: (readers) => readers,
  rowLock: sql`FOR UPDATE`,

  uniqueViolation(error: unknown): ViolatedIndex | null {
    const e = error as { code?: string; constraint?: string };
    if (e?.code !== '23505') return null;
    return { name: e.constraint ?? '' };
  },
};
