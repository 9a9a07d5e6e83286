// A page whose where is a lone equality on a column a unique index holds (objectId, username, email, …), read with
// the master key or the public readers, runs as a named statement on PostgreSQL (where.ts uniqueEquality): at most
// one row, read through the unique index for any value, so PostgreSQL plans it once. Its pages must equal the
// unnamed statement's, from the first run to past the sixth (where the generic plan may be taken). From its start in
// the default order such a page is a lookup (PostgresStore.findObjects), named too: an order keeps it a page here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { storeKind } from '../helpers/databases.ts';
import { freshApp, withOneConnectionStore } from './stores.ts';
import { parseWhere } from '../../src/objects/query.ts';
import type { Readers } from '../../src/objects/types.ts';

test('a lone equality on a unique column is planned once with the master key or the public readers, and answers alike', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const objectId = `uniq${String(i).padStart(20, '0')}`;
      ids.push(objectId);
      // Every other user readable by u1 only: the public readers do not find those.
      const acl = i % 2 ? { u1: { read: true, write: true } } : null;
      const outcome = await store.insertObject(appId, { className: '_User', objectId, createdAt: i, updatedAt: i, acl, data: { username: `user${i}`, email: `u${i}@example.com` } });
      assert.equal(outcome.ok, true);
    }
    const readerSets: Readers[] = [null, ['*'], ['*', 'u1']];
    for (const order of [[], [{ path: ['createdAt'], descending: false }]]) {
      for (const field of ['username', 'email', 'objectId']) {
        for (const readers of readerSets) {
          const found: string[][] = [];
          for (let run = 0; run < 16; run++) {
            const i = run % 8;
            const value = field === 'username' ? `user${i}` : field === 'email' ? `u${i}@example.com` : ids[i];
            const page = await store.findObjects(appId, '_User', { where: parseWhere({ [field]: value }), order, limit: 100, skip: 0, readers });
            found.push(page.map((object) => object.objectId));
          }
          const expected = Array.from({ length: 16 }, (_, run) => (readers === null || run % 2 === 0 || readers.includes('u1') ? [ids[run % 8]] : []));
          assert.deepEqual(found, expected, JSON.stringify({ field, readers, order }));
        }
      }
    }
    const lookups = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE name LIKE 'roost_object_lookups%' ORDER BY name`.execute(db);
    assert.deepEqual(lookups.rows.map((row) => row.name), ['roost_object_lookups', 'roost_object_lookups_all', 'roost_object_lookups_email', 'roost_object_lookups_email_all', 'roost_object_lookups_username', 'roost_object_lookups_username_all']);
    const { rows } = await sql<{ statement: string; generic_plans: number }>`SELECT statement, generic_plans FROM pg_prepared_statements
      WHERE name LIKE 'roost_shape_%'`.execute(db);
    // Each field with the master key and with the public readers; a user's readers (their roles read) stay unnamed.
    assert.equal(rows.length, 6, JSON.stringify(rows.map((row) => row.statement)));
    for (const row of rows) assert.ok(Number(row.generic_plans) > 0, `planned at each run: ${row.statement}`);
  });
});
