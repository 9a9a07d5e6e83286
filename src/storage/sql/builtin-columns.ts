import { sql } from 'kysely';
import type { Json, Where } from '../../objects/types.ts';
import { table } from '../../lib/lookup.ts';
import type { Sql } from './dialect.ts';
import { promotedColumn } from './object-row.ts';

/** Fields kept in real columns; comparisons on them use the column (and its index). Read with request text. */
export const timeColumns = table({ createdAt: 'created_at', updatedAt: 'updated_at' });

/** A path to a time column, whose values the where rounds, clamps or parses (columnValue), so page-shapes.ts keeps them whole. */
export const isTimeField = (path: string[]): boolean => path.length === 1 && timeColumns[path[0]] !== undefined;

/** The real column a one-part path reads (objectId, the time columns, a class's promoted fields), or null for a JSON field. */
export function columnFor(className: string, path: string[]): { column: Sql; kind: 'time' | 'string' } | null {
  if (path.length !== 1) return null;
  const [field] = path;
  if (field === 'objectId') return { column: sql.ref('o.id'), kind: 'string' };
  const time = timeColumns[field];
  if (time) return { column: sql.ref(`o.${time}`), kind: 'time' };
  const promoted = promotedColumn(className, field);
  return promoted ? { column: sql.ref(`o.${promoted}`), kind: 'string' } : null;
}

/** Dates hold whole milliseconds within ±8.64e15 (ECMAScript's time range), so the time columns do. */
const maxTime = 8.64e15;

/**
 * A number compared with a time column, as the whole number that selects the same rows: PostgreSQL's
 * bigint parameter refuses a fraction or anything past 2^63 (a 500 before; SQLite compared them as
 * numbers). A bound past the time range moves to just past it; `x > 1.5` is `x > 1`, `x < 1.5` is
 * `x < 2`; a fraction equals no stored time (null: no row).
 */
function timeBound(op: Where['op'], value: number): number | null {
  const bound = Math.min(Math.max(value, -maxTime - 1), maxTime + 1);
  if (Number.isInteger(bound)) return bound;
  if (op === 'gt' || op === 'lte') return Math.floor(bound);
  if (op === 'lt' || op === 'gte') return Math.ceil(bound);
  return null;
}

/** A number compared with a time column as the where compares it (timeBound), for page-shapes.ts: a whole number the where takes back unchanged, or null. */
export const timeColumnValue = (op: Where['op'], value: number): number | null => timeBound(op, value);

/** A value compared with a real column as that column holds it (a time's whole milliseconds, a string), or null: no row. */
export function columnValue(kind: 'time' | 'string', value: Json, op: Where['op']): string | number | null {
  if (kind === 'string') return typeof value === 'string' ? value : null;
  if (typeof value === 'number') return timeBound(op, value);
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}
