import { fail } from '../lib/errors.ts';
import type { GeoPoint, Where } from './types.ts';
import { checkGeoPoint, isObject } from './values.ts';

/** The Earth's radius the SDKs convert distances with (JS `withinKilometers`/`withinMiles`, Python, Java). */
export const earthRadiusKm = 6371.0;
export const earthRadiusMiles = 3958.8;

/** Distance bounds beside $nearSphere, and what one unit of each is in radians. */
const maxDistances: Record<string, number> = {
  $maxDistance: 1,
  $maxDistanceInRadians: 1,
  $maxDistanceInKilometers: 1 / earthRadiusKm,
  $maxDistanceInMiles: 1 / earthRadiusMiles,
};
const minDistances: Record<string, number> = {
  $minDistance: 1,
  $minDistanceInRadians: 1,
  $minDistanceInKilometers: 1 / earthRadiusKm,
  $minDistanceInMiles: 1 / earthRadiusMiles,
};

const operators = new Set(['$nearSphere', '$within', '$geoWithin', ...Object.keys(maxDistances), ...Object.keys(minDistances)]);

/** Whether a field constraint's operator is one of the geo ones geoConstraints reads. */
export function isGeoOperator(operator: string): boolean {
  return operators.has(operator);
}

/** A GeoPoint given in a query: its coordinates in range (302), as a write's must be. */
function queryPoint(raw: unknown, operator: string): GeoPoint {
  if (!isObject(raw) || (raw.__type !== undefined && raw.__type !== 'GeoPoint')) fail('invalidQuery', `${operator} needs a GeoPoint.`);
  return checkGeoPoint(raw);
}

function distance(raw: unknown, operator: string, unit: number): number {
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < 0) fail('invalidQuery', `${operator} needs a distance: a number from 0.`);
  // Nothing on the sphere lies farther than π radians.
  return Math.min(raw * unit, Math.PI);
}

/**
 * A $box corner: a GeoPoint, or MongoDB's legacy pair `[longitude, latitude]`, which the Python SDK sends when
 * given tuples (Query.within_geo_box) and the hosted service read.
 */
function corner(raw: unknown, operator: string): GeoPoint {
  if (!Array.isArray(raw)) return queryPoint(raw, operator);
  if (raw.length !== 2) fail('invalidQuery', `${operator} needs a GeoPoint or [longitude, latitude].`);
  return checkGeoPoint({ longitude: raw[0], latitude: raw[1] });
}

function box(raw: unknown, operator: string, path: string[]): Where {
  if (!Array.isArray(raw) || raw.length !== 2) fail('invalidQuery', `${operator} needs [southwest, northeast]: two GeoPoints.`);
  const [southwest, northeast] = raw.map((point) => corner(point, operator));
  // Latitudes either way round are one band; longitudes west past east cross the antimeridian (docs/compatibility.md).
  return {
    op: 'geoBox',
    path,
    south: Math.min(southwest.latitude, northeast.latitude),
    north: Math.max(southwest.latitude, northeast.latitude),
    west: southwest.longitude,
    east: northeast.longitude,
  };
}

/** Most vertices of a $polygon: each edge is a term of the SQL. */
export const maxPolygonVertices = 100;

function polygon(raw: unknown, path: string[]): Where {
  if (!Array.isArray(raw) || raw.length < 3 || raw.length > maxPolygonVertices) {
    fail('invalidQuery', `$polygon needs 3 to ${maxPolygonVertices} GeoPoints.`);
  }
  return { op: 'geoPolygon', path, vertices: raw.map((point) => queryPoint(point, '$polygon')) };
}

function region(raw: unknown, operator: string, path: string[]): Where {
  if (!isObject(raw)) fail('invalidQuery', `${operator} needs {"$box": [southwest, northeast]}.`);
  const [shape, ...others] = Object.keys(raw);
  if (others.length === 0 && shape === '$box') return box(raw.$box, '$box', path);
  if (others.length === 0 && shape === '$centerSphere' && operator === '$geoWithin') {
    const circle = raw.$centerSphere;
    if (!Array.isArray(circle) || circle.length !== 2) fail('invalidQuery', '$centerSphere needs [center GeoPoint, radius in radians].');
    const point = queryPoint(circle[0], '$centerSphere');
    return { op: 'near', path, point, minDistance: 0, maxDistance: distance(circle[1], '$centerSphere', 1), nearest: false };
  }
  if (others.length === 0 && shape === '$polygon' && operator === '$geoWithin') return polygon(raw.$polygon, path);
  const extensions = ', {"$centerSphere": [center, radians]} or {"$polygon": [GeoPoint, …]}';
  return fail('invalidQuery', `${operator} needs {"$box": [southwest, northeast]}${operator === '$geoWithin' ? extensions : ''}.`);
}

/**
 * The geo operators of one field's constraint as where nodes: $nearSphere with its distance bounds
 * (siblings in the same object, every bound applying), $within/$geoWithin with a $box or (extensions of
 * $geoWithin) a $centerSphere or a $polygon. Only top-level fields: an object holds at most one GeoPoint
 * field, kept indexed.
 */
export function geoConstraints(path: string[], spec: Record<string, unknown>): Where[] {
  const keys = Object.keys(spec).filter(isGeoOperator);
  if (keys.length === 0) return [];
  if (path.length !== 1) fail('invalidQuery', `Geo queries read a top-level GeoPoint field, not '${path.join('.')}'.`);
  const nodes: Where[] = [];
  let minDistance = 0;
  let maxDistance: number | null = null;
  for (const key of keys) {
    if (key in maxDistances) maxDistance = Math.min(maxDistance ?? Math.PI, distance(spec[key], key, maxDistances[key]));
    else if (key in minDistances) minDistance = Math.max(minDistance, distance(spec[key], key, minDistances[key]));
    else if (key !== '$nearSphere') nodes.push(region(spec[key], key, path));
  }
  const bound = keys.find((key) => key in maxDistances || key in minDistances);
  if (!('$nearSphere' in spec)) {
    if (bound) fail('invalidQuery', `${bound} goes with $nearSphere.`);
    return nodes;
  }
  const point = queryPoint(spec.$nearSphere, '$nearSphere');
  return [{ op: 'near', path, point, minDistance, maxDistance, nearest: true }, ...nodes];
}
