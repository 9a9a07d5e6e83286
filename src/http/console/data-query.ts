/**
 * The data browser's query: a filter (field, operator, value, and/or a raw `where`), a sort, and a
 * cursor, turned into the parameters of GET /1.1/classes/<class> (the REST API compiles and checks
 * them). Pages are keyset pages: the next page starts at the last row's sort value (`$lte`/`$gte`,
 * which the created_at and user indexes serve) minus the rows of that value already shown, so page
 * 20 000 of a million objects costs what page 1 does; nothing is skipped.
 */

export interface BrowseInput {
  field: string;
  op: string;
  value: string;
  where: string;
  sort: string;
  dir: 'asc' | 'desc';
  after: string;
  limit: number;
}

export const filterOps: Record<string, string> = {
  eq: 'equals',
  ne: 'is not',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
  starts: 'starts with',
  exists: 'exists',
  missing: 'is missing',
};

/** Fields kept in columns of their own, whose where needs the value as a Date. */
const dateFields = new Set(['createdAt', 'updatedAt']);
const pageSizes = [20, 50, 100, 200];
const maxCursorIds = 1000;

export class BrowseError extends Error {}

function text(query: Record<string, unknown>, name: string): string {
  const value = query[name];
  return typeof value === 'string' ? value : '';
}

export function browseInput(query: Record<string, unknown>): BrowseInput {
  const limit = Number(text(query, 'limit'));
  const sort = text(query, 'sort').trim();
  return {
    field: text(query, 'field').trim(),
    op: filterOps[text(query, 'op')] ? text(query, 'op') : 'eq',
    value: text(query, 'value'),
    where: text(query, 'where').trim(),
    sort: /^[A-Za-z_][A-Za-z0-9_.]{0,127}$/.test(sort) ? sort : 'createdAt',
    dir: text(query, 'dir') === 'asc' ? 'asc' : 'desc',
    after: text(query, 'after'),
    limit: pageSizes.includes(limit) ? limit : 50,
  };
}

