// Which page and count statements run as named statements on PostgreSQL (where.ts pageStatement): only a page whose
// whole scope is written into its text (a lone equality of one value in insertion order, with the public readers or
// the master key), whose generic plan reads the declared index. Named, any other shape could be moved by PostgreSQL
// to its generic plan after five runs, and that plan, with the application and class bound, can read no declared
// (partial) index. Measured with a class of 100,000 objects beside 1,000 small classes (generic_plans of
// pg_prepared_statements after 9 runs; forced plans with plan_cache_mode): a count of a range flipped, 0.7 -> 54 ms;
// a count of an equality, 3.6 -> 9 ms; a page of a string range ordered by it, 61 -> 77 ms (the bug of 2a8b413 for
// $inQuery: 2 s a page). A lone equality with a user's readers (roles) or an $in kept custom plans there, but their
// generic plans sort all of a value's matches (1.6 against 0.06 ms, 27 against 15 ms) and would be taken on other data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type RawBuilder } from 'kysely';
import { storeKind } from '../helpers/databases.ts';
import { freshApp, withOneConnectionStore } from './stores.ts';
import { parseOrder, parseWhere } from '../../src/objects/query.ts';
import type { Readers } from '../../src/objects/types.ts';

type Db = Parameters<Parameters<typeof withOneConnectionStore>[0]>[1];

/** The named page shapes of the store's one connection, with how many runs took their generic plan. */
async function namedShapes(db: Db) {
  return (await sql<{ name: string; statement: string; generic_plans: number }>`SELECT name, statement, generic_plans FROM pg_prepared_statements
    WHERE name LIKE 'roost_shape_%'`.execute(db)).rows;
}

