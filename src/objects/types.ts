import type { AppSettings } from '../apps/settings.ts';
import type { Regex } from './regex.ts';

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Keys are "*", a user objectId or "role:<name>"; values name the granted permissions. */
export type Acl = Record<string, { read?: boolean; write?: boolean }>;

export interface StoredObject {
  className: string;
  objectId: string;
  /** Epoch milliseconds. */
  createdAt: number;
  updatedAt: number;
  /** null: no ACL, everyone may read and write. */
  acl: Acl | null;
  data: JsonObject;
}

/**
 * An object read for sending on: its fields still as JSON text, exactly as JSON.stringify writes
 * them, so a read that only sends them parses nothing (src/objects/wire.ts, wireJson).
 */
export interface StoredJson {
  createdAt: number;
  updatedAt: number;
  dataJson: string;
}

/** A found object with its fields as JSON text (Store.findObjectsJson). */
export interface FoundJson extends StoredJson {
  objectId: string;
}

export interface AppRecord {
  appId: string;
  name: string;
  appKey: string;
  masterKey: string;
  settings: Partial<AppSettings>;
  createdAt: number;
  /** Keys replaced by a rotation, still accepted until their time (ms since the epoch). */
  retiredKeys: RetiredKey[];
}

export interface RetiredKey {
  kind: 'appKey' | 'masterKey';
  key: string;
  until: number;
}

/** Principals a reader acts as ("*", user id, "role:…"); null means the master key, which reads everything. */
export type Readers = readonly string[] | null;

export type Scalar = string | number | boolean | null;

/** A point on the sphere, in degrees: latitude -90 to 90, longitude -180 to 180. */
export interface GeoPoint {
  latitude: number;
  longitude: number;
}

/** The `where` language, parsed once into a tree each store compiles to its own SQL. */
export type Where =
  | { op: 'and' | 'or'; items: Where[] }
  | { op: 'not'; item: Where }
  /** Field equals the value, or is an array that contains it; null also matches a missing field. */
  | { op: 'eq'; path: string[]; value: Json }
  /** Equals one of the values (as 'eq' does each); the list is bound as one parameter, however long. */
  | { op: 'in'; path: string[]; values: Json[] }
  | { op: 'lt' | 'lte' | 'gt' | 'gte'; path: string[]; value: string | number }
  | { op: 'exists'; path: string[] }
  | { op: 'regex'; path: string[]; regex: Regex }
  | { op: 'size'; path: string[]; size: number }
  | { op: 'all'; path: string[]; values: Json[] }
  /** The object is a member of the owner's relation `key` ($relatedTo). */
  | { op: 'relatedTo'; owner: { className: string; objectId: string }; key: string }
  /** The object's relation `key` holds any of the targets (a relation field compared with pointers). */
  | { op: 'relationHolds'; key: string; targets: { className: string; objectIds: string[] } }
  /**
   * The field is a Pointer to an object of the subquery's class among its matches ($inQuery); with
   * `inArray` (the class schema types the field Array) an array holding such a pointer among its elements.
   */
  | { op: 'inQuery'; path: string[]; query: SubQuery; inArray?: boolean }
  /** The field's value equals the value of `key` in one of the subquery's matches ($select); pointers by class and id. */
  | { op: 'select'; path: string[]; query: SubQuery; key: string[] }
  /**
   * The field holds a GeoPoint whose great-circle distance from `point` lies within [minDistance,
   * maxDistance] radians (null: no bound). `nearest` ($nearSphere): a page without `order` comes nearest first.
   */
  | { op: 'near'; path: string[]; point: GeoPoint; minDistance: number; maxDistance: number | null; nearest: boolean }
  /** The field holds a GeoPoint inside the box; a box whose west lies east of its east crosses the antimeridian. */
  | { op: 'geoBox'; path: string[]; south: number; north: number; west: number; east: number }
  /** The field holds a GeoPoint inside the polygon, its edges straight in latitude and longitude ($geoWithin $polygon). */
  | { op: 'geoPolygon'; path: string[]; vertices: GeoPoint[] }
  | { op: 'const'; value: boolean };

/**
 * A query of a class inside a where: its matches are the objects the outer query's readers may read,
 * in its order, `skip` of them passed over and at most `limit` kept (matches past that are dropped,
 * as the hosted service drops them).
 */
export interface SubQuery {
  className: string;
  where: Where;
  order: OrderKey[];
  limit: number;
  skip: number;
}

export interface OrderKey {
  path: string[];
  descending: boolean;
}

export interface FindQuery {
  where: Where;
  order: OrderKey[];
  limit: number;
  skip: number;
  readers: Readers;
}

/** Fields whose uniqueness the database enforces; a race loser learns which one it lost on. */
/** `classIndex`: the values of a unique index users declared on the class (POST /1.1/indexes); `roleName`: a `_Role`'s name. */
export type UniqueField = 'objectId' | 'username' | 'email' | 'mobilePhoneNumber' | 'installationId' | 'authData' | 'classIndex' | 'roleName';

/**
 * A change or guard saying no: the caller's own reason (the domain's error), which the store hands
 * back untouched in the outcome. Stores never word errors.
 */
export interface Refusal<R> {
  refused: R;
}

/**
 * A relation field was fixed to another target class (`targetClass`) when first written: nothing of the
 * write is stored.
 */
export interface RelationClassClash {
  ok: false;
  reason: 'relationClass';
  key: string;
  targetClass: string;
}

export type WriteOutcome<R = never> =
  | { ok: true; object: StoredObject }
  | RelationClassClash
  | { ok: false; reason: 'taken'; field: UniqueField }
  | { ok: false; reason: 'notFound' }
  | { ok: false; reason: 'conditionFailed' }
  | { ok: false; reason: 'refused'; refusal: R };

/**
 * A `where` a write must meet, evaluated with the writer's read rights (`readers`, as for a query): an
 * object the writer may not read never meets one, whatever it says, so the answer tells nothing of its fields.
 */
export interface Condition {
  where: Where;
  readers: Readers;
}

/**
 * An object as a read earlier in the request found it, with the store's version of its row at that read
 * (PostgreSQL: xmin; null where the store keeps none): an update may take it for the current row while
 * the row still has that version (Store.updateObject's `seen`).
 */
export interface SeenRow {
  object: StoredObject;
  version: string | null;
}

/** Decides, from the current row, what it becomes, or refuses the write. */
export type Change<R = never> = (current: StoredObject) => StoredObject | Refusal<R>;
