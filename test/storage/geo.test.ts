// Geo queries read objects_geo_cell_idx (migration 0019): a $nearSphere with a bound and a $within $box are
// seeks of the index under the class and field, one a band of latitude, each reading its range of longitude,
// not a read of the whole class (SQLite without statistics: objects_geo_idx's latitude range, migration 0007); and migration 0007 fills the columns of objects stored before it. Run on the database
// the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import type { JsonObject, Where } from '../../src/objects/types.ts';
import { findStatement } from '../../src/storage/sql/where.ts';
import { insertRows, objectSelect, toRow } from '../../src/storage/sql/object-row.ts';
import { objectsGeo } from '../../src/storage/sql/migrations/0007_objects_geo.ts';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';
import { freshApp, useStore } from './stores.ts';

const store = useStore();
const dbOf = () => (store() as unknown as { db: Kysely<any> }).db;
const dialect = () => (store().kind === 'postgres' ? postgresDialect : sqliteDialect);
const point = (latitude: number, longitude: number) => ({ __type: 'GeoPoint', latitude, longitude });

/** The plan of the page findObjects reads, as text: EXPLAIN on PostgreSQL, EXPLAIN QUERY PLAN on SQLite. */
async function planOf(appId: string, where: Where): Promise<string> {
  const scope = { dialect: dialect(), appId, className: 'Geo', readers: ['*'] };
  const query = findStatement(scope, objectSelect, { where, order: [], limit: 20, skip: 0 });
  if (store().kind === 'sqlite') {
    const { rows } = await sql<{ detail: string }>`EXPLAIN QUERY PLAN ${query}`.execute(dbOf());
    return rows.map((row) => row.detail).join('\n');
  }
  const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${query}`.execute(dbOf());
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

test('a bounded $nearSphere and a $within $box seek bands of objects_geo_cell_idx, not the class', async () => {
  const appId = await freshApp(store());
  // 5,000 points on a 50 × 100 grid over a region 1° by 0.5°, and as many objects of the class without one.
  for (let batch = 0; batch < 10; batch++) {
    const rows = Array.from({ length: 1000 }, (_, j) => {
      const i = batch * 1000 + j;
      const data: JsonObject = i % 2 === 0 ? { location: point(39 + (i % 100) / 100, 116 + Math.floor(i / 100) / 100), n: i } : { n: i };
      return toRow(appId, { className: 'Geo', objectId: `g${String(i).padStart(8, '0')}`, createdAt: i, updatedAt: i, acl: null, data });
    });
    await insertRows(dialect(), rows).execute(dbOf());
  }
  if (store().kind === 'postgres') await sql`ANALYZE objects`.execute(dbOf());
  const near: Where = { op: 'near', path: ['location'], point: { latitude: 39.5, longitude: 116.5 }, minDistance: 0, maxDistance: 2 / 6371, nearest: true };
  const box: Where = { op: 'geoBox', path: ['location'], south: 39.4, north: 39.45, west: 116.4, east: 116.42 };
  if (store().kind === 'sqlite') {
    // Without statistics SQLite reads 0007's latitude range (it prices the bands above the class in creation order).
    for (const [label, where] of [['near', near], ['box', box]] as const) {
      const plan = await planOf(appId, where);
      assert.ok(plan.includes('objects_geo_idx (app_id=? AND class_name=? AND geo_field=? AND geo_lat>? AND geo_lat<?)'), `${label}:\n${plan}`);
    }
    // With them (an import runs ANALYZE), the bands.
    await sql`ANALYZE objects`.execute(dbOf());
    for (const statement of sqliteDialect.afterAnalyze) await statement.execute(dbOf());
  }
  for (const [label, where] of [['near', near], ['box', box]] as const) {
    const plan = await planOf(appId, where);
    if (store().kind === 'sqlite') {
      assert.ok(plan.includes('objects_geo_cell_idx (app_id=? AND class_name=? AND geo_field=? AND <expr>=? AND geo_lng>? AND geo_lng<?)'), `${label}:\n${plan}`);
    } else {
      assert.match(plan, /Index Scan using objects_geo_cell_idx|Bitmap Index Scan on objects_geo_cell_idx/, `${label}:\n${plan}`);
      assert.match(plan, /Index Cond: .*floor\(\(geo_lat \* '100'::double precision\)\) = ANY .*geo_lng >=/, `${label}: the bands and the longitude range are index conditions:\n${plan}`);
      assert.doesNotMatch(plan, /Seq Scan/, `${label}:\n${plan}`);
    }
  }
  // A box taller than 64 bands reads their range, still under the class and field.
  const tall: Where = { op: 'geoBox', path: ['location'], south: 39, north: 39.99, west: 116.4, east: 116.42 };
  const tallPlan = await planOf(appId, tall);
  if (store().kind === 'sqlite') assert.ok(tallPlan.includes('objects_geo_cell_idx (app_id=? AND class_name=? AND geo_field=? AND <expr>>? AND <expr><?)'), tallPlan);
  else assert.match(tallPlan, /Index Cond: .*floor\(\(geo_lat \* '100'::double precision\)\) >=/, tallPlan);
  // The page itself: what the plan reads is the right answer (the HTTP tests hold it to a brute force).
  const found = await store().findObjects(appId, 'Geo', { where: near, order: [], limit: 3, skip: 0, readers: ['*'] });
  // Latitudes step 0.02° (even rows), longitudes 0.01°: the nearest is the center, then its east and west neighbours.
  const located = found.map((o) => o.data.location as { latitude: number; longitude: number });
  assert.deepEqual(located[0], point(39.5, 116.5));
  assert.deepEqual(located.slice(1).map((p) => p.longitude).sort(), [116.49, 116.51]);
});

test('migration 0007 gives objects stored before it their GeoPoint columns', async () => {
  const appId = await freshApp(store());
  const db = dbOf();
  const rows: Array<{ id: string; data: JsonObject }> = [
    { id: 'one', data: { name: 'x', location: point(10, 20) } },
    { id: 'two', data: { zeta: point(1, 2), alpha: point(3, 4) } },
    { id: 'text', data: { note: 'GeoPoint', kind: { __type: 'GeoPoint', latitude: 'n', longitude: 1 } } },
    { id: 'none', data: { n: 1 } },
  ];
  for (const row of rows) {
    const object = { className: 'Old', objectId: row.id, createdAt: 1, updatedAt: 1, acl: null, data: row.data };
    // As a row written before 0007: no GeoPoint columns.
    await insertRows(dialect(), [{ ...toRow(appId, object), geo_field: null, geo_lat: null, geo_lng: null }]).execute(db);
  }
  const fill = objectsGeo[store().kind].find((statement) => statement.startsWith('UPDATE'));
  assert.ok(fill);
  await sql.raw(fill).execute(db);
  const { rows: filled } = await sql<{ id: string; geo_field: string | null; geo_lat: number | null; geo_lng: number | null }>`
    SELECT id, geo_field, geo_lat, geo_lng FROM objects WHERE app_id = ${appId} ORDER BY id`.execute(db);
  assert.deepEqual(
    filled.map((r) => ({ ...r, geo_lat: r.geo_lat === null ? null : Number(r.geo_lat), geo_lng: r.geo_lng === null ? null : Number(r.geo_lng) })),
    [
      { id: 'none', geo_field: null, geo_lat: null, geo_lng: null },
      { id: 'one', geo_field: 'location', geo_lat: 10, geo_lng: 20 },
      { id: 'text', geo_field: null, geo_lat: null, geo_lng: null },
      { id: 'two', geo_field: 'alpha', geo_lat: 3, geo_lng: 4 },
    ],
  );
});
