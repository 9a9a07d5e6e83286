// An update with neither a condition nor relation changes may take a store's unlocked path
// (SqlStore.updateUnlocked; PostgreSQL writes it as a read and a versioned UPDATE, no transaction).
// It must answer as the locked path does, races included (issue #14: a fast path has a named seam
// and an equivalence test). The locked path is reached here with a condition that every row meets
// (an empty where, read with the master key). Run on the database the run selects, in-process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change, Condition, StoredObject, WriteOutcome } from '../../src/objects/types.ts';
import type { Store } from '../../src/storage/store.ts';
import { freshApp, useStore } from './stores.ts';

const store = useStore();
const locked: Condition = { where: { op: 'and', items: [] }, readers: null };

let seq = 0;
async function seed(appId: string, className: string, data: StoredObject['data'], acl: StoredObject['acl'] = null): Promise<StoredObject> {
  seq += 1;
  const object = { className, objectId: `upd${String(seq).padStart(21, '0')}`, createdAt: 1000, updatedAt: 1000, acl, data };
  assert.equal((await store().insertObject(appId, object)).ok, true);
  return object;
}

/** Counts each call of the change, so a test can tell that a write was retried on the locked path. */
function counted(change: Change<string>): Change<string> & { calls: number } {
  const wrapped = Object.assign((current: StoredObject) => {
    wrapped.calls += 1;
    return change(current);
  }, { calls: 0 });
  return wrapped;
}

const increment: Change<string> = (current) => ({ ...current, updatedAt: current.updatedAt + 1, data: { ...current.data, n: Number(current.data.n) + 1 } });

/** The same update through both paths, on two copies of a row: same outcome, same row after. */
async function bothPaths(appId: string, data: StoredObject['data'], acl: StoredObject['acl'], change: Change<string>): Promise<void> {
  const outcomes: Array<WriteOutcome<string>> = [];
  const rows: Array<StoredObject | null> = [];
  for (const condition of [undefined, locked]) {
    const row = await seed(appId, 'Twin', data, acl);
    const ref = { appId, className: 'Twin', objectId: row.objectId };
    const outcome = await store().updateObject(ref, change, condition);
    outcomes.push(outcome.ok ? { ok: true, object: { ...outcome.object, objectId: 'x' } } : outcome);
    const after = await store().getObject(ref, null);
    rows.push(after && { ...after, objectId: 'x' });
  }
  assert.deepEqual(outcomes[0], outcomes[1], JSON.stringify(data));
  assert.deepEqual(rows[0], rows[1], JSON.stringify(data));
}

test('an update answers as the locked path does: written, refused by the ACL rule, missing', async () => {
  const appId = await freshApp(store());
  const acl = { u1: { read: true, write: true } };
  await bothPaths(appId, { n: 1, s: 'é "q"' }, acl, increment);
  await bothPaths(appId, { n: 1 }, acl, (current) => (current.acl?.u2?.write ? current : { refused: 'no write for u2' }));
  await bothPaths(appId, { n: 1 }, null, (current) => ({ ...current, acl: { u3: { read: true } }, data: { m: [1, { a: null }] } }));
  for (const condition of [undefined, locked]) {
    const missing = { appId, className: 'Twin', objectId: 'missing0000000000000000' };
    assert.deepEqual(await store().updateObject(missing, increment, condition), { ok: false, reason: 'notFound' });
  }
});

test('updates made at once all count, on one node and across two', async () => {
  const appId = await freshApp(store());
  const row = await seed(appId, 'Counter', { n: 0 });
  const ref = { appId, className: 'Counter', objectId: row.objectId };
  // Made in one turn, the reads share a statement and see one version: all but one write find it gone.
  const change = counted(increment);
  const outcomes = await Promise.all(Array.from({ length: 12 }, () => store().updateObject(ref, change)));
  assert.ok(outcomes.every((outcome) => outcome.ok));
  assert.equal((await store().getObject(ref, null))?.data.n, 12);
  if (store().kind === 'postgres') assert.ok(change.calls > 12, `${change.calls} calls: no write was retried`);
  // A second store is a second node: its reads are its own.
  const other: Store = (await store.another()) ?? store();
  await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? other : store()).updateObject(ref, increment)));
  assert.equal((await store().getObject(ref, null))?.data.n, 22);
});

test('an update racing a delete finds the row gone', async () => {
  const appId = await freshApp(store());
  const row = await seed(appId, 'Doomed', { n: 0 });
  const ref = { appId, className: 'Doomed', objectId: row.objectId };
  let update: Promise<WriteOutcome<string>> | undefined;
  // The update starts while the delete holds the row: it reads the row as committed, then its write waits.
  const deleted = await store().deleteObject(ref, () => {
    update = store().updateObject(ref, increment);
    return null;
  });
  assert.equal(deleted.ok, true);
  assert.deepEqual(await update, { ok: false, reason: 'notFound' });
  assert.equal(await store().getObject(ref, null), null);
});

test('a value taken by another row is taken on both paths (unique index)', async () => {
  const appId = await freshApp(store());
  await seed(appId, '_User', { username: 'alice' });
  for (const condition of [undefined, locked]) {
    const name = `bob${seq}`;
    const bob = await seed(appId, '_User', { username: name });
    const ref = { appId, className: '_User', objectId: bob.objectId };
    const outcome = await store().updateObject(ref, (current) => ({ ...current, data: { username: 'alice' } }), condition);
    assert.deepEqual(outcome, { ok: false, reason: 'taken', field: 'username' });
    assert.equal((await store().getObject(ref, null))?.data.username, name);
  }
});

// A row read earlier in the request (a user's own session row when it updates itself) may stand in for the
// unlocked path's read (Store.updateObject's `seen`; PostgreSQL's row versions, src/storage/postgres/row-versions.ts).
// It must answer as an update that reads: at once, after another write changed the row, after a delete, and
// when it is another row than the one named.
test('an update given the row read before answers as one that reads it again', async () => {
  const appId = await freshApp(store());
  const row = await seed(appId, 'Seen', { n: 0 });
  const ref = { appId, className: 'Seen', objectId: row.objectId };
  const seen = await store().getObject(ref, null);
  assert.ok(seen);
  assert.deepEqual(await store().updateObject(ref, increment, undefined, [], seen), { ok: true, object: { ...seen, updatedAt: 1001, data: { n: 1 } } });
  // `seen` is now stale (n: 0): the write must land on the row as it is, not on what was seen.
  const change = counted(increment);
  const outcome = await store().updateObject(ref, change, undefined, [], seen);
  assert.deepEqual(outcome, { ok: true, object: { ...seen, updatedAt: 1002, data: { n: 2 } } });
  assert.equal((await store().getObject(ref, null))?.data.n, 2);
  if (store().kind === 'postgres') assert.equal(change.calls, 2, 'the stale row was written over');
  // Another row's object is never taken for this one.
  const other = await seed(appId, 'Seen', { n: 40 });
  const otherSeen = await store().getObject({ ...ref, objectId: other.objectId }, null);
  assert.equal((await store().updateObject(ref, increment, undefined, [], otherSeen!)).ok, true);
  assert.equal((await store().getObject(ref, null))?.data.n, 3);
  const fresh = await store().getObject(ref, null);
  assert.equal((await store().deleteObject(ref, () => null)).ok, true);
  assert.deepEqual(await store().updateObject(ref, increment, undefined, [], fresh!), { ok: false, reason: 'notFound' });
});
