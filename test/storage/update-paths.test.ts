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
