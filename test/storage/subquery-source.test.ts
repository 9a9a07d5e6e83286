// findStatement's read of a top-level $inQuery (src/storage/sql/where.ts pointerSource): the page's rows
// come from the probes of the subquery's ids through the index on the pointer's objectId. The same pages
// as the plain condition (dialect.pointerIn), with other conditions, orders, limits and skips, pointers of
// another class, strings, arrays and missing fields, and rows some readers may not read, inside and out.
// Run on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import type { Acl, OrderKey, Readers, Where } from '../../src/objects/types.ts';
import { parseOrder, parseWhere } from '../../src/objects/query.ts';
import { countStatement, findStatement } from '../../src/storage/sql/where.ts';
import type { SqlDialect } from '../../src/storage/sql/dialect.ts';
import { objectSelect } from '../../src/storage/sql/object-row.ts';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';
import { freshApp, useStore } from './stores.ts';

const store = useStore();
const acls: Array<Acl | null> = [null, { '*': { read: true } }, { u1: { read: true } }];

test('a page read from the subquery ids is the page of the plain condition', async () => {
  const appId = await freshApp(store());
  const db = (store() as unknown as { db: Kysely<any> }).db;
  const dialect: SqlDialect = store().kind === 'postgres' ? postgresDialect : sqliteDialect;
  const plain: SqlDialect = { ...dialect, pointerSource: () => null };
  const insert = async (className: string, i: number, data: Record<string, unknown>) => {
    const object = { className, objectId: `${className.toLowerCase()}${String(i).padStart(4, '0')}`, createdAt: 1000 + Math.floor(i / 3), updatedAt: 5000 - i, acl: acls[i % acls.length], data };
    assert.equal((await store().insertObject(appId, object as never)).ok, true);
  };
  for (let i = 0; i < 60; i++) await insert('SrcPost', i, { tag: `t${i % 4}`, n: i });
  const targets = [
    (i: number) => ({ __type: 'Pointer', className: 'SrcPost', objectId: `srcpost${String((i * 7) % 60).padStart(4, '0')}` }),
    (i: number) => ({ __type: 'Pointer', className: 'SrcOther', objectId: `srcpost${String(i % 60).padStart(4, '0')}` }),
    (i: number) => `srcpost${String(i % 60).padStart(4, '0')}`,
    (i: number) => [{ __type: 'Pointer', className: 'SrcPost', objectId: `srcpost${String(i % 60).padStart(4, '0')}` }],
    () => undefined,
  ];
  for (let i = 0; i < 200; i++) {
    const post = targets[i % 7 < 4 ? 0 : (i % targets.length)](i);
    await insert('SrcComment', i, { ...(post === undefined ? {} : { post }), score: (i * 37) % 50 });
  }
  assert.ok(await store().classIndexes.create(appId, 'SrcComment', { name: 'byPost', keys: [{ path: ['post', 'objectId'], descending: false }], unique: false }));
  // The build runs in the background; an ANALYZE while CREATE INDEX CONCURRENTLY waits deadlocks with it.
  await store().classIndexes.idle();
  if (store().kind === 'postgres') await sql`ANALYZE objects`.execute(db);

  const inner = (where: unknown, extra: Record<string, unknown> = {}) => ({ post: { $inQuery: { className: 'SrcPost', where, ...extra } } });
  const wheres = [inner({ tag: 't1' }), inner({}, { limit: 7, order: '-n' }), { ...inner({ n: { $lt: 30 } }), score: { $gte: 20 } }, { $and: [inner({ tag: 't2' }), { score: { $lt: 40 } }] }];
  const orders = ['', '-createdAt', 'score', 'objectId'];
  const readerSets: Readers[] = [null, ['*'], ['*', 'u1']];
  let compared = 0;
  for (const rawWhere of wheres) {
    const where: Where = parseWhere(rawWhere);
    for (const rawOrder of orders) {
      const order: OrderKey[] = rawOrder ? parseOrder(rawOrder) : [];
      for (const [limit, skip] of [[5, 0], [20, 3], [100, 0]]) {
        for (const readers of readerSets) {
          const ids = async (d: SqlDialect) => {
            const statement = findStatement({ dialect: d, appId, className: 'SrcComment', readers }, objectSelect, { where, order, limit, skip });
            return (await sql<{ id: string }>`${statement}`.execute(db)).rows.map((row) => row.id);
          };
          if (limit === 5 && skip === 0 && rawOrder === '') {
            const count = async (d: SqlDialect) => Number((await sql<{ n: number | string }>`${countStatement({ dialect: d, appId, className: 'SrcComment', readers }, where)}`.execute(db)).rows[0].n);
            assert.equal(await count(dialect), await count(plain), `count ${JSON.stringify(rawWhere)} readers ${JSON.stringify(readers)}`);
          }
          const expected = await ids(plain);
          assert.deepEqual(await ids(dialect), expected, `${JSON.stringify(rawWhere)} order '${rawOrder}' limit ${limit} skip ${skip} readers ${JSON.stringify(readers)}`);
          if (expected.length > 0) compared += 1;
        }
      }
    }
  }
  assert.ok(compared > 60, String(compared));
});
