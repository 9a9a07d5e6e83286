// Pages of one named shape made together on PostgreSQL go as one statement (src/storage/postgres/page-batcher.ts,
// PageBatcher): each page a LATERAL subquery of its values. Their answers must be the answers of the same pages made
// one at a time (values of every kind, each readers set, past the sixth run where the statement takes its generic
// plan), and that plan must read the declared index inside each page as the page alone does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { storeKind } from '../helpers/databases.ts';
import { freshApp, withOneConnectionStore } from './stores.ts';
import { parseOrder, parseWhere } from '../../src/objects/query.ts';
import type { FindQuery, Readers } from '../../src/objects/types.ts';
import { batchedPages } from '../../src/storage/postgres/page-batcher.ts';

const skip = storeKind !== 'postgres' && 'PostgreSQL only';

type OneConnectionStore = Parameters<Parameters<typeof withOneConnectionStore>[0]>[0];

/** The pages made one at a time, then made all together nine times (past the batch's sixth run, where it may take its generic plan), each time the same. */
async function togetherAsAlone(store: OneConnectionStore, appId: string, className: string, queries: FindQuery[]) {
  const alone = [];
  for (const query of queries) alone.push(await store.findObjectsJson(appId, className, query));
  assert.ok(alone.some((page) => page.length === 20), 'some pages are full');
  for (let run = 0; run < 9; run++) {
    const together = await Promise.all(queries.map((query) => store.findObjectsJson(appId, className, query)));
    assert.deepEqual(together, alone, `run ${run}, readers ${JSON.stringify(queries[0].readers)}`);
  }
  return alone;
}

test('a page statement is rewritten only where each parameter is cast and outside its literals', () => {
  const columns = 'SELECT o.id, o.created_at, o.updated_at, o.data::text AS data FROM objects o';
  const batched = batchedPages(`/* prepared-shape */ ${columns} WHERE o.class_name = 'a$1''$2' AND "x$3" = $1::jsonb AND o.readers && $2::text[] LIMIT 20`);
  assert.equal(batched, `/* prepared-shape */ SELECT b.i::int AS page, p.ids, p.rest FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS b(v, i)
    CROSS JOIN LATERAL (SELECT (b.v ->> 0)::jsonb AS p1, (b.v ->> 1)::text[] AS p2 OFFSET 0) v
    CROSS JOIN LATERAL (SELECT json_agg(q.id)::text AS ids, string_agg(q.created_at || ',' || q.updated_at || ',' || q.data, chr(1)) AS rest
      FROM (${columns} WHERE o.class_name = 'a$1''$2' AND "x$3" = v.p1::jsonb AND o.readers && v.p2::text[] LIMIT 20) q) p`);
  assert.equal(batchedPages(`${columns} WHERE x = $1`), null);
  assert.equal(batchedPages(`${columns} WHERE x = $1::text AND y = $1::bigint`), null);
  assert.equal(batchedPages(`${columns} WHERE x = E'\\'' AND y = $1::text`), null);
  assert.equal(batchedPages(`${columns} WHERE y = $$x$$ AND z = $1::text`), null);
  // Other columns than a page's (an include level's rows carry their class): splitPages would drop them.
  assert.equal(batchedPages(`SELECT o.id, o.created_at, o.updated_at, o.data::text AS data, o.class_name AS class_name FROM objects o WHERE o.id = $1::text`), null);
});

