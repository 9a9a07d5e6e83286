// Conformance of the AccountStore lockout verbs on SQLite and (with DATABASE_URL) PostgreSQL:
// beginLoginAttempt counts an attempt before its secret is checked, atomically with the lock
// check; recordLoginFailure counts one without a check; clearLoginFailures forgets them (#13 point 2).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import type { Store } from '../src/storage/store.ts';

const windowMs = 15 * 60_000;

let database: TestDatabase;
let store: Store;
/** A second store on the same database, as a second Roost process has (PostgreSQL only, see below). */
let other: Store | null = null;
before(async () => {
  database = await testDatabase();
  store = await database.open();
  // Two SQLite connections in one process would wait on each other's write lock synchronously,
  // blocking the one thread that could release it; across processes, the HTTP tests cover SQLite.
  if (database.kind === 'postgres') other = await database.open();
});
after(async () => {
  await other?.close();
  await store?.close();
  await database?.drop();
});

let seq = 0;
const freshUser = () => `user${++seq}`;

function begin(userId: string, now: number, on: Store = store) {
  return on.accounts.beginLoginAttempt('app1', userId, now, windowMs);
}

test('seven attempts are counted, the eighth refused until a window after the last', async () => {
  const userId = freshUser();
  const t0 = 1_000_000;
  for (let i = 0; i < 7; i++) assert.equal(await begin(userId, t0 + i * 1000), i + 1, `attempt ${i + 1}`);
  const last = t0 + 6000;
  assert.equal(await begin(userId, last + 1), null);
  assert.equal(await begin(userId, last + windowMs - 1), null);
  // Refused attempts recorded nothing: the lock ends a window after the last counted one.
  assert.equal(await begin(userId, last + windowMs), 1);
});

test('the window slides: seven attempts never within one window lock nothing', async () => {
  const userId = freshUser();
  for (let i = 0; i < 6; i++) assert.ok(await begin(userId, i * 60_000));
  // In the window (1 min, 16 min]: the attempts at 2 to 5 minutes and this one.
  assert.equal(await begin(userId, 16 * 60_000), 5);
  assert.equal(await begin(userId, 16 * 60_000 + 1), 6);
  assert.equal(await begin(userId, 16 * 60_000 + 2), 7);
  assert.equal(await begin(userId, 16 * 60_000 + 3), null);
});

test('counts are per user and per application', async () => {
  const userId = freshUser();
  for (let i = 0; i < 7; i++) assert.ok(await begin(userId, 5000));
  assert.equal(await begin(userId, 5000), null);
  assert.equal(await begin(freshUser(), 5000), 1);
  assert.equal(await store.accounts.beginLoginAttempt('app2', userId, 5000, windowMs), 1);
});

test('failures recorded without a check count; clearing forgets them all', async () => {
  const userId = freshUser();
  for (let i = 0; i < 6; i++) await store.accounts.recordLoginFailure('app1', userId, 100 + i);
  assert.equal(await begin(userId, 200), 7);
  assert.equal(await begin(userId, 201), null);
  // Recorded even while locked: the lock lasts a window after the last failure.
  await store.accounts.recordLoginFailure('app1', userId, 10_000);
  assert.equal(await begin(userId, 10_000 + windowMs - 1), null);
  await store.accounts.clearLoginFailures('app1', userId);
  assert.equal(await begin(userId, 10_001), 1);
});

test('concurrent attempts (on two stores of one database where the driver allows): exactly seven counted', async () => {
  const userId = freshUser();
  const stores = other ? [store, other] : [store];
  const attempts = await Promise.all(Array.from({ length: 60 }, (_, i) => begin(userId, 10_000 + i, stores[i % stores.length])));
  const counted = attempts.filter((a) => a !== null);
  assert.deepEqual(counted.sort(), [1, 2, 3, 4, 5, 6, 7]);
});
