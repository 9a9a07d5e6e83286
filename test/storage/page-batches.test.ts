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

test('a page statement is rewritten only where each parameter is cast and outside its literals', () => {
  const batched = batchedPages(`/* prepared-shape */ SELECT o.id FROM objects o WHERE o.class_name = 'a$1''$2' AND "x$3" = $1::jsonb AND o.data @> $2::jsonb LIMIT 20`);
  assert.equal(batched, `/* prepared-shape */ SELECT b.i::int AS page, p.ids, p.rest FROM json_array_elements($1::json) WITH ORDINALITY AS b(v, i)
    CROSS JOIN LATERAL (SELECT json_agg(q.id)::text AS ids, string_agg(q.created_at || ',' || q.updated_at || ',' || q.data, chr(1)) AS rest
      FROM (SELECT o.id FROM objects o WHERE o.class_name = 'a$1''$2' AND "x$3" = (b.v ->> 0)::jsonb AND o.data @> (b.v ->> 1)::jsonb LIMIT 20) q) p`);
  assert.equal(batchedPages(`SELECT 1 WHERE x = $1`), null);
  assert.equal(batchedPages(`SELECT 1 WHERE x = E'\\'' AND y = $1::text`), null);
  assert.equal(batchedPages(`SELECT $$x$$ WHERE y = $1::text`), null);
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
      const alone = [];
      for (const query of queries) alone.push(await store.findObjectsJson(appId, 'Big', query));
      assert.ok(alone.some((page) => page.length === 20), 'some pages are full');
      // Past the sixth run of the batched statement: it may then run its generic plan.
      for (let run = 0; run < 9; run++) {
        const together = await Promise.all(queries.map((query) => store.findObjectsJson(appId, 'Big', query)));
        assert.deepEqual(together, alone, `run ${run}, readers ${JSON.stringify(readers)}`);
      }
    }
    const { rows } = await sql<{ name: string; statement: string; generic_plans: string; parameter_types: string }>`SELECT name, statement,
      generic_plans::text, parameter_types::text FROM pg_prepared_statements WHERE statement LIKE '%json_array_elements%' ORDER BY name`.execute(db);
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
      assert.match(plan, /Index Cond: .*\(b\.v ->> 0\)/, plan);
      assert.doesNotMatch(plan, /Seq Scan on objects/, plan);
    }
  });
});
