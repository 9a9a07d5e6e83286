import { sql } from 'kysely';
import type { Acl, GeoPoint, JsonObject, StoredObject, UniqueField, WriteOutcome } from '../../objects/types.ts';
import { isGeoPoint } from '../../objects/values.ts';
import { table } from '../../lib/lookup.ts';
import type { SessionSeal } from '../account-store.ts';
import type { Sql, SqlDialect, ViolatedIndex } from './dialect.ts';
import { classIndexPrefix } from './class-index-store.ts';

/**
 * The `objects` row: what its columns hold, how an object becomes a row and a row an object, and
 * which unique index guards which field. Every insert and update of a whole object is built here
 * (the store, accounts, identities, the import's INSERT and COPY), so the readers and promoted
 * columns can never disagree with data and acl. Statements that change a data field no column
 * is derived from, in place (push's `valid` flag, an import's dropped authData), need not come here.
 */

/** The columns, in the order of every row written here and of the import's COPY. */
export const objectColumns = [
  'app_id',
  'class_name',
  'id',
  'created_at',
  'updated_at',
  'data',
  'acl',
  'readers',
  'username',
  'email',
  'mobile_phone',
  'installation_id',
  'password_hash',
  'session_digest',
  'session_cipher',
  'geo_field',
  'geo_lat',
  'geo_lng',
] as const;

/** A stored object's row, before the dialect encodes data, acl and readers. */
export interface ObjectRow {
  app_id: string;
  class_name: string;
  id: string;
  created_at: number;
  updated_at: number;
  data: JsonObject;
  acl: Acl | null;
  readers: string[];
  username: string | null;
  email: string | null;
  mobile_phone: string | null;
  installation_id: string | null;
  /** `_User` only, in columns no object query selects. */
  password_hash: string | null;
  session_digest: string | null;
  session_cipher: string | null;
  /** The object's GeoPoint field (it has at most one) and its coordinates, indexed for geo queries (src/storage/sql/geo.ts). */
  geo_field: string | null;
  geo_lat: number | null;
  geo_lng: number | null;
}

/** A `_User` row's secrets. */
export interface RowSecrets {
  passwordHash: string | null;
  session: SessionSeal | null;
}

/**
 * The ACL storage rule: the principals that may read the row. No ACL is everyone ('*'); a query
 * matches the caller's principals against this list (dialect.readableBy), never the ACL itself.
 */
export function readersOf(acl: Acl | null): string[] {
  if (acl === null) return ['*'];
  return Object.entries(acl)
    .filter(([, permission]) => permission.read === true)
    .map(([principal]) => principal);
}

export type PromotedColumn = 'username' | 'email' | 'mobile_phone' | 'installation_id';

/** Fields the server relies on, lifted out of the schema-free data (string values only) so unique indexes can hold them. */
const promoted: ReadonlyArray<{ className: string; field: UniqueField; column: PromotedColumn }> = [
  { className: '_User', field: 'username', column: 'username' },
  { className: '_User', field: 'email', column: 'email' },
  { className: '_User', field: 'mobilePhoneNumber', column: 'mobile_phone' },
  { className: '_Installation', field: 'installationId', column: 'installation_id' },
];

const promotedByClass = table(
  Object.fromEntries(
    [...new Set(promoted.map((p) => p.className))].map((className) => [
      className,
      table(Object.fromEntries(promoted.filter((p) => p.className === className).map((p) => [p.field, p.column]))),
    ]),
  ),
);

/** The column a field of the class is promoted to, if it is. Read with request text. */
export function promotedColumn(className: string, field: string): PromotedColumn | undefined {
  return promotedByClass[className]?.[field];
}

/** Promoted columns and the field each holds, in column order (to tell which one a value is taken in). */
export const promotedFields: ReadonlyArray<{ column: PromotedColumn; field: UniqueField }> = promoted;

export function promotedColumns(object: StoredObject): Record<PromotedColumn, string | null> {
  const columns: Record<PromotedColumn, string | null> = { username: null, email: null, mobile_phone: null, installation_id: null };
  for (const p of promoted) {
    if (p.className !== object.className) continue;
    const value = object.data[p.field];
    if (typeof value === 'string') columns[p.column] = value;
  }
  return columns;
}

/**
 * The GeoPoint field of the data and its coordinates. Writes allow one (src/objects/ops.ts); of an
 * imported object with several, the first by name, as migration 0007 chose for stored ones.
 */
export function geoColumns(data: JsonObject): Pick<ObjectRow, 'geo_field' | 'geo_lat' | 'geo_lng'> {
  let field: string | null = null;
  for (const key of Object.keys(data)) if (isGeoPoint(data[key]) && (field === null || key < field)) field = key;
  if (field === null) return { geo_field: null, geo_lat: null, geo_lng: null };
  const point = data[field] as unknown as GeoPoint;
  return { geo_field: field, geo_lat: point.latitude, geo_lng: point.longitude };
}

export function toRow(appId: string, object: StoredObject, secrets?: RowSecrets): ObjectRow {
  return {
    app_id: appId,
    class_name: object.className,
    id: object.objectId,
    created_at: object.createdAt,
    updated_at: object.updatedAt,
    data: object.data,
    acl: object.acl,
    readers: readersOf(object.acl),
    ...promotedColumns(object),
    password_hash: secrets?.passwordHash ?? null,
    session_digest: secrets?.session?.digest ?? null,
    session_cipher: secrets?.session?.cipher ?? null,
    ...geoColumns(object.data),
  };
}

