// An update with neither a condition nor relation changes may take a store's unlocked path
// (SqlStore.updateUnlocked; PostgreSQL writes it as a read and a versioned UPDATE, no transaction).
// It must answer as the locked path does, races included (issue #14: a fast path has a named seam
// and an equivalence test). The locked path is reached here with a condition that every row meets
// (an empty where, read with the master key). Run on the database the run selects, in-process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Change, Condition, StoredObject, WriteOutcome } from '../../src/objects/types.ts';
import type { Store } from '../../src/storage/store.ts';
import { sql } from 'kysely';
import { storeKind } from '../helpers/databases.ts';
import { freshApp, objectOf, sessionSeal, unique, useStore, withOneConnectionStore } from './stores.ts';

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

// PostgreSQL writes the unlocked updates made together as one statement (src/storage/postgres/row-writes.ts):
// each must answer, and leave its row, as when made alone, whatever the others in its statement do.
test('updates of several rows made together answer as each made alone: written, refused, taken, missing, a geo point', async () => {
  const appId = await freshApp(store());
  await seed(appId, '_User', { username: 'carol' });
  const missing = { appId, className: 'Twin', objectId: 'missing0000000000000000' };
  // Ids and the seeded usernames' counters differ between the two runs compared.
  const strip = (object: StoredObject | null) =>
    object && { ...object, objectId: 'x', data: { ...object.data, ...(typeof object.data.username === 'string' ? { username: object.data.username.replace(/\d+$/, '') } : {}) } };
  /** The changes on fresh rows (two users, three others) and a missing one, made in one turn or one after another. */
  const answers = async (changes: Array<Change<string>>, together: boolean) => {
    const rows = [
      await seed(appId, '_User', { username: `dan${seq}`, n: 1 }),
      await seed(appId, '_User', { username: `erin${seq}`, n: 1 }),
      await seed(appId, 'Twin', { n: 1 }, { u1: { read: true, write: true } }),
      await seed(appId, 'Twin', { n: 1, s: 'é "q" \\ \u2028' }),
      await seed(appId, 'Twin', { n: 1 }),
    ];
    const refs = [...rows.map((row) => ({ appId, className: row.className, objectId: row.objectId })), missing];
    const run = (i: number) => store().updateObject(refs[i], changes[i] ?? increment);
    const outcomes: Array<WriteOutcome<string>> = [];
    if (together) outcomes.push(...(await Promise.all(refs.map((_, i) => run(i)))));
    else for (let i = 0; i < refs.length; i++) outcomes.push(await run(i));
    const after = await Promise.all(refs.map((ref) => store().getObject(ref, null)));
    return { outcomes: outcomes.map((outcome) => (outcome.ok ? { ok: true, object: strip(outcome.object) } : outcome)), after: after.map(strip) };
  };
  const taken: Change<string> = (current) => ({ ...current, data: { ...current.data, username: 'carol' } });
  const others: Array<Change<string>> = [
    (current) => ({ ...current, acl: { u2: { read: true } }, data: { m: [1, { a: null }], big: 2 ** 53 - 1, f: 0.1 + 0.2 } }),
    (current) => ({ ...current, updatedAt: current.updatedAt + 5, data: { ...current.data, at: { __type: 'GeoPoint', latitude: 39.9, longitude: 116.4 } } }),
    () => ({ refused: 'no' }),
  ];
  // With a taken username among them the statement fails and each write runs alone; without one, they go as one.
  for (const changes of [[increment, taken, ...others], [increment, increment, ...others]]) {
    const alone = await answers(changes, false);
    assert.deepEqual(await answers(changes, true), alone);
    if (changes.includes(taken)) assert.deepEqual(alone.outcomes[1], { ok: false, reason: 'taken', field: 'username' });
  }
});

