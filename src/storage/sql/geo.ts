import { sql } from 'kysely';
import type { GeoPoint, Where } from '../../objects/types.ts';
import { earthRadiusKm } from '../../objects/geo.ts';
import type { Sql, SqlDialect } from './dialect.ts';

/**
 * Geo conditions on the row's GeoPoint columns (geo_field, geo_lat, geo_lng: src/storage/sql/object-row.ts),
 * the same SQL on both databases (sin, cos and power are built into PostgreSQL and into better-sqlite3's
 * SQLite). Each is a box on the columns, which objects_geo_cell_idx (migration 0019) reads as bands of
 * latitude, each a range of longitude, then the exact great-circle test on what the box keeps.
 */

type Near = Extract<Where, { op: 'near' }>;
type GeoBox = Extract<Where, { op: 'geoBox' }>;
type GeoPolygon = Extract<Where, { op: 'geoPolygon' }>;

const degree = Math.PI / 180;
/** Added to each side of a near's box, so a point on its edge computed in floating point is not lost. */
const margin = 1e-9;

/** Longitude ranges, west to east; none: every longitude. */
type Longitudes = Array<[west: number, east: number]> | null;

/** A longitude range that may run past ±180 as the ranges that cover it within [-180, 180]. */
function wrapped(west: number, east: number): Longitudes {
  if (west < -180) return [[west + 360, 180], [-180, east]];
  if (east > 180) return [[west, 180], [-180, east - 360]];
  return [[west, east]];
}

/** Bands of latitude listed as seeks up to this many (about 70 km); a taller box reads their range. */
const maxCellSeeks = 64;

/**
 * The latitude bands (`floor(geo_lat * 100)`, objects_geo_cell_idx: migration 0019) of the points from `south` to
 * `north`: each a seek of the index that then reads only its longitude range. Exact, not padded: multiplying by 100
 * rounds in the same direction in JavaScript and in SQL, so a latitude within the range is within its bands.
 */
function geoCells(num: Num, south: number, north: number): Sql {
  const cell = sql`floor(o.geo_lat * 100)`;
  const [low, high] = [Math.floor(south * 100), Math.floor(north * 100)];
  if (high - low >= maxCellSeeks) return sql`${cell} BETWEEN ${num(low)} AND ${num(high)}`;
  return sql`${cell} IN (${sql.join(Array.from({ length: high - low + 1 }, (_, i) => num(low + i)))})`;
}

function inBox(num: Num, south: number, north: number, longitudes: Longitudes): Sql {
  const latitude = sql`${geoCells(num, south, north)} AND o.geo_lat BETWEEN ${num(south)} AND ${num(north)}`;
  if (longitudes === null) return latitude;
  const ranges = longitudes.map(([west, east]) => sql`o.geo_lng BETWEEN ${num(west)} AND ${num(east)}`);
  return sql`${latitude} AND (${sql.join(ranges, sql` OR `)})`;
}

/**
 * The box around the cap of `radius` radians about the point: its latitudes, and the longitudes
 * asin(sin r / cos φ) either side, unless the cap holds a pole (then every longitude).
 */
function capBox(num: Num, point: GeoPoint, radius: number): Sql {
  const reach = radius / degree + margin;
  const south = point.latitude - reach;
  const north = point.latitude + reach;
  const ratio = Math.sin(radius) / Math.cos(point.latitude * degree);
  if (south <= -90 || north >= 90 || ratio >= 1) return inBox(num, Math.max(south, -90), Math.min(north, 90), null);
  const spread = Math.asin(ratio) / degree + margin;
  return inBox(num, south, north, wrapped(point.longitude - spread, point.longitude + spread));
}

/**
 * The haversine of the distance between the row's point and `point`: sin²(d/2), which grows with d, so
 * bounds compare with sin²(bound/2) and the order is the distance's, with no asin to clamp.
 */
function haversine(num: Num, point: GeoPoint): Sql {
  const half = num(degree / 2);
  const cosLatitude = Math.cos(point.latitude * degree);
  return sql`(power(sin((o.geo_lat - ${num(point.latitude)}) * ${half}), 2)
    + cos(o.geo_lat * ${num(degree)}) * ${num(cosLatitude)} * power(sin((o.geo_lng - ${num(point.longitude)}) * ${half}), 2))`;
}

const bound = (radians: number) => Math.sin(radians / 2) ** 2;

