// The background builder of declared indexes (src/storage/sql/class-index-store.ts) against failures of
// the moment: a build PostgreSQL kills as a deadlock (an ANALYZE during CREATE INDEX CONCURRENTLY: 40P01)
// is built again, not marked failed; an error of the index itself still fails it. The failure is
// injected at the builder's seam (the dialect's statements). Run on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { SqlDialect } from '../../src/storage/sql/dialect.ts';
import { SqlClassIndexStore } from '../../src/storage/sql/class-index-store.ts';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';
import { freshApp, objectOf, useStore } from './stores.ts';

const store = useStore();

/** The store's builder with `fail` put before the first `failures` builds' statements. */
function failingBuilder(failures: number, fail: string): { indexes: SqlClassIndexStore; attempts: () => number } {
  const db = (store() as unknown as { db: Kysely<any> }).db;
  const dialect: SqlDialect = store().kind === 'postgres' ? postgresDialect : sqliteDialect;
  let attempts = 0;
  const classIndexes = {
    ...dialect.classIndexes,
    create: (...args: Parameters<SqlDialect['classIndexes']['create']>) => {
      attempts += 1;
      const statements = dialect.classIndexes.create(...args);
      return attempts <= failures ? [fail, ...statements] : statements;
    },
  };
  return { indexes: new SqlClassIndexStore({ db, dialect: { ...dialect, classIndexes }, buildRetryMs: 10 }), attempts: () => attempts };
}

const deadlock = `DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$`;

test('a build killed as a deadlock is built again and ends ready', async (t) => {
  if (store().kind !== 'postgres') return t.skip('a PostgreSQL error code');
  const appId = await freshApp(store());
  assert.equal((await store().insertObject(appId, objectOf('Built', { n: 1 }))).ok, true);
  const { indexes, attempts } = failingBuilder(2, deadlock);
  assert.equal((await indexes.create(appId, 'Built', { name: 'byN', keys: [{ path: ['n'], descending: false }], unique: false })) !== 'exists', true);
  await indexes.idle();
  assert.equal(attempts(), 3);
  assert.deepEqual(await indexes.list(appId, 'Built'), [{ name: 'byN', keys: [{ path: ['n'], descending: false }], unique: false, state: 'ready' }]);
});

test('a build failing for a reason of its own is marked failed at once', async () => {
  const appId = await freshApp(store());
  const { indexes, attempts } = failingBuilder(1, 'SELECT no_such_function()');
  assert.equal((await indexes.create(appId, 'Broken', { name: 'byN', keys: [{ path: ['n'], descending: false }], unique: false })) !== 'exists', true);
  await indexes.idle();
  assert.equal(attempts(), 1);
  const [listed] = await indexes.list(appId, 'Broken');
  assert.equal(listed.state, 'failed');
  assert.equal(listed.failure?.reason, 'error');
  await indexes.idle();
});

test('a stopping node cancels its build and leaves it building for the next', async (t) => {
  if (store().kind !== 'postgres') return t.skip('SQLite builds run to their end on the event loop');
  const appId = await freshApp(store());
  const { indexes } = failingBuilder(1, 'SELECT pg_sleep(60)');
  assert.equal((await indexes.create(appId, 'Slow', { name: 'byN', keys: [{ path: ['n'], descending: false }], unique: false })) !== 'exists', true);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = Date.now();
  await indexes.stop();
  assert.ok(Date.now() - started < 5000, `stopped in ${Date.now() - started} ms`);
  const [listed] = await store().classIndexes.list(appId, 'Slow');
  assert.equal(listed.name, 'byN');
  // The store's own builder resumed it on listing (the next node's start does the same).
  await store().classIndexes.idle();
  assert.equal((await store().classIndexes.list(appId, 'Slow'))[0].state, 'ready');
});
