// An import's statistics reach a server that was already running on the database (SQLite: a connection loads
// sqlite_stat1 with the schema only, and new rows in it are no schema change, so the import's dialect.afterAnalyze
// changes the schema once). Without that, such a server planned $nearSphere pages with no statistics until it
// restarted: 0007's whole latitude range, about twice the page's time (bench/RESULTS.md, Geo).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import type { JsonObject, Where } from '../../src/objects/types.ts';
import type { Store } from '../../src/storage/store.ts';
import { findStatement } from '../../src/storage/sql/where.ts';
import { insertRows, objectSelect, toRow } from '../../src/storage/sql/object-row.ts';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';
import { testDatabase } from '../helpers/databases.ts';
import { freshApp } from './stores.ts';

const database = await testDatabase();
const server = await database.open();
after(async () => {
  await server.close();
  await database.drop();
});
const dbOf = (store: Store) => (store as unknown as { db: Kysely<any> }).db;
const dialect = database.kind === 'postgres' ? postgresDialect : sqliteDialect;

async function planOf(store: Store, appId: string, where: Where): Promise<string> {
  const query = findStatement({ dialect, appId, className: 'Geo', readers: ['*'] }, objectSelect, { where, order: [], limit: 20, skip: 0 });
  if (database.kind === 'sqlite') {
    // Prepared afresh on the store's connection: a statement the store keeps by text would answer the plan it was
    // prepared with, as an EXPLAIN never opens the file to see the schema changed.
    const connection = (store as unknown as { database: Database.Database }).database;
    const { sql: text, parameters } = query.compile(dbOf(store));
    return connection.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...parameters).map((row) => (row as { detail: string }).detail).join('\n');
  }
  const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${query}`.execute(dbOf(store));
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

test("a running server plans with the statistics another process's import wrote", async () => {
  const appId = await freshApp(server);
  // 5,000 points on a 50 × 100 grid over 1° by 0.5°, and as many objects of the class without one.
  for (let batch = 0; batch < 10; batch++) {
    const rows = Array.from({ length: 1000 }, (_, j) => {
      const i = batch * 1000 + j;
      const data: JsonObject = i % 2 === 0 ? { location: { __type: 'GeoPoint', latitude: 39 + (i % 100) / 100, longitude: 116 + Math.floor(i / 100) / 100 }, n: i } : { n: i };
      return toRow(appId, { className: 'Geo', objectId: `g${String(i).padStart(8, '0')}`, createdAt: i, updatedAt: i, acl: null, data });
    });
    await insertRows(dialect, rows).execute(dbOf(server));
  }
  const near: Where = { op: 'near', path: ['location'], point: { latitude: 39.5, longitude: 116.5 }, minDistance: 0, maxDistance: 2 / 6371, nearest: true };
  if (database.kind === 'sqlite') {
    // The server's connection has no statistics of these rows yet: 0007's latitude range.
    assert.match(await planOf(server, appId, near), /objects_geo_idx \(app_id=\? AND class_name=\? AND geo_field=\? AND geo_lat>\? AND geo_lat<\?\)/);
  }
  // What `roost import` does at its end, from a process of its own.
  const importer = await database.open();
  try {
    await importer.ops.finishImport();
  } finally {
    await importer.close();
  }
  // The server's next statement (not an EXPLAIN, which SQLite plans without opening the file) finds the schema
  // changed and reloads it with the statistics; its cached statements are prepared again.
  const found = await server.findObjects(appId, 'Geo', { where: near, order: [], limit: 1, skip: 0, readers: ['*'] });
  assert.deepEqual(found[0]?.data.location, { __type: 'GeoPoint', latitude: 39.5, longitude: 116.5 });
  const plan = await planOf(server, appId, near);
  if (database.kind === 'sqlite') {
    assert.ok(plan.includes('objects_geo_cell_idx (app_id=? AND class_name=? AND geo_field=? AND <expr>=? AND geo_lng>? AND geo_lng<?)'), plan);
  } else {
    assert.match(plan, /Index Scan using objects_geo_cell_idx|Bitmap Index Scan on objects_geo_cell_idx/, plan);
  }
});