/** A typed value: JSON when it reads as JSON (42, true, "x", {"__type": "Date", …}), else the text itself. */
function typedValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function escapeRegex(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The filter as one where (JSON), or null for none; bad JSON is a BrowseError worded for the page. */
export function filterWhere(input: BrowseInput): Record<string, unknown> | null {
  const parts: Record<string, unknown>[] = [];
  if (input.where) {
    let raw: unknown;
    try {
      raw = JSON.parse(input.where);
    } catch (error) {
      throw new BrowseError(`The where is not valid JSON: ${error instanceof Error ? error.message : String(error)}.`);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new BrowseError('The where must be a JSON object, such as {"score": {"$gt": 10}}.');
    parts.push(raw as Record<string, unknown>);
  }
  if (input.field) {
    if (!/^[A-Za-z_][A-Za-z0-9_.]{0,127}$/.test(input.field)) throw new BrowseError(`'${input.field.slice(0, 64)}' is not a field name.`);
    const value = dateFields.has(input.field) && input.value ? { __type: 'Date', iso: input.value } : typedValue(input.value);
    const condition: Record<string, unknown> = {
      eq: { [input.field]: value },
      ne: { [input.field]: { $ne: value } },
      gt: { [input.field]: { $gt: value } },
      gte: { [input.field]: { $gte: value } },
      lt: { [input.field]: { $lt: value } },
      lte: { [input.field]: { $lte: value } },
      starts: { [input.field]: { $regex: `^${escapeRegex(input.value)}` } },
      exists: { [input.field]: { $exists: true } },
      missing: { [input.field]: { $exists: false } },
    }[input.op] as Record<string, unknown>;
    parts.push(condition);
  }
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : { $and: parts };
}

interface Cursor {
  /** The sort value of the last row shown (as the wire has it). */
  v: unknown;
  /** The objectIds shown whose sort value is v. */
  ids: string[];
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(raw: string): Cursor {
  try {
    const cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (cursor && Array.isArray(cursor.ids) && cursor.ids.every((id: unknown) => typeof id === 'string') && 'v' in cursor) return cursor;
  } catch {
    // worded below
  }
  throw new BrowseError('The page link is damaged: start again from the first page.');
}

/** The where value of a wire value: createdAt/updatedAt are ISO strings on the wire and Dates in a where. */
function whereValue(field: string, value: unknown): unknown {
  return dateFields.has(field) && typeof value === 'string' ? { __type: 'Date', iso: value } : value;
}

/** The GET /1.1/classes parameters of one page. */
export function pageQuery(input: BrowseInput): Record<string, string> {
  const parts: Record<string, unknown>[] = [];
  const filter = filterWhere(input);
  if (filter) parts.push(filter);
  if (input.after) {
    const cursor = decodeCursor(input.after);
    const bound = input.dir === 'desc' ? '$lte' : '$gte';
    if (input.sort === 'objectId') {
      parts.push({ objectId: { [input.dir === 'desc' ? '$lt' : '$gt']: cursor.v } });
    } else {
      parts.push({ [input.sort]: { [bound]: whereValue(input.sort, cursor.v) } });
      if (cursor.ids.length > 0) parts.push({ objectId: { $nin: cursor.ids } });
    }
  }
  const where = parts.length === 0 ? {} : parts.length === 1 ? parts[0] : { $and: parts };
  const sign = input.dir === 'desc' ? '-' : '';
  const order = input.sort === 'objectId' ? `${sign}objectId` : `${sign}${input.sort},${sign}objectId`;
  return { where: JSON.stringify(where), order, limit: String(input.limit) };
}

function valueAt(object: Record<string, unknown>, path: string): unknown {
  let value: unknown = object;
  for (const key of path.split('.')) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/** The cursor of the page after `rows` (a full page), or null when this was the last. */
export function nextCursor(input: BrowseInput, rows: Record<string, unknown>[]): string | null {
  if (rows.length < input.limit) return null;
  const last = rows[rows.length - 1];
  const v = valueAt(last, input.sort);
  if (v === undefined) return null;
  const same = rows.filter((row) => JSON.stringify(valueAt(row, input.sort)) === JSON.stringify(v)).map((row) => String(row.objectId));
  // Rows of one value spanning pages: the ids already shown carry on.
  const before = input.after ? decodeCursor(input.after) : null;
  const carried = before && JSON.stringify(before.v) === JSON.stringify(v) ? before.ids : [];
  const ids = [...carried, ...same];
  if (ids.length > maxCursorIds) throw new BrowseError(`More than ${maxCursorIds} objects share this ${input.sort}: sort by another field to page further.`);
  return encodeCursor({ v, ids: input.sort === 'objectId' ? [] : ids });
}

/** Columns from the data: every field the rows hold, in the order first seen, the server's fields apart. */
export function columnsOf(rows: Record<string, unknown>[], max = 12): { columns: string[]; more: number } {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) if (!['objectId', 'createdAt', 'updatedAt', 'ACL'].includes(key)) seen.add(key);
  const all = [...seen];
  return { columns: all.slice(0, max), more: Math.max(0, all.length - max) };
}

/** A cell's text: short and plain (a pointer as Class/id, a date as its time), JSON for the rest. */
export function cellText(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value.length > 80 ? `${value.slice(0, 79)}…` : value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const typed = value as Record<string, unknown>;
    if (typed.__type === 'Pointer') return `→ ${typed.className}/${typed.objectId}`;
    if (typed.__type === 'Date') return String(typed.iso);
    if (typed.__type === 'Relation') return `relation of ${typed.className}`;
  }
  const json = JSON.stringify(value);
  return json.length > 80 ? `${json.slice(0, 79)}…` : json;
}

/** Whether a field's value is one a client cannot write back as it reads (a relation's descriptor). */
export function readOnlyValue(value: unknown): boolean {
  return Boolean(value && typeof value === 'object' && (value as Record<string, unknown>).__type === 'Relation');
}
