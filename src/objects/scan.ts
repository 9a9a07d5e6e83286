import { createHmac } from 'node:crypto';
import { fail } from '../lib/errors.ts';
import { safeEqual } from '../lib/crypto.ts';
import { decodeWhere, parseLimit } from './query.ts';
import type { Json, JsonObject } from './types.ts';
import { fieldPath, isObject } from './values.ts';

/**
 * Scan (`GET /1.1/scan/classes/<class>`): a class read to its end in pages without `skip`. Each page
 * is a find ordered by the scan key and then the objectId, starting after the last object of the page
 * before (keyset paging), so a page costs the same however deep into the class it is. The cursor
 * carries that last position, sealed with the server secret: a cursor this server did not give for
 * this application, class and key is refused (400 code 102), and no cursor leads anywhere the
 * caller's own `where` would not.
 */
export interface ScanRequest {
  /** The parameters of the find of this page (`GET /1.1/classes/<class>`). */
  params: Record<string, string>;
  key: ScanKey;
  limit: number;
}

export interface ScanKey {
  field: string;
  descending: boolean;
}

export interface ScanScope {
  appId: string;
  className: string;
  secret: string;
}

/** What a page's last object leaves for the next page: its scan key value (as sent) and its objectId. */
type Position = [Json, string];

function parseScanKey(raw: string | undefined): ScanKey {
  if (raw === undefined || raw === '') return { field: 'objectId', descending: false };
  const descending = raw.startsWith('-');
  const field = descending ? raw.slice(1) : raw;
  fieldPath(field); // a bad key name is refused as in `order` (105)
  return { field, descending };
}

function spelled(key: ScanKey): string {
  return `${key.descending ? '-' : ''}${key.field}`;
}

function seal(scope: ScanScope, key: ScanKey, payload: string): string {
  return createHmac('sha256', scope.secret)
    .update(`scan\0${scope.appId}\0${scope.className}\0${spelled(key)}\0${payload}`)
    .digest('base64url')
    .slice(0, 22);
}

function openCursor(scope: ScanScope, key: ScanKey, cursor: string): Position {
  const [payload, mac, ...rest] = cursor.split('.');
  if (rest.length > 0 || !payload || !mac || !safeEqual(mac, seal(scope, key, payload))) fail('invalidCursor');
  const position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
  if (!Array.isArray(position) || position.length !== 2 || typeof position[1] !== 'string') fail('invalidCursor');
  return position as Position;
}

/** The cursor of the page after `results`; null when this page was the last (it was not full). */
export function nextCursor(scope: ScanScope, request: ScanRequest, results: JsonObject[]): string | null {
  if (request.limit === 0 || results.length < request.limit) return null;
  const last = results[results.length - 1];
  const value = fieldPath(request.key.field).reduce<Json | undefined>((at, name) => (isObject(at) ? at[name] : undefined), last);
  const position: Position = [value ?? null, String(last.objectId)];
  const payload = Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
  return `${payload}.${seal(scope, request.key, payload)}`;
}

/** The find that reads the page a scan request asks for. */
export function scanRequest(scope: ScanScope, query: Record<string, string | undefined>): ScanRequest {
  const key = parseScanKey(query.scan_key);
  const limit = parseLimit(query.limit);
  const after = key.descending ? '$lt' : '$gt';
  const clauses: Json[] = [];
  const where = decodeWhere(query.where);
  if (where !== null) clauses.push(where as Json);
  // Objects without the key have no place in its order: a scan by a key reads those that have it.
  if (key.field !== 'objectId') clauses.push({ [key.field]: { $exists: true } });
  if (query.cursor !== undefined && query.cursor !== '') {
    const [value, objectId] = openCursor(scope, key, query.cursor);
    const pastId = { objectId: { [after]: objectId } };
    clauses.push(
      key.field === 'objectId'
        ? pastId
        : { $or: [{ [key.field]: { [after]: value } }, { $and: [{ [key.field]: value }, pastId] }] },
    );
  }
  const params: Record<string, string> = {
    where: JSON.stringify(clauses.length === 1 ? clauses[0] : { $and: clauses }),
    order: key.field === 'objectId' ? spelled(key) : `${spelled(key)},${key.descending ? '-' : ''}objectId`,
    limit: String(limit),
  };
  for (const name of ['include', 'returnACL'] as const) {
    if (query[name] !== undefined) params[name] = query[name];
  }
  // The page's last key value makes the cursor: kept in the answer whatever `keys` leaves out.
  if (query.keys) params.keys = `${query.keys},${key.field}`;
  return { params, key, limit };
}