// A user updating itself passes the row its session lookup read, with that read's version (Store.updateObject's
// `seen`; PostgresStore.updateUnlocked writes against it without a read of its own). It must answer as an update
// that reads: at once, after another write changed the row (the seen row is stale), when it is another row than
// the one named, and after a delete.
test('an update given the row its session lookup read answers as one that reads it again', async () => {
  const appId = await freshApp(store());
  const newUser = async (n: number) => {
    const user = objectOf('_User', { username: unique('seen'), n });
    const session = sessionSeal(unique('seen'));
    assert.equal((await store().identities.insertUser(appId, user, { passwordHash: 'h', session })).ok, true);
    return { ref: { appId, className: '_User', objectId: user.objectId }, seen: async () => (await store().accounts.userBySession(appId, session.digest))! };
  };
  const user = await newUser(0);
  const seen = await user.seen();
  assert.equal(seen.version === null, store().kind !== 'postgres', 'PostgreSQL reads the version with the session');
  const first = counted(increment);
  assert.deepEqual(await store().updateObject(user.ref, first, undefined, [], seen), { ok: true, object: { ...seen.object, updatedAt: seen.object.updatedAt + 1, data: { ...seen.object.data, n: 1 } } });
  assert.equal(first.calls, 1);
  // `seen` is now stale (n: 0): the write must land on the row as it is, not on what was seen.
  const stale = counted(increment);
  const outcome = await store().updateObject(user.ref, stale, undefined, [], seen);
  assert.deepEqual(outcome, { ok: true, object: { ...seen.object, updatedAt: seen.object.updatedAt + 2, data: { ...seen.object.data, n: 2 } } });
  assert.equal((await store().getObject(user.ref, null))?.data.n, 2);
  if (store().kind === 'postgres') assert.equal(stale.calls, 2, 'the stale row was written over');
  // Another row's object is never taken for this one, nor is that row written.
  const other = await newUser(40);
  assert.equal((await store().updateObject(user.ref, increment, undefined, [], await other.seen())).ok, true);
  assert.equal((await store().getObject(user.ref, null))?.data.n, 3);
  assert.equal((await store().getObject(other.ref, null))?.data.n, 40);
  const fresh = await user.seen();
  assert.equal((await store().deleteObject(user.ref, () => null)).ok, true);
  assert.deepEqual(await store().updateObject(user.ref, increment, undefined, [], fresh), { ok: false, reason: 'notFound' });
});

// Regression (2026-11-27): the statement of the writes made together joined the objects table with the rows of its
// JSON, whose count PostgreSQL cannot know (100 by default), and its plan hashed a scan of the whole table: an update
// cost more with every row of every class (bench:accounts' update fell round to round as the sign-ups grew the table).
test('updates made together find their rows by the primary key on PostgreSQL, not by a scan of the table', { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    await sql`INSERT INTO objects (app_id, class_name, id, created_at, updated_at, data, readers)
      SELECT ${appId}, 'Other' || (i % 20), lpad(to_hex(i), 24, '0'), i, i, jsonb_build_object('n', i), '{*}'
      FROM generate_series(1, 3000) AS i`.execute(db);
    await sql`ANALYZE objects`.execute(db);
    const refs = [];
    for (const className of ['Twin', 'Twin', 'Other3']) {
      const object = objectOf(className, { n: 1 });
      assert.equal((await store.insertObject(appId, object)).ok, true);
      refs.push({ appId, className, objectId: object.objectId });
    }
    // Made in one turn: one statement for the two Twins, the Other3 alone; then each answers and is written.
    const outcomes = await Promise.all(refs.map((ref) => store.updateObject(ref, increment)));
    assert.deepEqual(outcomes.map((outcome) => outcome.ok && outcome.object.data.n), [2, 2, 2]);
    for (const ref of refs) assert.equal((await store.getObject(ref, null))?.data.n, 2);
    const named = (await sql<{ name: string }>`SELECT name FROM pg_prepared_statements WHERE name = 'roost_object_updates'`.execute(db)).rows;
    assert.equal(named.length, 1, 'the writes made together ran as one named statement');
    await sql`SET plan_cache_mode = force_generic_plan`.execute(db);
    const plan = (await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE roost_object_updates('[]'::jsonb, 'a', 'b', '{}'::text[])`.execute(db)).rows
      .map((line) => line['QUERY PLAN'])
      .join('\n');
    await sql`RESET plan_cache_mode`.execute(db);
    assert.match(plan, /Index Scan using objects_pkey on objects/, plan);
    assert.doesNotMatch(plan, /Seq Scan on objects/, plan);
  });
});
