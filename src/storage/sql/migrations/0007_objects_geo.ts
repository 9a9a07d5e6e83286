import type { Migration } from './migrate.ts';

/**
 * Geo queries ($nearSphere, $within): an object's GeoPoint field (it has at most one) and its
 * coordinates in columns (written by src/storage/sql/object-row.ts), and a B-tree index on them
 * under the class, which src/storage/sql/geo.ts reads as a latitude range with the longitude tested
 * in the index. Objects stored before get the columns from their data here (the first GeoPoint
 * field by name, as geoColumns chooses); only rows whose text names a GeoPoint are rewritten.
 */
const index = `CREATE INDEX IF NOT EXISTS objects_geo_idx ON objects (app_id, class_name, geo_field, geo_lat, geo_lng)
  WHERE geo_field IS NOT NULL`;

export const objectsGeo: Migration = {
  sqlite: [
    'ALTER TABLE objects ADD COLUMN geo_field TEXT',
    'ALTER TABLE objects ADD COLUMN geo_lat REAL',
    'ALTER TABLE objects ADD COLUMN geo_lng REAL',
    // CASE, not AND: json_extract of a value that is no object (a string) is an error, whatever the order.
    `UPDATE objects SET (geo_field, geo_lat, geo_lng) = (
       SELECT key, json_extract(value, '$.latitude'), json_extract(value, '$.longitude') FROM json_each(objects.data)
       WHERE CASE WHEN type = 'object' THEN json_extract(value, '$.__type') = 'GeoPoint'
         AND json_type(value, '$.latitude') IN ('integer', 'real') AND json_type(value, '$.longitude') IN ('integer', 'real') ELSE 0 END
       ORDER BY key LIMIT 1)
     WHERE instr(data, '"GeoPoint"') > 0`,
    index,
  ],
  postgres: [
    `ALTER TABLE objects ADD COLUMN IF NOT EXISTS geo_field TEXT, ADD COLUMN IF NOT EXISTS geo_lat DOUBLE PRECISION,
       ADD COLUMN IF NOT EXISTS geo_lng DOUBLE PRECISION`,
    `UPDATE objects o SET (geo_field, geo_lat, geo_lng) = (
       SELECT key, (value ->> 'latitude')::double precision, (value ->> 'longitude')::double precision FROM jsonb_each(o.data)
       WHERE jsonb_typeof(value) = 'object' AND value ->> '__type' = 'GeoPoint'
         AND jsonb_typeof(value -> 'latitude') = 'number' AND jsonb_typeof(value -> 'longitude') = 'number'
       ORDER BY key COLLATE "C" LIMIT 1)
     WHERE strpos(o.data::text, '"GeoPoint"') > 0`,
    index,
  ],
};
