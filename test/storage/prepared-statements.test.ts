// PostgreSQL runs its hottest lookups (get-by-id, session) as named prepared statements
// (src/storage/postgres/prepared.ts): parsed and planned once per connection. This holds that they
// are prepared by name and still answer as before; test/storage/get-by-id-paths.test.ts and the
// account store's conformance suite hold the answers themselves. SQLite keeps its own statement cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { freshPostgresDatabase, storeKind } from '../helpers/databases.ts';
import { openPostgresStore } from '../../src/storage/postgres/open.ts';
import { freshApp } from './stores.ts';
import { ShapeNames } from '../../src/storage/postgres/prepared.ts';
import type { FindQuery } from '../../src/objects/types.ts';

test('get-by-id and session lookups run as named statements on PostgreSQL', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  const database = await freshPostgresDatabase();
  // One connection, so the statement catalogue read below is the lookups' own session's.
  const store = await openPostgresStore({ url: database.url, poolSize: 1 });
  try {
    const appId = await freshApp(store);
    const object = { className: 'Note', objectId: 'note00000000000000000001', createdAt: 1, updatedAt: 1, acl: null, data: { n: 1 } };
    assert.equal((await store.insertObject(appId, object)).ok, true);
    for (let i = 0; i < 3; i++) {
      const ref = { appId, className: 'Note', objectId: object.objectId };
      const [mine, master] = await Promise.all([store.getObject(ref, ['*', 'u1']), store.getObject(ref, null)]);
      assert.deepEqual(mine?.data, { n: 1 });
      assert.deepEqual(master?.data, { n: 1 });
      assert.equal(await store.accounts.userBySession(appId, `digest-${i}`), null);
    }
    const { rows } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`.execute((store as unknown as { db: never }).db);
    assert.deepEqual(rows.map((row) => row.name), ['roost_object_lookups', 'roost_session_lookups']);
  } finally {
    await store.close();
    await database.drop();
  }
});

test('a page shape is named after its third run, at most maxShapes of them', () => {
  const shapes = new ShapeNames(3, 2, 10);
  assert.equal(shapes.nameOf('a'), undefined);
  assert.equal(shapes.nameOf('a'), undefined);
  assert.equal(shapes.nameOf('a'), 'roost_shape_0');
  assert.equal(shapes.nameOf('a'), 'roost_shape_0');
  for (let i = 0; i < 3; i++) shapes.nameOf('b');
  assert.equal(shapes.nameOf('b'), 'roost_shape_1');
  // Past maxShapes a text stays unnamed however often it runs; the named ones keep their names.
  for (let i = 0; i < 5; i++) assert.equal(shapes.nameOf('c'), undefined);
  assert.equal(shapes.nameOf('a'), 'roost_shape_0');
});

test('query pages, counts and include reads answer alike before and after their shape is a named statement on PostgreSQL', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  const database = await freshPostgresDatabase();
  const store = await openPostgresStore({ url: database.url, poolSize: 1 });
  try {
    const appId = await freshApp(store);
    for (let i = 0; i < 30; i++) {
      const data = { group: i % 3, score: (i * 7) % 11, tags: i % 4 === 0 ? [i % 3, 'x'] : 'x' };
      const acl = i % 5 === 0 ? { u1: { read: true, write: true } } : null;
      const object = { className: 'Note', objectId: `note${String(i).padStart(20, '0')}`, createdAt: 1000 + (i % 7), updatedAt: 1000, acl, data };
      assert.equal((await store.insertObject(appId, object)).ok, true);
    }
    const queries: Array<Omit<FindQuery, 'readers'>> = [
      { where: { op: 'eq', path: ['group'], value: 1 }, order: [], limit: 5, skip: 0 },
      { where: { op: 'eq', path: ['tags'], value: 2 }, order: [], limit: 5, skip: 0 },
      { where: { op: 'gte', path: ['score'], value: 4 }, order: [{ path: ['score'], descending: true }], limit: 7, skip: 2 },
      { where: { op: 'in', path: ['group'], values: [0, 2] }, order: [{ path: ['createdAt'], descending: false }], limit: 9, skip: 0 },
    ];
    for (const readers of [['*'], ['*', 'u1'], null] as const) {
      for (const query of queries) {
        const runs = [];
        for (let run = 0; run < 5; run++) runs.push(await store.findObjects(appId, 'Note', { ...query, readers: readers === null ? null : [...readers] }));
        assert.ok(runs[0].length > 0);
        for (const later of runs.slice(1)) assert.deepEqual(later, runs[0]);
        const counts = [];
        for (let run = 0; run < 5; run++) counts.push(await store.countObjects(appId, 'Note', query.where, readers === null ? null : [...readers]));
        assert.deepEqual(counts, Array(5).fill(counts[0]));
      }
      const ids = ['note00000000000000000000', 'note00000000000000000005', 'note00000000000000000007', 'missing'];
      const reads = [];
      for (let run = 0; run < 5; run++) reads.push(await store.getObjects(appId, 'Note', ids, readers === null ? null : [...readers]));
      assert.equal(reads[0].length, readers?.length === 1 ? 1 : 3);
      for (const later of reads.slice(1)) assert.deepEqual(later, reads[0]);
    }
    const { rows } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE name LIKE 'roost_shape_%'`.execute((store as unknown as { db: never }).db);
    // Each query's page and count, and the include level's read, for each of the three reader sets; the
    // counts of the two equalities are one shape (containment binds the whole document, path included).
    assert.equal(rows.length, (queries.length * 2 - 1 + 1) * 3);
  } finally {
    await store.close();
    await database.drop();
  }
});
