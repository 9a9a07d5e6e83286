// A page or count whose where holds a subquery runs unnamed on PostgreSQL, planned with its values each time
// (where.ts pageStatement): named, PostgreSQL moved an $inQuery page to its generic plan after five runs, and that plan
// read both classes whole (about 2 s a page at 100,000 objects a class against 2.5 ms; bench/RESULTS.md,
// Subqueries). Except a lone $inQuery of a lone equality in insertion order, named with its whole scope written in
// (where.ts pinnableInQuery; its plan: test/storage/page-plans.test.ts). A lone equality's page is a named shape too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { storeKind } from '../helpers/databases.ts';
import { freshApp, withOneConnectionStore } from './stores.ts';
import { parseWhere } from '../../src/objects/query.ts';

test('pages and counts holding a subquery are never named statements on PostgreSQL; the same answers every run', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    const postId = (i: number) => `post${String(i).padStart(20, '0')}`;
    for (let i = 0; i < 20; i++) {
      const post = { className: 'Post', objectId: postId(i), createdAt: 1000 + i, updatedAt: 1000, acl: null, data: { category: i % 4 } };
      assert.equal((await store.insertObject(appId, post)).ok, true);
      const comment = { className: 'Comment', objectId: `comm${String(i).padStart(20, '0')}`, createdAt: 2000 + i, updatedAt: 2000, acl: null, data: { post: { __type: 'Pointer', className: 'Post', objectId: postId((i * 7) % 20) }, n: i } };
      assert.equal((await store.insertObject(appId, comment)).ok, true);
    }
    const subquery = { className: 'Post', where: { category: 1 } };
    const wheres = [
      parseWhere({ post: { $inQuery: subquery } }),
      parseWhere({ post: { $notInQuery: subquery }, n: { $gte: 3 } }),
      parseWhere({ post: { $select: { query: { className: 'Comment', where: { n: { $lt: 5 } } }, key: 'post' } } }),
    ];
    for (const where of wheres) {
      const pages = [];
      const counts = [];
      for (let run = 0; run < 8; run++) {
        pages.push((await store.findObjects(appId, 'Comment', { where, order: [], limit: 3, skip: 1, readers: ['*'] })).map((o) => o.objectId));
        counts.push(await store.countObjects(appId, 'Comment', where, ['*']));
      }
      assert.ok(pages[0].length > 0);
      for (const later of pages.slice(1)) assert.deepEqual(later, pages[0]);
      assert.deepEqual(counts, Array(8).fill(counts[0]));
    }
    // A lone equality's page with its scope in its text is named (where.ts pageStatement; the rest: page-plans.test.ts).
    const plain = parseWhere({ n: 3 });
    for (let run = 0; run < 4; run++) await store.findObjects(appId, 'Comment', { where: plain, order: [], limit: 3, skip: 0, readers: ['*'] });
    const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements WHERE name LIKE 'roost_shape_%'`.execute(db);
    const subqueries = rows.filter((row) => row.statement.includes('SELECT s.v'));
    assert.equal(subqueries.length, 1, 'the lone $inQuery page alone');
    assert.match(subqueries[0].statement, /CROSS JOIN LATERAL \(SELECT \* FROM objects m WHERE m\.app_id = 'app[^']*'\s+AND m\.class_name = 'Comment'/);
    assert.equal(rows.length, 2, 'and the lone equality\'s page');
  });
});
