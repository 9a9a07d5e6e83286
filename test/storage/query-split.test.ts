// findStatement's split of an equality (src/storage/sql/where.ts): an equality on a JSON field (on SQLite
// an $in of scalars too) is read as two ordered branches (the field is the value; an array holds it) whose
// union gives the page. The same pages as the one-statement form, for equalities with other conditions, every kind
// of order, limits and skips, over fields holding scalars, arrays, objects, nulls or nothing, and rows
// some readers may not read. On PostgreSQL a lone equality's page in insertion order also names its application,
// class and public readers as literals (dialect.pinnedScope), so these comparisons cover that text too. Run on
// the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import type { Acl, OrderKey, Readers, Where } from '../../src/objects/types.ts';
import { parseOrder, parseWhere } from '../../src/objects/query.ts';
import { findStatement } from '../../src/storage/sql/where.ts';
import type { SqlDialect } from '../../src/storage/sql/dialect.ts';
import { objectSelect } from '../../src/storage/sql/object-row.ts';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';
import { freshApp, useStore } from './stores.ts';

const store = useStore();

const groupValues: unknown[] = [1, 2, '1', 2.5, true, null, [1, 2], [2], ['1', 3], [], { a: 1 }, [[1]], false, 0, '[2]', '{"a":1}'];
const acls: Array<Acl | null> = [null, { '*': { read: true } }, { u1: { read: true } }];

test('an equality split in two ordered branches gives the pages the one statement gives', async () => {
  const appId = await freshApp(store());
  const db = (store() as unknown as { db: Kysely<any> }).db;
  const postgres = store().kind === 'postgres';
  const dialect: SqlDialect = postgres ? postgresDialect : sqliteDialect;
  const unsplit: SqlDialect = { ...dialect, jsonEqualsBranches: () => null };
  for (let i = 0; i < 240; i++) {
    const data: Record<string, unknown> = { score: (i * 37) % 50, tag: `t${i % 3}` };
    if (i % 13 !== 0) data.group = groupValues[i % groupValues.length];
    if (i % 5 !== 0) data.meta = { g: groupValues[(i * 7) % groupValues.length] };
    // Several rows share a creation time, so the id decides their order.
    const object = { className: 'Split', objectId: `split${String((i * 7919) % 1000).padStart(19, '0')}`, createdAt: 1000 + Math.floor(i / 3), updatedAt: 5000 - i, acl: acls[i % acls.length], data };
    assert.equal((await store().insertObject(appId, object as never)).ok, true);
  }
  assert.ok(await store().classIndexes.create(appId, 'Split', { name: 'byGroup', keys: [{ path: ['group'], descending: false }], unique: false }));
  await store().classIndexes.idle();
  if (postgres) await sql`ANALYZE objects`.execute(db);

  const wheres = [{ group: 1 }, { group: 2 }, { group: '1' }, { group: true }, { group: 2.5 }, { group: 1, score: { $gte: 10 } }, { tag: 't1', group: 2 }, { group: 3 }, { $and: [{ group: 1 }, { score: { $lt: 30 } }] },
    // json_extract reads true and false as 1 and 0, and an array or object as its text: a lone value's branch
    // tests the type only for those values (sqliteDialect.jsonEqualsBranches), so each must still not match the others.
    { group: 0 }, { group: false }, { group: '[2]' }, { group: '{"a":1}' }, { group: '[]' },
    { group: { $in: [1, '1', true] } }, { group: { $in: [2, 2.5] }, score: { $gte: 10 } }, { group: { $in: [false, 0, 3] } }, { tag: 't2', group: { $in: ['1', 1] } },
    // An $in on a field with no declared index (PostgreSQL: each value probed through the GIN index), nested too.
    { score: { $in: [3, 10, 49, 7.5] } }, { tag: { $in: ['t0', 't2', 'x'] } }, { 'meta.g': { $in: [1, '1', 2, true] } }, { 'meta.g': { $in: [2] }, tag: 't1' }];
  const orders = ['', '-createdAt', 'score', '-score,createdAt', 'objectId', '-updatedAt', 'group'];
  const pages = [[5, 0], [20, 3], [100, 0], [7, 40]];
  const readerSets: Readers[] = [null, ['*'], ['*', 'u1']];
  let compared = 0;
  for (const rawWhere of wheres) {
    const where: Where = parseWhere(rawWhere);
    for (const rawOrder of orders) {
      const order: OrderKey[] = rawOrder ? parseOrder(rawOrder) : [];
      for (const [limit, skip] of pages) {
        for (const readers of readerSets) {
          const query = { where, order, limit, skip };
          const scope = (d: SqlDialect) => ({ dialect: d, appId, className: 'Split', readers });
          const ids = async (d: SqlDialect) => (await sql<{ id: string }>`${findStatement(scope(d), objectSelect, query)}`.execute(db)).rows.map((row) => row.id);
          const expected = await ids(unsplit);
          assert.deepEqual(await ids(dialect), expected, `${JSON.stringify(rawWhere)} order '${rawOrder}' limit ${limit} skip ${skip} readers ${JSON.stringify(readers)}`);
          if (expected.length > 0) compared += 1;
        }
      }
    }
  }
  assert.ok(compared > 100, String(compared));
});