test('pages of a named shape made together answer as the same pages made one at a time', { skip }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    // Values of every kind in `group` (numbers, strings needing escapes in JSON and SQL, booleans, null, arrays
    // holding them), a private row in ten, and numbers and others in `score`.
    const groups = [0, 1, 2, 2.5, -3, 'a', "it's", 'back\\slash', 'quote"d', 'é\u2028', 'ctl\u0001,x', true, false, null, [1, 'a'], [2], { k: 1 }];
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Big', lpad(to_hex(i), 24, '0'), i, i,
        jsonb_build_object('group', (${JSON.stringify(groups)}::jsonb) -> (i % ${groups.length}),
          'score', CASE WHEN i % 13 = 0 THEN to_jsonb('s' || i) ELSE to_jsonb((i * 37) % 2000) END),
        CASE WHEN i % 10 = 1 THEN '{u1}'::text[] ELSE '{*}'::text[] END
      FROM generate_series(1, 3000) AS i`.execute(db);
    for (const [name, field] of [['byGroup', 'group'], ['byScore', 'score']]) {
      assert.ok(await store.classIndexes.create(appId, 'Big', { name, keys: [{ path: [field], descending: false }], unique: false }));
      await store.classIndexes.idle();
    }
    const pages = (readers: Readers): FindQuery[] => [
      ...groups.filter((value) => !Array.isArray(value) && (value === null || typeof value !== 'object')).map((value) => ({ where: parseWhere({ group: value }), order: [], limit: 20, skip: 0, readers })),
      ...[0, 150, 1999, 2500, -1, 0.5].map((bound) => ({ where: parseWhere({ score: { $gte: bound } }), order: parseOrder('score'), limit: 20, skip: 0, readers })),
    ];
    for (const readers of [['*'], null, ['*', 'u1']] satisfies Readers[]) {
      const queries = pages(readers);
      await togetherAsAlone(store, appId, 'Big', queries);
    }
    const { rows } = await sql<{ name: string; statement: string; generic_plans: string; parameter_types: string }>`SELECT name, statement,
      generic_plans::text, parameter_types::text FROM pg_prepared_statements WHERE statement LIKE '%jsonb_array_elements%' ORDER BY name`.execute(db);
    // The equality and the rising range, each with the public readers and with the master key; a user's readers' pages are unnamed, so alone.
    assert.equal(rows.length, 4, JSON.stringify(rows.map((row) => row.statement)));
    for (const row of rows) {
      assert.ok(Number(row.generic_plans) > 0, `planned at each run: ${row.statement}`);
      await sql`SET plan_cache_mode = force_generic_plan`.execute(db);
      const plan = (await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE ${sql.raw(row.name)}('[["1","{\\"group\\":[1]}"]]')`.execute(db)).rows.map((line) => line['QUERY PLAN']).join('\n');
      await sql`RESET plan_cache_mode`.execute(db);
      assert.match(plan, /Nested Loop/, plan);
      // The declared index, probed with the page's own value (a parameter of the nested loop, read from its element).
      assert.match(plan, /Index (Only )?Scan using cix_\w+ on objects/, plan);
      assert.match(plan, /Index Cond: .*\(\(b\.v ->> 0\)\)::jsonb/, plan);
      assert.doesNotMatch(plan, /Seq Scan on objects/, plan);
    }
  });
});

