import type { Migration } from './migrate.ts';

/**
 * Geo queries read a latitude band of 0.01° (about 1.1 km; `floor(geo_lat * 100)`, src/storage/sql/geo.ts
 * geoCells) before the longitude: a box of a few kilometres is a few seeks, each reading its longitude range,
 * where objects_geo_idx (0007) read every point of the box's whole latitude range and tested its longitude
 * (2,000 index entries for the 40 of a 2 km circle among 100,000 points over 2°). The latitude last, so the
 * exact range is tested in the index too. A box taller than geoCells' seeks reads a range of bands, as 0007 did.
 * SQLite keeps objects_geo_idx: without statistics (no import has run ANALYZE) its planner prices a list of
 * bands above reading the class in creation order for a $within page, and takes 0007's latitude range over
 * that; with statistics it takes the bands. PostgreSQL prices the bands above 0007's range: that index goes.
 */
const index = `CREATE INDEX IF NOT EXISTS objects_geo_cell_idx ON objects (app_id, class_name, geo_field, (floor(geo_lat * 100)), geo_lng, geo_lat)
  WHERE geo_field IS NOT NULL`;

export const objectsGeoCells: Migration = {
  sqlite: [index],
  postgres: [index, 'DROP INDEX IF EXISTS objects_geo_idx'],
};
