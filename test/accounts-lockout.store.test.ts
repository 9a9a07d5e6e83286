// Conformance of the AccountStore lockout verbs on SQLite and (with DATABASE_URL) PostgreSQL:
// beginLoginAttempt counts an attempt before its secret is checked, atomically with the lock
// check; settleLoginAttempt ends it as right, wrong or void (#13 point 2).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import type { Store } from '../src/storage/store.ts';

const windowMs = 15 * 60_000;
const threshold = 6;

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
  return on.accounts.beginLoginAttempt('app1', userId, now, windowMs, threshold);
}

test('seven attempts are counted, the eighth refused until a window after the last', async () => {
  const userId = freshUser();
  const t0 = 1_000_000;
  for (let i = 0; i < 7; i++) {
    const attempt = await begin(userId, t0 + i * 1000);
    assert.ok(attempt, `attempt ${i + 1}`);
    assert.equal(attempt.before, i);
  }
  const last = t0 + 6000;
  assert.equal(await begin(userId, last + 1), null);
  assert.equal(await begin(userId, last + windowMs - 1), null);
  // Refused attempts recorded nothing: the lock ends a window after the last counted one.
  const reopened = await begin(userId, last + windowMs);
  assert.equal(reopened?.before, 0);
});

test('the window slides: seven attempts never within one window lock nothing', async () => {
  const userId = freshUser();
  for (let i = 0; i < 6; i++) assert.ok(await begin(userId, i * 60_000));
  // In the window (1 min, 16 min]: the attempts at 2 to 5 minutes.
  const seventh = await begin(userId, 16 * 60_000);
  assert.equal(seventh?.before, 4);
  assert.ok(await begin(userId, 16 * 60_000 + 1));
});

test('counts are per user and per application', async () => {
  const userId = freshUser();
  for (let i = 0; i < 7; i++) assert.ok(await begin(userId, 5000));
  assert.equal(await begin(userId, 5000), null);
  assert.equal((await begin(freshUser(), 5000))?.before, 0);
  assert.equal((await store.accounts.beginLoginAttempt('app2', userId, 5000, windowMs, threshold))?.before, 0);
});

test('right forgets the failures up to the attempt, not those begun after it', async () => {
  const userId = freshUser();
  const earlier = await begin(userId, 100);
  const attempt = await begin(userId, 200);
  const later = await begin(userId, 300);
  assert.ok(earlier && attempt && later);
  await store.accounts.settleLoginAttempt('app1', userId, attempt.id, 'right', 0);
  assert.equal((await begin(userId, 400))?.before, 1);
});

test('void withdraws the attempt alone; wrong keeps it and forgets failures older than forgetBefore', async () => {
  const userId = freshUser();
  const old = await begin(userId, 1000);
  const kept = await begin(userId, 2000);
  const withdrawn = await begin(userId, 3000);
  assert.ok(old && kept && withdrawn);
  await store.accounts.settleLoginAttempt('app1', userId, withdrawn.id, 'void', 0);
  assert.equal((await begin(userId, 4000))?.before, 2);
  await store.accounts.settleLoginAttempt('app1', userId, kept.id, 'wrong', 1500);
  // Left: kept (2000) and the attempt at 4000.
  assert.equal((await begin(userId, 5000))?.before, 2);
});

test('concurrent attempts (on two stores of one database where the driver allows): exactly seven counted', async () => {
  const userId = freshUser();
  const stores = other ? [store, other] : [store];
  const attempts = await Promise.all(Array.from({ length: 60 }, (_, i) => begin(userId, 10_000 + i, stores[i % stores.length])));
  const counted = attempts.filter((a) => a !== null);
  assert.equal(counted.length, 7);
  assert.deepEqual(counted.map((a) => a.before).sort(), [0, 1, 2, 3, 4, 5, 6]);
});