function bind(dialect: SqlDialect, row: ObjectRow, column: keyof ObjectRow): unknown {
  if (column === 'data' || column === 'acl') return dialect.encodeJson(row[column]);
  if (column === 'readers') return dialect.encodeReaders(row.readers);
  return row[column];
}

const columnList = sql.raw(objectColumns.join(', '));

/** `INSERT INTO objects (…) VALUES (…), …`: the caller adds ON CONFLICT or RETURNING. */
export function insertRows(dialect: SqlDialect, rows: ObjectRow[]): Sql {
  const values = rows.map((row) => sql`(${sql.join(objectColumns.map((column) => bind(dialect, row, column)))})`);
  return sql`INSERT INTO objects (${columnList}) VALUES ${sql.join(values)}`;
}

/** What a write of the object changes: all but its key, its creation time and the secrets. */
const keptColumns = new Set(['app_id', 'class_name', 'id', 'created_at', 'password_hash', 'session_digest', 'session_cipher']);
const updatedColumns = objectColumns.filter((column) => !keptColumns.has(column));

/** The SET list that stores the row's object over the one there. */
export function updateSet(dialect: SqlDialect, row: ObjectRow): Sql {
  return sql.join(updatedColumns.map((column) => sql`${sql.ref(column)} = ${bind(dialect, row, column)}`));
}

/** The SET list that stores, over each row, the row of the same key in `source` (a relation with the columns of objects). */
export function updateFromSet(source: string): Sql {
  return sql.raw(updatedColumns.map((column) => `${column} = ${source}.${column}`).join(', '));
}

/** The columns an object is read from, of `objects o`. */
export const objectSelect = sql`o.class_name, o.id, o.created_at, o.updated_at, o.data, o.acl`;

/**
 * The columns a page sent as stored is read from (Store.findObjectsJson): its class is the page's and its ACL is
 * not sent, so neither is read; each column less is a value fewer a row for the driver to decode (on SQLite a
 * property set per value: the class and ACL were ~13 µs of a 20-object page's ~80).
 */
export const objectJsonSelect = sql`o.id, o.created_at, o.updated_at, o.data`;

/** objectJsonSelect as a statement returns it: `data` as its text where the driver would decode it (dialect.storedText, dataJson). */
export function objectJsonColumns(dialect: SqlDialect): Sql {
  return sql`o.id, o.created_at, o.updated_at, ${dialect.storedText(sql`o.data`)} AS data`;
}

/** What objectJsonColumns reads, as the driver gives it. */
export type SelectedJsonRow = Pick<SelectedRow, 'id' | 'created_at' | 'updated_at' | 'data'>;

/**
 * SelectedJsonRow as a tuple in objectJsonColumns' order (a driver's row as an array: no object a row), and the class
 * after them where the statement reads it too (`o.class_name AS class_name`: an include level, getObjectsJson).
 */
export type FoundJsonTuple = [id: string, createdAt: number | string, updatedAt: number | string, data: unknown, className?: string];

/** What objectSelect reads, as the driver gives it. */
export interface SelectedRow {
  class_name: string;
  id: string;
  created_at: number | string;
  updated_at: number | string;
  data: unknown;
  acl: unknown;
}

export function fromRow(dialect: SqlDialect, row: SelectedRow): StoredObject {
  return {
    className: row.class_name,
    objectId: row.id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    acl: dialect.decodeJson<Acl | null>(row.acl),
    data: dialect.decodeJson(row.data) ?? {},
  };
}

/** The unique indexes a write can hit, by the name PostgreSQL reports and the columns SQLite reports. */
const uniqueIndexes: ReadonlyArray<{ name: string; table: string; columns: string; field: UniqueField }> = [
  { name: 'objects_pkey', table: 'objects', columns: 'app_id, class_name, id', field: 'objectId' },
  { name: 'objects_username_key', table: 'objects', columns: 'app_id, username', field: 'username' },
  { name: 'objects_email_key', table: 'objects', columns: 'app_id, email', field: 'email' },
  { name: 'objects_mobile_phone_key', table: 'objects', columns: 'app_id, mobile_phone', field: 'mobilePhoneNumber' },
  { name: 'objects_installation_id_key', table: 'objects', columns: 'app_id, installation_id', field: 'installationId' },
  { name: 'objects_role_name_key', table: 'objects', columns: '', field: 'roleName' },
  { name: 'auth_identities_pkey', table: 'auth_identities', columns: 'app_id, platform, uid', field: 'authData' },
];

/** The field a failed write found taken, or null when the error is no unique violation of one. */
export function takenField(dialect: SqlDialect, error: unknown): UniqueField | null {
  const index: ViolatedIndex | null = dialect.uniqueViolation(error);
  if (index === null) return null;
  if ('name' in index && index.name.startsWith(classIndexPrefix)) return 'classIndex';
  const found = uniqueIndexes.find((u) =>
    'name' in index ? u.name === index.name : u.table === index.table && u.columns === index.columns.join(', '),
  );
  return found?.field ?? null;
}

/** A write that threw: `taken` when it hit the unique index of a field; any other error is thrown on. */
export function takenOrThrow(dialect: SqlDialect, error: unknown): WriteOutcome {
  const field = takenField(dialect, error);
  if (field) return { ok: false, reason: 'taken', field };
  throw error;
}
