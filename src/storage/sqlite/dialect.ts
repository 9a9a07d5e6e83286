import { sql } from 'kysely';
import type { Regex } from '../../objects/regex.ts';
import type { Json, OrderKey, UniqueField } from '../../objects/types.ts';
import type { Comparison, Sql, SqlDialect } from '../sql/dialect.ts';
import { comparisonOperators } from '../sql/where.ts';

function jsonPath(path: string[]): string {
  return '$' + path.map((segment) => `."${segment}"`).join('');
}

/** json_type names of the values a JS scalar can equal. */
function typesOf(value: string | number | boolean): string[] {
  if (typeof value === 'string') return ['text'];
  if (typeof value === 'number') return ['integer', 'real'];
  return [value ? 'true' : 'false'];
}

function bindable(value: string | number | boolean): string | number {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

/**
 * What readableBy searches the readers column for: the principal quoted as in the JSON array.
 * Principals never contain quotes (parseAcl), so it occurs exactly when it is an element.
 */
export function readerNeedle(principal: string): string {
  return JSON.stringify(principal);
}

const uniqueIndexes: Record<string, UniqueField> = {
  'objects.app_id, objects.class_name, objects.id': 'objectId',
  'objects.app_id, objects.username': 'username',
  'objects.app_id, objects.email': 'email',
  'objects.app_id, objects.mobile_phone': 'mobilePhoneNumber',
  'objects.app_id, objects.installation_id': 'installationId',
  'auth_identities.app_id, auth_identities.platform, auth_identities.uid': 'authData',
};

export const sqliteDialect: SqlDialect = {
  kind: 'sqlite',

  jsonEquals(path: string[], value: Json): Sql {
    const p = jsonPath(path);
    if (value === null) return sql`coalesce(json_type(o.data, ${p}), 'null') = 'null'`;
    if (typeof value === 'object') {
      return sql`(json_type(o.data, ${p}) IN ('object', 'array') AND json_extract(o.data, ${p}) = json(${JSON.stringify(value)}))`;
    }
    const types = sql.join(typesOf(value).map((t) => sql.lit(t)));
    const bound = bindable(value);
    // The cheap comparison first: most rows fail it, and SQLite caches the parse for json_type.
    return sql`(CASE
      WHEN json_extract(o.data, ${p}) = ${bound} AND json_type(o.data, ${p}) IN (${types}) THEN 1
      WHEN json_type(o.data, ${p}) = 'array' THEN EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e WHERE e.type IN (${types}) AND e.value = ${bound})
      ELSE 0 END)`;
  },

  jsonCompare(path: string[], op: Comparison, value: string | number): Sql {
    const p = jsonPath(path);
    const types = sql.join(typesOf(value).map((t) => sql.lit(t)));
    return sql`coalesce(json_type(o.data, ${p}) IN (${types}) AND json_extract(o.data, ${p}) ${comparisonOperators[op]} ${value}, 0)`;
  },

  jsonExists(path: string[]): Sql {
    return sql`json_type(o.data, ${jsonPath(path)}) IS NOT NULL`;
  },

  jsonRegex(path: string[], regex: Regex): Sql {
    const p = jsonPath(path);
    return sql`coalesce(json_type(o.data, ${p}) = 'text' AND roost_regexp(json_extract(o.data, ${p}), ${regex.re2}), 0)`;
  },

  jsonSize(path: string[], size: number): Sql {
    const p = jsonPath(path);
    return sql`coalesce(json_type(o.data, ${p}) = 'array' AND json_array_length(o.data, ${p}) = ${size}, 0)`;
  },

  jsonContainsAll(path: string[], values: Json[]): Sql {
    const p = jsonPath(path);
    const each = values.map((value) => {
      if (value === null || typeof value === 'object') {
        return sql`EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e WHERE e.value IS ${value === null ? null : JSON.stringify(value)} OR json(e.value) = json(${JSON.stringify(value)}))`;
      }
      const types = sql.join(typesOf(value).map((t) => sql.lit(t)));
      return sql`EXISTS (SELECT 1 FROM json_each(o.data, ${p}) e WHERE e.type IN (${types}) AND e.value = ${bindable(value)})`;
    });
    return sql`(json_type(o.data, ${p}) = 'array' AND ${sql.join(each, sql` AND `)})`;
  },

  jsonOrder(key: OrderKey): Sql {
    return sql`json_extract(o.data, ${jsonPath(key.path)}) ${sql.raw(key.descending ? 'DESC' : 'ASC')}`;
  },

  readableBy(readers: readonly string[]): Sql {
    // A string search in the readers' JSON array text, no JSON parse (readerNeedle).
    return sql`(${sql.join(readers.map((r) => sql`instr(o.readers, ${readerNeedle(r)}) > 0`), sql` OR `)})`;
  },

  encodeJson: (value) => (value === null ? null : JSON.stringify(value)),
  decodeJson: <T>(raw: unknown) => (raw === null || raw === undefined ? null : JSON.parse(String(raw))) as T,
  encodeReaders: (readers) => JSON.stringify(readers),
  rowLock: sql``,

  uniqueViolation(error: unknown): UniqueField | null {
    const e = error as { code?: string; message?: string };
    if (e?.code !== 'SQLITE_CONSTRAINT_UNIQUE' && e?.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return null;
    const columns = /UNIQUE constraint failed: (.*)$/.exec(e.message ?? '')?.[1] ?? '';
    return uniqueIndexes[columns] ?? null;
  },
};
