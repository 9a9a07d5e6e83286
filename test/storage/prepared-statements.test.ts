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
