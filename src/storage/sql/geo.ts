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
 * `north`: each a seek of the index that then reads only its longitude range (or, `range`, past maxCellSeeks, the first
 * and last read as one range). Exact, not padded: multiplying by 100 rounds in the same direction in JavaScript and in
 * SQL, so a latitude within the range is within its bands.
 */
type Cells = { range: boolean; bands: number[] };

function cellsOf(south: number, north: number): Cells {
  const [low, high] = [Math.floor(south * 100), Math.floor(north * 100)];
  if (high - low >= maxCellSeeks) return { range: true, bands: [low, high] };
  return { range: false, bands: Array.from({ length: high - low + 1 }, (_, i) => low + i) };
}

function cellsSql(num: Num, cells: Cells): Sql {
  const cell = sql`floor(o.geo_lat * 100)`;
  if (cells.range) return sql`${cell} BETWEEN ${num(cells.bands[0])} AND ${num(cells.bands[1])}`;
  return sql`${cell} IN (${sql.join(cells.bands.map((band) => num(band)))})`;
}

function inBox(num: Num, south: number, north: number, longitudes: Longitudes): Sql {
  return boxSql(num, { cells: cellsOf(south, north), south, north, longitudes });
}

/** A box as inBox reads it: its bands, latitudes and longitude ranges. */
interface Box {
  cells: Cells;
  south: number;
  north: number;
  longitudes: Longitudes;
}

function boxSql(num: Num, box: Box): Sql {
  const latitude = sql`${cellsSql(num, box.cells)} AND o.geo_lat BETWEEN ${num(box.south)} AND ${num(box.north)}`;
  if (box.longitudes === null) return latitude;
  const ranges = box.longitudes.map(([west, east]) => sql`o.geo_lng BETWEEN ${num(west)} AND ${num(east)}`);
  return sql`${latitude} AND (${sql.join(ranges, sql` OR `)})`;
}

/**
 * The box around the cap of `radius` radians about the point: its latitudes, and the longitudes
 * asin(sin r / cos φ) either side, unless the cap holds a pole (then every longitude).
 */
function capBox(point: GeoPoint, radius: number): Box {
  const reach = radius / degree + margin;
  const south = point.latitude - reach;
  const north = point.latitude + reach;
  const ratio = Math.sin(radius) / Math.cos(point.latitude * degree);
  if (south <= -90 || north >= 90 || ratio >= 1) {
    const [low, high] = [Math.max(south, -90), Math.min(north, 90)];
    return { cells: cellsOf(low, high), south: low, north: high, longitudes: null };
  }
  const spread = Math.asin(ratio) / degree + margin;
  return { cells: cellsOf(south, north), south, north, longitudes: wrapped(point.longitude - spread, point.longitude + spread) };
}

/**
 * The haversine of the distance between the row's point and `point`: sin²(d/2), which grows with d, so
 * bounds compare with sin²(bound/2) and the order is the distance's, with no asin to clamp.
 */
function haversine(num: Num, near: NearNumbers): Sql {
  const half = num(degree / 2);
  return sql`(power(sin((o.geo_lat - ${num(near.latitude)}) * ${half}), 2)
    + cos(o.geo_lat * ${num(degree)}) * ${num(near.cosLatitude)} * power(sin((o.geo_lng - ${num(near.longitude)}) * ${half}), 2))`;
}

const bound = (radians: number) => Math.sin(radians / 2) ** 2;

/** The field is the row's GeoPoint field: false, not NULL, on rows without one (NOT keeps its meaning). */
function holds(dialect: SqlDialect, path: string[]): Sql {
  return sql`o.geo_field IS NOT NULL AND o.geo_field = ${dialect.typedValue(path[0], 'text')}`;
}

/** A number bound as float8 (dialect.typedValue), so a near page's statement can be batched on PostgreSQL. */
type Num = (value: number) => Sql;
const numbers = (dialect: SqlDialect): Num => (value) => dialect.typedValue(value, 'float8');

/**
 * Every number a near's SQL binds that follows from its point and distances (the box's bands, latitudes and
 * longitudes, cos φ, the bounds' sin²), computed once: what a page's shape takes out as its values
 * (page-shapes.ts, walkNear) and puts back, so a cached statement's parameters are made without this arithmetic.
 */
export interface NearNumbers {
  latitude: number;
  longitude: number;
  cosLatitude: number;
  box: Box | null;
  within: number | null;
  beyond: number | null;
}

/** The numbers a near node was made with by walkNear (values put back into a cached shape), else none. */
const walked = new WeakMap<Near, NearNumbers>();

function nearNumbers(node: Near): NearNumbers {
  const given = walked.get(node);
  if (given) return given;
  const bounded = node.maxDistance !== null && node.maxDistance < Math.PI;
  return {
    latitude: node.point.latitude,
    longitude: node.point.longitude,
    cosLatitude: Math.cos(node.point.latitude * degree),
    box: bounded ? capBox(node.point, node.maxDistance!) : null,
    within: bounded ? bound(node.maxDistance!) : null,
    beyond: node.minDistance > 0 ? bound(node.minDistance) : null,
  };
}

/**
 * The near with each of its numbers passed through `take` in one fixed order, and into `key` everything that shapes
 * its SQL's text (field, nearest first, how many bands and longitude ranges, which bounds): the same walk takes a
 * page's values out and puts others back (page-shapes.ts). The node returned compiles from the numbers taken.
 */
export function walkNear(node: Near, take: (value: number) => number, key: string[]): Near {
  const numbers = nearNumbers(node);
  key.push(`near${JSON.stringify(node.path)}${node.nearest ? '!' : ''}(`);
  const out: NearNumbers = { latitude: take(numbers.latitude), longitude: take(numbers.longitude), cosLatitude: take(numbers.cosLatitude), box: null, within: null, beyond: null };
  const { box } = numbers;
  if (box) {
    key.push(`box${box.cells.range ? '..' : box.cells.bands.length}`);
    const cells = { range: box.cells.range, bands: box.cells.bands.map(take) };
    const [south, north] = [take(box.south), take(box.north)];
    key.push(box.longitudes === null ? 'all' : `lng${box.longitudes.length}`);
    const longitudes = box.longitudes && box.longitudes.map(([west, east]): [number, number] => [take(west), take(east)]);
    out.box = { cells, south, north, longitudes };
  }
  if (numbers.within !== null) out.within = (key.push('within'), take(numbers.within));
  if (numbers.beyond !== null) out.beyond = (key.push('beyond'), take(numbers.beyond));
  key.push(')');
  const made: Near = { ...node, point: { ...node.point, latitude: out.latitude, longitude: out.longitude } };
  walked.set(made, out);
  return made;
}

export function compileNear(dialect: SqlDialect, node: Near): Sql {
  const num = numbers(dialect);
  const near = nearNumbers(node);
  const parts = [holds(dialect, node.path)];
  if (near.box !== null && near.within !== null) parts.push(boxSql(num, near.box), sql`${haversine(num, near)} <= ${num(near.within)}`);
  if (near.beyond !== null) parts.push(sql`${haversine(num, near)} >= ${num(near.beyond)}`);
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
  return sql`${haversine(numbers(dialect), nearNumbers(node))} ASC, o.created_at ASC, o.id ASC`;
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