test('a page of an equality on a declared index reads that index in the default order', async () => {
  const appId = await freshApp(store());
  const db = (store() as unknown as { db: Kysely<any> }).db;
  const postgres = store().kind === 'postgres';
  if (postgres) {
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'SplitPlan', lpad(to_hex(i), 24, '0'), i, i, jsonb_build_object('group', i % 100), '{*}'
      FROM generate_series(1, 20000) AS i`.execute(db);
  } else {
    await sql`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20000)
      INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'SplitPlan', printf('%024x', i), i, i, json_object('group', i % 100), '["*"]' FROM s`.execute(db);
  }
  // Statistics of the class before the index, as `roost import` leaves them: the index's own come from create().
  await sql`ANALYZE objects`.execute(db);
  assert.ok(await store().classIndexes.create(appId, 'SplitPlan', { name: 'byGroup', keys: [{ path: ['group'], descending: false }], unique: false }));
  await store().classIndexes.idle();
  const { rows: declared } = await sql<{ index_name: string }>`SELECT index_name FROM class_indexes WHERE app_id = ${appId}`.execute(db);
  const index = declared[0].index_name;
  const dialect = postgres ? postgresDialect : sqliteDialect;
  const scope = { dialect, appId, className: 'SplitPlan', readers: ['*'] };
  const statement = findStatement(scope, objectSelect, { where: parseWhere({ group: 7 }), order: [], limit: 20, skip: 0 });
  if (postgres) {
    const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN (ANALYZE, COSTS OFF) ${statement}`.execute(db);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    // The scalar side: the declared index, in order, stopped after 20 rows (the array side takes whichever
    // index the planner finds cheaper: the declared one's range of arrays, or the GIN index).
    assert.match(plan, new RegExp(`Index Scan using ${index} on objects o_?\\d* \\(actual time=[\\d.]+ rows=20 loops=1\\)`), plan);
    assert.doesNotMatch(plan, /Seq Scan/, plan);
  } else {
    const { rows } = await sql<{ detail: string }>`EXPLAIN QUERY PLAN ${statement}`.execute(db);
    const plan = rows.map((row) => row.detail).join('\n');
    // Both sides search the declared index: the value itself (in order: no sort of its rows), and the range of array texts.
    assert.ok(plan.includes(`SEARCH o USING INDEX ${index} (app_id=? AND class_name=? AND <expr>=?)`), plan);
    // The value is bound: the value's side is still read in the index's order, not all its matches sorted (the
    // union's merge sorts each side's page as it takes it: `SCAN a` before its B-TREE).
    assert.doesNotMatch(plan, new RegExp(`SEARCH o USING INDEX ${index} \\(app_id=\\? AND class_name=\\? AND <expr>=\\?\\)\nUSE TEMP B-TREE`), plan);
    assert.ok(plan.includes(`SEARCH objects USING COVERING INDEX ${index} (app_id=? AND class_name=? AND <expr>>? AND <expr><?)`), plan);
    // Never the class in the page's order, looking for arrays (what the planner chose with statistics).
    assert.doesNotMatch(plan, /objects_created_id_idx/, plan);
  }
});

// #14/#16: SQLite keeps a prepared statement per SQL text (500 of them, src/storage/sqlite/open.ts), and a prepare
// cost ~200 µs: with the compared values written into the text as literals, every value of a where (a page's group,
// an $inQuery's category) was a statement of its own, prepared again once the cache was full. The values are bound
// (both stores): a page's text hangs on the where's shape and the kinds of its values, not on the values.
test("a page's statement text is the same whatever values its where compares", async () => {
  const db = (store() as unknown as { db: Kysely<any> }).db;
  const dialect: SqlDialect = store().kind === 'postgres' ? postgresDialect : sqliteDialect;
  const text = (where: unknown, readers: Readers = ['*']) =>
    findStatement({ dialect, appId: 'app', className: 'Text', readers }, objectSelect, { where: parseWhere(where as never), order: [], limit: 20, skip: 0 }).compile(db).sql;
  const sameText: Array<[unknown, unknown]> = [
    [{ group: 7 }, { group: 8 }],
    [{ group: 7.5 }, { group: -3 }],
    [{ group: 'a' }, { group: "it's" }],
    [{ group: 7, tag: 'x' }, { group: 8, tag: 'y' }],
    [{ group: { $in: [1, 2] } }, { group: { $in: [3, 4, 5, 6] } }],
    [{ group: { $in: ['a', 'b'] } }, { group: { $in: ['c', 'd', 'e'] } }],
    [{ group: { $in: [1, 'a'] } }, { group: { $in: ['b', 2, 3] } }],
    [{ post: { $inQuery: { className: 'Post', where: { category: 7 } } } }, { post: { $inQuery: { className: 'Post', where: { category: 9 } } } }],
  ];
  for (const [one, other] of sameText) assert.equal(text(other), text(one), `${JSON.stringify(one)} and ${JSON.stringify(other)}`);
});