/** The field is the row's GeoPoint field: false, not NULL, on rows without one (NOT keeps its meaning). */
function holds(dialect: SqlDialect, path: string[]): Sql {
  return sql`o.geo_field IS NOT NULL AND o.geo_field = ${dialect.typedValue(path[0], 'text')}`;
}

/** A number bound as float8 (dialect.typedValue), so a near page's statement can be batched on PostgreSQL. */
type Num = (value: number) => Sql;
const numbers = (dialect: SqlDialect): Num => (value) => dialect.typedValue(value, 'float8');

export function compileNear(dialect: SqlDialect, node: Near): Sql {
  const num = numbers(dialect);
  const parts = [holds(dialect, node.path)];
  if (node.maxDistance !== null && node.maxDistance < Math.PI) {
    parts.push(capBox(num, node.point, node.maxDistance), sql`${haversine(num, node.point)} <= ${num(bound(node.maxDistance))}`);
  }
  if (node.minDistance > 0) parts.push(sql`${haversine(num, node.point)} >= ${num(bound(node.minDistance))}`);
  return sql`(${sql.join(parts, sql` AND `)})`;
}

/** Inclusive on every side; a west past the east is the box across the antimeridian. */
export function compileGeoBox(dialect: SqlDialect, node: GeoBox): Sql {
  const longitudes: Longitudes = node.west <= node.east ? [[node.west, node.east]] : [[node.west, 180], [-180, node.east]];
  return sql`(${holds(dialect, node.path)} AND ${inBox(numbers(dialect), node.south, node.north, longitudes)})`;
}

/**
 * Inside the polygon by the even-odd rule: a ray from the point towards growing longitudes crosses an odd
 * number of edges (each edge straight in latitude and longitude, as MongoDB's legacy $polygon), within the
 * polygon's bounding box. Edges along a parallel cross nothing and are left out, so no division is left to SQL.
 */
export function compileGeoPolygon(dialect: SqlDialect, node: GeoPolygon): Sql {
  const { vertices } = node;
  const num = numbers(dialect);
  const crossings = vertices.flatMap((a, i) => {
    const b = vertices[(i + 1) % vertices.length];
    if (a.latitude === b.latitude) return [];
    const slope = (b.longitude - a.longitude) / (b.latitude - a.latitude);
    return [sql`CASE WHEN (o.geo_lat > ${num(a.latitude)}) <> (o.geo_lat > ${num(b.latitude)})
      AND o.geo_lng < ${num(slope)} * (o.geo_lat - ${num(a.latitude)}) + ${num(a.longitude)} THEN 1 ELSE 0 END`];
  });
  if (crossings.length === 0) return sql`1=0`;
  const latitudes = vertices.map((v) => v.latitude);
  const longitudes = vertices.map((v) => v.longitude);
  const box = inBox(num, Math.min(...latitudes), Math.max(...latitudes), [[Math.min(...longitudes), Math.max(...longitudes)]]);
  return sql`(${holds(dialect, node.path)} AND ${box} AND (${sql.join(crossings, sql` + `)}) % 2 = 1)`;
}

/** A $nearSphere page's order: nearest first, then insertion order among equals. */
export function nearestOrder(dialect: SqlDialect, node: Near): Sql {
  return sql`${haversine(numbers(dialect), node.point)} ASC, o.created_at ASC, o.id ASC`;
}

/** The $nearSphere a page without `order` is sorted by: the first among the where's top-level conditions. */
export function nearestOf(where: Where): Near | null {
  if (where.op === 'near' && where.nearest) return where;
  if (where.op !== 'and') return null;
  for (const item of where.items) {
    const found = nearestOf(item);
    if (found) return found;
  }
  return null;
}

/** The where with `node` bounded to `radius` radians. */
export function boundNear(where: Where, node: Near, radius: number): Where {
  if (where === node) return { ...node, maxDistance: radius };
  if (where.op !== 'and') return where;
  return { op: 'and', items: where.items.map((item) => boundNear(item, node, radius)) };
}

/** The first radius an unbounded nearest-first page is looked for within: 1 km. */
export const firstNearestRadius = 1 / earthRadiusKm;

/**
 * The radius to look within next, after `radius` held `found` of the `wanted` matches: the area that would
 * hold them all at the density seen (with a quarter more), at least half again as wide and at most four
 * times; four times when it held none. Past π it is the whole sphere.
 */
export function nextNearestRadius(radius: number, found: number, wanted: number): number {
  const grow = found === 0 ? 4 : Math.min(4, Math.max(1.5, 1.25 * Math.sqrt(wanted / found)));
  return radius * grow;
}
