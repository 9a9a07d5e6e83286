// PostgreSQL runs its hottest lookups (get-by-id, session) as named prepared statements
// (src/storage/postgres/prepared.ts): parsed and planned once per connection. This holds that they
// are prepared by name and still answer as before; test/storage/get-by-id-paths.test.ts and the
// account store's conformance suite hold the answers themselves. SQLite keeps its own statement cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { storeKind } from '../helpers/databases.ts';
import { freshApp, withOneConnectionStore } from './stores.ts';
import { ShapeNames } from '../../src/storage/postgres/prepared.ts';
import type { FindQuery } from '../../src/objects/types.ts';
import type { SqlDialect } from '../../src/storage/sql/dialect.ts';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { findStatement } from '../../src/storage/sql/where.ts';
import { objectSelect } from '../../src/storage/sql/object-row.ts';
import { parseOrder, parseWhere } from '../../src/objects/query.ts';

test('get-by-id and session lookups run as named statements on PostgreSQL', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
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
    const { rows } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`.execute(db);
    // With readers, and the master key's (which reads every row: no readers' clauses).
    assert.deepEqual(rows.map((row) => row.name), ['roost_object_lookups', 'roost_object_lookups_all', 'roost_session_lookups']);
  });
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
  await withOneConnectionStore(async (store, db) => {
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
    const { rows } = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE name LIKE 'roost_shape_%'`.execute(db);
    // The pages of the two lone equalities with the public readers and with the master key (their scope in their
    // text: where.ts pageStatement), and the include level's read for each of the three reader sets; no count,
    // range, $in or user's page (test/storage/page-plans.test.ts).
    assert.equal(rows.length, 2 * 2 + 3);
  });
});

// dialect.pinnedScope (src/storage/sql/where.ts, findStatement): a lone equality in insertion order names its
// application, class and public readers as literals, so PostgreSQL
// plans the shape once (a generic plan can use the declared partial index): the where page's database CPU went
// from ~550 to ~130 µs (bench/RESULTS.md, Objects). The pages must be those of the bound statement.
test('a page with its scope written into its text answers as the bound statement, and is planned once per shape on PostgreSQL', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    const other = await freshApp(store);
    // A class as the benchmark's (a field of scalars, 100 values), alone in the database: the public where page is
    // one named shape, planned once (a generic plan) after its first runs. (The expression's statistics are of the
    // whole table: where other classes hold arrays in a field of that name, the generic plan may cost more than the
    // custom ones and PostgreSQL keeps planning per run, as before.)
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Plain', lpad(to_hex(i), 24, '0'), i, i, jsonb_build_object('group', i % 100), '{*}' FROM generate_series(1, 20000) AS i`.execute(db);
    assert.ok(await store.classIndexes.create(appId, 'Plain', { name: 'byGroup', keys: [{ path: ['group'], descending: false }], unique: false }));
    await store.classIndexes.idle();
    for (let run = 0; run < 12; run++) {
      const page = await store.findObjects(appId, 'Plain', { where: parseWhere({ group: run }), order: [], limit: 20, skip: 0, readers: ['*'] });
      assert.equal(page.length, 20);
    }
    const { rows } = await sql<{ statement: string; generic_plans: string }>`SELECT statement, generic_plans::text FROM pg_prepared_statements
      WHERE name LIKE 'roost_shape_%' AND statement LIKE '%o.class_name = ''Plain''%'`.execute(db);
    assert.equal(rows.length, 1, JSON.stringify(rows));
    assert.ok(Number(rows[0].generic_plans) > 0, JSON.stringify(rows));
    // The same page read as stored (PostgresStore.foundJsonTuples: the driver's own query, rows as arrays) is named too.
    for (let run = 0; run < 12; run++) {
      const page = await store.findObjectsJson(appId, 'Plain', { where: parseWhere({ group: run }), order: [], limit: 20, skip: 0, readers: ['*'] });
      assert.deepEqual(page.map((one) => JSON.parse(one.dataJson)), Array.from({ length: 20 }, () => ({ group: run })));
    }
    const asStored = (await sql<{ statement: string; generic_plans: string }>`SELECT statement, generic_plans::text FROM pg_prepared_statements
      WHERE name LIKE 'roost_shape_%' AND statement LIKE '%o.class_name = ''Plain''%'`.execute(db)).rows;
    assert.equal(asStored.length, 2, JSON.stringify(asStored));
    assert.ok(asStored.every((row) => Number(row.generic_plans) > 0), JSON.stringify(asStored));
    for (const [app, className] of [[appId, 'Note'], [appId, 'Other'], [other, 'Note']] as const) {
      await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
        SELECT ${app}, ${className}, lpad(to_hex(i), 24, '0'), i % 97, i,
          jsonb_build_object('group', CASE WHEN i % 11 = 0 THEN jsonb_build_array(i % 7, 'x') ELSE to_jsonb(i % 7) END, 'score', (i * 37) % 1000),
          CASE WHEN i % 5 = 0 THEN '{u1}'::text[] ELSE '{*}'::text[] END
        FROM generate_series(1, 2000) AS i`.execute(db);
    }
    for (const [name, field] of [['byGroup', 'group'], ['byScore', 'score']]) {
      assert.ok(await store.classIndexes.create(appId, 'Note', { name, keys: [{ path: [field], descending: false }], unique: false }));
      await store.classIndexes.idle();
    }
    const bound: SqlDialect = { ...postgresDialect, pinnedScope: () => null };
    const queries = [
      { where: parseWhere({ group: 3 }), order: [], limit: 20, skip: 0 },
      { where: parseWhere({ group: { $in: [1, 4] } }), order: [], limit: 20, skip: 5 },
      { where: parseWhere({ score: { $gte: 500 } }), order: parseOrder('score'), limit: 20, skip: 0 },
      { where: parseWhere({ score: { $gt: 10, $lte: 400 } }), order: parseOrder('-score,createdAt'), limit: 30, skip: 3 },
    ];
    for (const readers of [['*'], ['*', 'u1'], null]) {
      for (const query of queries) {
        // A shape is named at its third run (ShapeNames); PostgreSQL weighs a generic plan from its sixth named run on.
        for (let run = 0; run < 12; run++) {
          const value = run % 7;
          const q = { ...query, where: JSON.parse(JSON.stringify(query.where).replace(/"value":(\d+)/g, (_, n) => `"value":${Number(n) + value}`)) };
          const ids = async (dialect: SqlDialect) =>
            (await sql<{ id: string }>`${findStatement({ dialect, appId, className: 'Note', readers }, objectSelect, q)}`.execute(db)).rows.map((row) => row.id);
          const expected = await ids(bound);
          assert.deepEqual(await ids(postgresDialect), expected, `${JSON.stringify(q)} readers ${JSON.stringify(readers)}`);
          assert.deepEqual((await store.findObjects(appId, 'Note', { ...q, readers })).map((o) => o.objectId), expected);
        }
      }
    }
  });
});
