// bench:subqueries' page (#16 point 4): `{"post":{"$inQuery":{"className":"Post","where":{"category":n}}}}`, 20 of the
// 100 comments of a category's 100 posts, both fields' indexes declared. The plans were right (index probes, no scans)
// and the cost was the 200 rows they read: each post's for its readers, each comment's for its readers and its
// pointer's class, and each comment's JSON for the 100 sorted to keep 20. On SQLite a declared index now holds what
// those tests read (schema-ddl.ts) and the page reads the rows of the 20 it keeps (where.ts lateRows): both indexes
// answer alone, and a row is read by its rowid only for those 20 (and for the type of a value json_extract cannot
// tell, 0 and 1). PostgreSQL reads no index on an expression of data alone: its plan is the two indexes' probes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { parseWhere } from '../../src/objects/query.ts';
import { pageStatement } from '../../src/storage/sql/where.ts';
import { objectJsonColumns, objectJsonSelect } from '../../src/storage/sql/object-row.ts';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';
import { freshApp, useStore } from './stores.ts';

const store = useStore();

test("an $inQuery page reads both declared indexes alone on SQLite and the rows of the page's 20 only; answers as before", async () => {
  const appId = await freshApp(store());
  const db = (store() as unknown as { db: Kysely<any> }).db;
  const postgres = store().kind === 'postgres';
  const post = (i: number) => `p${String(i).padStart(23, '0')}`;
  // 2,000 posts in 20 categories, a comment a post (7919 is prime to 2,000), one comment in ten readable by u1 alone.
  for (let i = 0; i < 2000; i++) {
    assert.equal((await store().insertObject(appId, { className: 'Post', objectId: post(i), createdAt: 1000 + i, updatedAt: 1000 + i, acl: null, data: { category: i % 20 } })).ok, true);
    const comment = { className: 'Comment', objectId: `c${String(i).padStart(23, '0')}`, createdAt: 5000 + i, updatedAt: 9000 - i,
      acl: i % 10 === 3 ? { u1: { read: true } } : null, data: { post: { __type: 'Pointer', className: 'Post', objectId: post((i * 7919) % 2000) }, n: i } };
    assert.equal((await store().insertObject(appId, comment)).ok, true);
  }
  assert.ok(await store().classIndexes.create(appId, 'Post', { name: 'byCategory', keys: [{ path: ['category'], descending: false }], unique: false }));
  assert.ok(await store().classIndexes.create(appId, 'Comment', { name: 'byPost', keys: [{ path: ['post', 'objectId'], descending: false }], unique: false }));
  await store().classIndexes.idle();
  await store().ops.finishImport();
  const { rows: names } = await sql<{ name: string; index_name: string }>`SELECT name, index_name FROM class_indexes WHERE app_id = ${appId}`.execute(db);
  const byCategory = names.find((row) => row.name === 'byCategory')!.index_name;
  const byPost = names.find((row) => row.name === 'byPost')!.index_name;
  const where = parseWhere({ post: { $inQuery: { className: 'Post', where: { category: 7 } } } });
  const dialect = postgres ? postgresDialect : sqliteDialect;
  const page = pageStatement({ dialect, appId, className: 'Comment', readers: ['*'] }, { select: objectJsonSelect, columns: objectJsonColumns(dialect) }, { where, order: [], limit: 20, skip: 0 });
  if (postgres) {
    const plan = (await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${page}`.execute(db)).rows.map((row) => row['QUERY PLAN']).join('\n');
    assert.doesNotMatch(plan, /Seq Scan/, plan);
    assert.match(plan, new RegExp(`(Index Scan using|Bitmap Index Scan on) ${byCategory} `), plan);
    assert.match(plan, new RegExp(`Index Scan using ${byPost} `), plan);
  } else {
    const plan = (await sql<{ detail: string }>`EXPLAIN QUERY PLAN ${page}`.execute(db)).rows.map((row) => row.detail);
    // The posts of the category and, for each, its comments: from the indexes alone.
    assert.ok(plan.includes(`SEARCH o USING COVERING INDEX ${byCategory} (app_id=? AND class_name=? AND <expr>=?)`), plan.join('\n'));
    assert.ok(plan.includes(`SEARCH o USING COVERING INDEX ${byPost} (app_id=? AND class_name=? AND <expr>=?)`), plan.join('\n'));
    assert.equal(plan.filter((step) => /USING INDEX cix_/.test(step)).length, 0, plan.join('\n'));
    // Rows by rowid: a post whose category json_extract cannot type (0, 1), a post holding an array (none here: the
    // declared index's range of arrays is empty), and the page's 20 comments after the sort.
    assert.deepEqual(plan.filter((step) => / USING INTEGER PRIMARY KEY /.test(step)), [
      'SEARCH t USING INTEGER PRIMARY KEY (rowid=?)',
      'SEARCH o USING INTEGER PRIMARY KEY (rowid=?)',
      'SEARCH o USING INTEGER PRIMARY KEY (rowid=?)',
    ]);
  }
  // The pages as the store answers them: the comments of category 7's posts the readers may read, in insertion order.
  const expected = (readers: string[] | null) => {
    const ids: string[] = [];
    for (let i = 0; i < 2000; i++) if (((i * 7919) % 2000) % 20 === 7 && (readers === null || i % 10 !== 3 || readers.includes('u1'))) ids.push(`c${String(i).padStart(23, '0')}`);
    return ids;
  };
  for (const readers of [['*'], ['*', 'u1'], null]) {
    for (const [skip, limit] of [[0, 20], [20, 20], [80, 20]]) {
      const found = await store().findObjectsJson(appId, 'Comment', { where, order: [], limit, skip, readers });
      assert.deepEqual(found.map((object) => object.objectId), expected(readers).slice(skip, skip + limit), JSON.stringify({ readers, skip }));
      for (const object of found) assert.deepEqual(JSON.parse(object.dataJson).post, { __type: 'Pointer', className: 'Post', objectId: post((Number.parseInt(object.objectId.slice(1), 10) * 7919) % 2000) });
    }
  }
  // Ordered by updatedAt (falling as the comments rise), the subquery's own page by it too: the rows' other columns.
  const byUpdated = parseWhere({ post: { $inQuery: { className: 'Post', where: { category: 7 }, order: '-updatedAt' } } });
  const found = await store().findObjects(appId, 'Comment', { where: byUpdated, order: [{ path: ['updatedAt'], descending: true }], limit: 5, skip: 0, readers: ['*'] });
  assert.deepEqual(found.map((object) => object.objectId), expected(['*']).slice(0, 5));
  assert.deepEqual(found.map((object) => object.updatedAt), expected(['*']).slice(0, 5).map((id) => 9000 - Number.parseInt(id.slice(1), 10)));
});