/** The generic plan of a named shape, EXPLAINed with `args` (values of the right types: the plan is the same for any). */
async function genericPlan(db: Db, name: string, args: RawBuilder<unknown>): Promise<string> {
  await sql`SET plan_cache_mode = force_generic_plan`.execute(db);
  const plan = (await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE ${sql.raw(name)}(${args})`.execute(db)).rows.map((line) => line['QUERY PLAN']).join('\n');
  await sql`RESET plan_cache_mode`.execute(db);
  return plan;
}

test('only a page planned alike for every value is a named statement on PostgreSQL; counts and other pages answer alike unnamed', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    // A class of 20,000 beside 300 small ones: a generic plan estimates a bound class as the average one. At this
    // size the two counts below flipped to their generic plans (0.5 -> 11 ms, 2 -> 8 ms) before pageStatement.
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Big', lpad(to_hex(i), 24, '0'), i, i,
        jsonb_build_object('group', i % 100, 'score', (i * 37) % 20000, 'name', 'n' || (i * 7919 % 20000)),
        CASE WHEN i % 10 = 1 THEN '{role:admins}'::text[] WHEN i % 10 = 2 THEN '{u1}'::text[] ELSE '{*}'::text[] END
      FROM generate_series(1, 20000) AS i`.execute(db);
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Small' || (i % 300), lpad(to_hex(i), 24, '0'), i, i, jsonb_build_object('group', i % 7, 'score', i), '{*}'
      FROM generate_series(1, 6000) AS i`.execute(db);
    for (const [name, field] of [['byGroup', 'group'], ['byScore', 'score'], ['byName', 'name']]) {
      assert.ok(await store.classIndexes.create(appId, 'Big', { name, keys: [{ path: [field], descending: false }], unique: false }));
      await store.classIndexes.idle();
    }
    const shapes: Array<{ where: (run: number) => unknown; order?: string; count?: boolean }> = [
      { where: (run) => ({ group: run }) },
      { where: (run) => ({ group: run }), count: true },
      { where: (run) => ({ score: { $gte: 19500 - run } }), count: true },
      { where: (run) => ({ name: { $gte: `n${run}` } }), order: 'name' },
      // Bounds spread over the scores (0-19,999), as random ones are: PostgreSQL takes the generic plan when it is priced
      // below the custom plans' average, and a bound near the bottom (most of the class) prices a custom plan lowest.
      { where: (run) => ({ score: { $gte: 3500 * run } }), order: 'score' },
      { where: (run) => ({ group: { $in: [run, run + 1] } }) },
      { where: (run) => ({ $relatedTo: { object: { __type: 'Pointer', className: 'Owner', objectId: `ow${run}` }, key: 'likes' } }) },
    ];
    const readerSets: Readers[] = [['*'], ['*', 'u1'], null];
    for (const shape of shapes) {
      for (const readers of readerSets) {
        const answers = [];
        // Twice each value: the second pass runs the shape past its sixth run, where a named one may take its generic plan.
        for (let run = 0; run < 12; run++) {
          const where = parseWhere(shape.where(run % 6));
          answers.push(shape.count
            ? await store.countObjects(appId, 'Big', where, readers)
            : (await store.findObjects(appId, 'Big', { where, order: shape.order ? parseOrder(shape.order) : [], limit: 20, skip: 0, readers })).map((o) => o.objectId));
        }
        assert.deepEqual(answers.slice(6), answers.slice(0, 6), JSON.stringify({ shape: shape.where(0), readers }));
      }
    }
    const rows = await namedShapes(db);
    // The lone equality and the rising numeric range ordered by its field (where.ts risingRange), each with the public
    // readers and with the master key; not with a user's readers, and nothing else.
    assert.equal(rows.length, 4, JSON.stringify(rows.map((row) => row.statement)));
    for (const row of rows) assert.match(row.statement, /o\.class_name = 'Big'/);
    assert.equal(rows.filter((row) => /count\(\*\)/.test(row.statement)).length, 0);
    const ranges = rows.filter((row) => /'\{"score"\}'/.test(row.statement));
    assert.equal(ranges.length, 2);
    for (const row of ranges) {
      // Planned once: before jsonCompare's IS TRUE edge the range was guessed at 0.5% of the class, its generic plan
      // priced above the custom ones, and the page planned at every run (fails on that text).
      assert.ok(Number(row.generic_plans) > 0, `planned at each run: ${row.statement}`);
      // That plan reads the declared index in order from the bound: no bitmap of the whole range, no sort of it.
      const plan = await genericPlan(db, row.name, sql`'5000'`);
      assert.match(plan, /Index Scan using cix_/, plan);
      assert.doesNotMatch(plan, /Bitmap|(^|->)\s*Sort\s+\(/m, plan);
    }
  });
});

// A lone $nearSphere within a distance, nearest first (where.ts boundedNearest), is named too: its generic plan seeks
// the box's latitude bands in objects_geo_cell_idx for any point. Its pages must answer as the unnamed statement's,
// past the sixth named run, beside small classes with points (a generic plan with the class bound would take the
// average one).
test('a bounded nearest-first page is planned once and answers alike', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    const point = (lat: RawBuilder<unknown>, lng: RawBuilder<unknown>) => sql`jsonb_build_object('location', jsonb_build_object('__type', 'GeoPoint', 'latitude', ${lat}, 'longitude', ${lng}))`;
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers, geo_field, geo_lat, geo_lng)
      SELECT ${appId}, 'Places', lpad(to_hex(i), 24, '0'), i, i, ${point(sql`lat`, sql`lng`)},
        CASE WHEN i % 5 = 0 THEN '{u1}'::text[] ELSE '{*}'::text[] END, 'location', lat, lng
      FROM (SELECT i, 30.9 + (i * 7919 % 20000) / 100000.0 AS lat, 121.0 + (i * 104729 % 20000) / 100000.0 AS lng
        FROM generate_series(1, 20000) AS i) p`.execute(db);
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers, geo_field, geo_lat, geo_lng)
      SELECT ${appId}, 'Small' || (i % 300), lpad(to_hex(i), 24, '0'), i, i, ${point(sql`31.0`, sql`121.1`)}, '{*}', 'location', 31.0, 121.1
      FROM generate_series(1, 6000) AS i`.execute(db);
    await sql`ANALYZE objects`.execute(db);
    const readerSets: Readers[] = [['*'], null, ['*', 'u1']];
    for (const readers of readerSets) {
      const answers = [];
      for (let run = 0; run < 16; run++) {
        // The same fraction of a band at every point: one text (five bands a box).
        const where = parseWhere({ location: { $nearSphere: { __type: 'GeoPoint', latitude: 31.005 + 0.01 * (run % 8), longitude: 121.05 + 0.01 * (run % 8) }, $maxDistanceInKilometers: 2 } });
        answers.push((await store.findObjects(appId, 'Places', { where, order: [], limit: 20, skip: 0, readers })).map((o) => o.objectId));
      }
      assert.deepEqual(answers.slice(8), answers.slice(0, 8), JSON.stringify(readers));
      assert.ok(answers.every((page) => page.length === 20));
    }
    const rows = await namedShapes(db);
    // With the public readers and with the master key; a user's readers stay unnamed.
    assert.equal(rows.length, 2, JSON.stringify(rows.map((row) => row.statement)));
    for (const row of rows) {
      assert.ok(Number(row.generic_plans) > 0, `planned at each run: ${row.statement}`);
      const types = (await sql<{ parameter_types: string }>`SELECT parameter_types::text FROM pg_prepared_statements WHERE name = ${row.name}`.execute(db)).rows[0].parameter_types;
      const plan = await genericPlan(db, row.name, sql.join(types.split(',').map((_, i) => (i === 0 ? sql.lit('location') : sql.lit(31)))));
      assert.match(plan, /Index Scan using objects_geo_cell_idx/, plan);
      assert.match(plan, /Index Cond: .*floor\(\(geo_lat \* '100'::double precision\)\) = ANY/, plan);
    }
  });
});

// A lone $inQuery in insertion order whose subquery is a lone equality (where.ts pinnableInQuery) is named with its
// whole scope written in: its generic plan reads the subquery's declared index and probes the pointer's. With the
// application and class bound, the generic plan PostgreSQL took after five runs read both classes whole (2 s a page
// at 100,000 objects a class, 2a8b413); the answers must equal the unnamed statement's past the sixth named run.
test('a lone $inQuery of a lone equality is planned once, reads both declared indexes, and answers alike', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    const postId = sql`'p' || lpad(to_hex(i), 23, '0')`;
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Post', ${postId}, i, i, jsonb_build_object('category', i % 200), '{*}'
      FROM generate_series(1, 20000) AS i`.execute(db);
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Comment', 'c' || lpad(to_hex(i), 23, '0'), i, i,
        jsonb_build_object('post', jsonb_build_object('__type', 'Pointer', 'className', 'Post', 'objectId', 'p' || lpad(to_hex(1 + (i * 7919) % 20000), 23, '0'))),
        CASE WHEN i % 3 = 0 THEN '{u1}'::text[] ELSE '{*}'::text[] END
      FROM generate_series(1, 20000) AS i`.execute(db);
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Small' || (i % 300), 's' || lpad(to_hex(i), 23, '0'), i, i,
        jsonb_build_object('category', i % 7, 'post', jsonb_build_object('__type', 'Pointer', 'className', 'Post', 'objectId', 'p1')), '{*}'
      FROM generate_series(1, 6000) AS i`.execute(db);
    assert.ok(await store.classIndexes.create(appId, 'Post', { name: 'byCategory', keys: [{ path: ['category'], descending: false }], unique: false }));
    await store.classIndexes.idle();
    assert.ok(await store.classIndexes.create(appId, 'Comment', { name: 'byPost', keys: [{ path: ['post', 'objectId'], descending: false }], unique: false }));
    await store.classIndexes.idle();
    await sql`ANALYZE objects`.execute(db);
    const readerSets: Readers[] = [['*'], null, ['*', 'u1']];
    for (const readers of readerSets) {
      const answers = [];
      for (let run = 0; run < 16; run++) {
        const where = parseWhere({ post: { $inQuery: { className: 'Post', where: { category: run % 8 } } } });
        answers.push((await store.findObjects(appId, 'Comment', { where, order: [], limit: 20, skip: 0, readers })).map((o) => o.objectId));
      }
      assert.deepEqual(answers.slice(8), answers.slice(0, 8), JSON.stringify(readers));
      assert.ok(answers.every((page) => page.length === 20), JSON.stringify(answers.map((page) => page.length)));
    }
    const rows = await namedShapes(db);
    // With the public readers and with the master key; a user's readers stay unnamed.
    assert.equal(rows.length, 2, JSON.stringify(rows.map((row) => row.statement)));
    for (const row of rows) {
      assert.ok(Number(row.generic_plans) > 0, `planned at each run: ${row.statement}`);
      const plan = await genericPlan(db, row.name, sql`'3', '{"category":[3]}', '"Post"'`);
      assert.doesNotMatch(plan, /Seq Scan/, plan);
      assert.equal(plan.match(/(Index Scan using|Bitmap Index Scan on) cix_/g)?.length, 3, plan);
    }
  });
});