// A lone lower bound on createdAt in creation order is named for any readers (where.ts risingCreation), so a user's pages,
// their roles resolved inside each page, are batched: the readers bound as text[] go in the batch's JSON as array literals
// (page-batcher.ts asText). A user id holding a comma, a quote and a backslash must stay one principal: read unquoted,
// `u"1,x\` would grant the rows of `x` too.
test('role-protected pages in creation order made together answer as the same pages made one at a time', { skip }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    const user = 'u"1,x\\';
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Docs', lpad(to_hex(i), 24, '0'), 1000 * i, 1000 * i, jsonb_build_object('n', i),
        (ARRAY['{role:R3}', '{role:Other}', '{x}', '{"u\\"1,x\\\\"}', '{*}', '{u1}'])[1 + i % 6]::text[]
      FROM generate_series(1, 20000) AS i`.execute(db);
    for (const [id, name] of [['r1', 'R1'], ['r2', 'R2'], ['r3', 'R3'], ['r4', 'Other']]) {
      await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
        VALUES (${appId}, '_Role', ${id}, 1, 1, ${JSON.stringify({ name })}::jsonb, '{*}')`.execute(db);
    }
    for (const [owner, key, targetClass, target] of [['r1', 'users', '_User', user], ['r2', 'roles', '_Role', 'r1'], ['r3', 'roles', '_Role', 'r2']]) {
      await sql`INSERT INTO relations (app_id, owner_class, owner_id, key, target_class, target_id) VALUES (${appId}, '_Role', ${owner}, ${key}, ${targetClass}, ${target})`.execute(db);
    }
    await sql`ANALYZE objects`.execute(db);
    const bounds = [0, 1000, 999_999, 15_000_000, 19_990_000, 21_000_000, 2_000_000.5];
    const queries = (readers: Readers): FindQuery[] => bounds.flatMap((bound) => [
      { where: parseWhere({ createdAt: { $gte: bound } }), order: parseOrder('createdAt'), limit: 20, skip: 0, readers },
      { where: parseWhere({ createdAt: { $gt: { __type: 'Date', iso: new Date(bound).toISOString() } } }), order: [], limit: 20, skip: 0, readers },
    ]);
    // 'u1,x': read unquoted it is two principals (a valid literal, so no failed batch to fall back from).
    for (const readers of [['*', user], ['*', 'u1,x'], ['*', 'u1'], ['*'], null] satisfies Readers[]) {
      const alone = await togetherAsAlone(store, appId, 'Docs', queries(readers));
      if (readers?.includes(user)) {
        // What the user reads: its own rows and its roles' (R3 through R1 and R2) and the public ones, never x's.
        const seen = alone[0].map((found) => Number(JSON.parse(found.dataJson).n) % 6);
        assert.deepEqual([...new Set(seen)].sort(), [0, 3, 4]);
      }
    }
    const { rows } = await sql<{ name: string; statement: string; generic_plans: string }>`SELECT name, statement, generic_plans::text
      FROM pg_prepared_statements WHERE statement LIKE '%jsonb_array_elements%' AND statement LIKE '%created_at" >=%' ORDER BY name`.execute(db);
    assert.ok(rows.some((row) => /roost_member_roles/.test(row.statement)), 'a user\'s pages are batched');
    for (const row of rows) {
      assert.ok(Number(row.generic_plans) > 0, `planned at each run: ${row.statement}`);
      await sql`SET plan_cache_mode = force_generic_plan`.execute(db);
      const plan = (await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE ${sql.raw(row.name)}('[["1000","{*}","a","{}"]]')`.execute(db)).rows.map((line) => line['QUERY PLAN']).join('\n');
      await sql`RESET plan_cache_mode`.execute(db);
      // Each page reads objects_created_id_idx in order from its own bound; no sort, no scan of the class. (In a class
      // of a few thousand the generic plan sorts a bitmap of the range instead: estimated as a third of the class, a
      // few hundred rows.)
      assert.match(plan, /Index Scan using objects_created_id_idx on objects o\s+\(.*\n\s+Index Cond: .*created_at >= \(*b\.v ->> 0\)+::bigint/, plan);
      assert.doesNotMatch(plan, /Seq Scan on objects|(^|->)\s*Sort\s+\(/m, plan);
    }
  });
});

// A bounded nearest-first page (where.ts boundedNearest) with its numbers typed in its text (geo.ts: `$n::float8`) is
// batched: each page's point, box and bands read from its element once (batchedPages' row `v`), the distances computed
// for the candidates its bands hold. Its pages must be the pages made alone, point by point, order and ties included.
test('nearest-first pages made together answer as the same pages made one at a time', { skip }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    const point = (lat: string, lng: string) => sql`jsonb_build_object('location', jsonb_build_object('__type', 'GeoPoint', 'latitude', ${sql.raw(lat)}, 'longitude', ${sql.raw(lng)}))`;
    // Points on a grid (ties of distance) and scattered ones; a private one in five.
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers, geo_field, geo_lat, geo_lng)
      SELECT ${appId}, 'Places', lpad(to_hex(i), 24, '0'), i, i, ${point('lat', 'lng')},
        CASE WHEN i % 5 = 0 THEN '{u1}'::text[] ELSE '{*}'::text[] END, 'location', lat, lng
      FROM (SELECT i, CASE WHEN i % 2 = 0 THEN 31 + (i % 40) / 1000.0 ELSE 30.9 + (i * 7919 % 20000) / 100000.0 END AS lat,
        CASE WHEN i % 2 = 0 THEN 121 + (i / 40 % 40) / 1000.0 ELSE 121.0 + (i * 104729 % 20000) / 100000.0 END AS lng
        FROM generate_series(1, 20000) AS i) p`.execute(db);
    await sql`ANALYZE objects`.execute(db);
    const points = Array.from({ length: 12 }, (_, i) => ({ latitude: 31.005 + 0.013 * (i % 6) + (i > 5 ? 0.0001 : 0), longitude: 121.01 + 0.011 * i }));
    const queries = (readers: Readers): FindQuery[] => points.flatMap((here) => [0.5, 2].map((km) => ({
      where: parseWhere({ location: { $nearSphere: { __type: 'GeoPoint', ...here }, $maxDistanceInKilometers: km } }), order: [], limit: 20, skip: 0, readers })));
    for (const readers of [['*'], null] satisfies Readers[]) {
      await togetherAsAlone(store, appId, 'Places', queries(readers));
    }
    const { rows } = await sql<{ name: string; statement: string; generic_plans: string; parameter_types: string }>`SELECT name, statement,
      generic_plans::text, parameter_types::text FROM pg_prepared_statements WHERE statement LIKE '%jsonb_array_elements%' AND statement LIKE '%geo_lat%' ORDER BY name`.execute(db);
    assert.ok(rows.length > 0, 'near pages are batched');
    for (const row of rows) {
      assert.ok(Number(row.generic_plans) > 0, `planned at each run: ${row.statement}`);
      await sql`SET plan_cache_mode = force_generic_plan`.execute(db);
      const plan = (await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE ${sql.raw(row.name)}('[]')`.execute(db)).rows.map((line) => line['QUERY PLAN']).join('\n');
      await sql`RESET plan_cache_mode`.execute(db);
      // Each page seeks its own bands in objects_geo_cell_idx; no scan of the class.
      assert.match(plan, /Index Scan using objects_geo_cell_idx on objects o/, plan);
      assert.doesNotMatch(plan, /Seq Scan on objects|Bitmap/, plan);
    }
  });
});
