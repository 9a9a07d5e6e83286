// Conformance of the Store's own verbs (src/storage/store.ts): applications, the server secret and
// objects, with the ACL readers every read and condition applies. Runs on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeSettings } from '../../src/apps/settings.ts';
import type { AppRecord, FindQuery, FoundJson, StoredObject, Where } from '../../src/objects/types.ts';
import type { ObjectRef } from '../../src/storage/store.ts';
import { freshApp, objectOf, unique, useStore } from './stores.ts';

const store = useStore();
const all: Where = { op: 'const', value: true };
const refOf = (appId: string, object: StoredObject): ObjectRef => ({ appId, className: object.className, objectId: object.objectId });
const appRecord = (appId: string, createdAt: number): AppRecord => ({
  appId,
  name: `name-${appId}`,
  appKey: `k-${appId}`,
  masterKey: `m-${appId}`,
  settings: { mixedPush: true },
  createdAt,
  retiredKeys: [],
});

// First in the file: the store has no application yet.
test('createFirstApp: of many nodes starting together exactly one creates the application, and only on an empty store', async () => {
  const candidates = Array.from({ length: 8 }, (_, i) => appRecord(unique('first'), 10 + i));
  const created = await Promise.all(candidates.map((app) => store().createFirstApp(app)));
  assert.equal(created.filter(Boolean).length, 1);
  const winner = candidates[created.indexOf(true)];
  assert.deepEqual(await store().listApps(), [winner]);
  assert.equal(await store().createFirstApp(appRecord(unique('late'), 99)), false);
  assert.equal((await store().listApps()).length, 1);
});

test('applications: createApp, getApp as stored, listApps by creation time, missing ids, a taken id', async () => {
  const later = appRecord(unique('b'), 3_000);
  const earlier = appRecord(unique('a'), 2_000);
  assert.equal(await store().createApp(later), true);
  await store().createApp(earlier);
  assert.deepEqual(await store().getApp(later.appId), later);
  assert.equal(await store().getApp('no-such-app'), null);
  const listed = (await store().listApps()).map((app) => app.appId);
  assert.deepEqual(listed.slice(-2), [earlier.appId, later.appId]);
  assert.equal(await store().createApp({ ...earlier, appKey: 'other', createdAt: 9_000 }), false, 'an application id is unique');
  assert.deepEqual(await store().getApp(earlier.appId), earlier, 'the application that had the id is unchanged');
});

test('updateAppSettings: the change sees the current settings, concurrent changes all land, a refusal stores nothing', async () => {
  const appId = await freshApp(store(), { mixedPush: false });
  let seen: unknown;
  const next = await store().updateAppSettings(appId, (current) => {
    seen = current;
    return { ...mergeSettings(current), commercial: true };
  });
  assert.deepEqual(seen, { mixedPush: false });
  assert.equal((next as { commercial: boolean }).commercial, true);
  assert.equal((await store().getApp(appId))?.settings.commercial, true);
  // Under the row lock: each change reads what the one before it stored.
  await Promise.all(
    Array.from({ length: 10 }, () =>
      store().updateAppSettings(appId, (current) => ({ ...mergeSettings(current), androidIntentHostname: `${current.androidIntentHostname ?? ''}x` })),
    ),
  );
  assert.equal((await store().getApp(appId))?.settings.androidIntentHostname, 'xxxxxxxxxx');
  // The refusal is the caller's own value, handed back untouched: stores word no errors.
  const denial = { why: 'no' };
  const refused = await store().updateAppSettings(appId, () => ({ refused: denial }));
  assert.ok(refused !== null && 'refused' in refused && refused.refused === denial);
  assert.equal((await store().getApp(appId))?.settings.commercial, true);
  assert.equal(await store().updateAppSettings('no-such-app', (current) => current as never), null);
});

test('serverSecret: generated once, the same on every call and every connection', async () => {
  const secrets = await Promise.all(Array.from({ length: 5 }, () => store().serverSecret()));
  assert.ok(secrets[0].length >= 32);
  assert.deepEqual(new Set(secrets).size, 1);
  assert.equal(await store().serverSecret(), secrets[0]);
});

test('insertObject: the object is stored as given; objectId unique per application and class', async () => {
  const appId = await freshApp(store());
  const other = await freshApp(store());
  const doc = objectOf('Doc', { n: 1, nested: { list: [1, 'two', null, { deep: true }] }, s: 'ü\u{1F600}' }, { u1: { read: true } });
  assert.deepEqual(await store().insertObject(appId, doc), { ok: true, object: doc });
  assert.deepEqual(await store().getObject(refOf(appId, doc), null), doc);
  assert.deepEqual(await store().insertObject(appId, { ...doc, data: { n: 2 } }), { ok: false, reason: 'taken', field: 'objectId' });
  assert.equal((await store().getObject(refOf(appId, doc), null))?.data.n, 1);
  assert.equal((await store().insertObject(other, doc)).ok, true, 'another application');
  assert.equal((await store().insertObject(appId, { ...doc, className: 'Other' })).ok, true, 'another class');
  // Ten nodes inserting one objectId at once: one wins, the others learn the field.
  const racing = objectOf('Doc', { n: 0 });
  const outcomes = await Promise.all(Array.from({ length: 10 }, (_, n) => store().insertObject(appId, { ...racing, data: { n } })));
  assert.equal(outcomes.filter((o) => o.ok).length, 1);
  for (const o of outcomes.filter((o) => !o.ok)) assert.deepEqual(o, { ok: false, reason: 'taken', field: 'objectId' });
});

test('insertObject: username, email, mobilePhoneNumber and installationId are unique per application, by name, case-sensitive', async () => {
  const appId = await freshApp(store());
  const other = await freshApp(store());
  assert.equal((await store().insertObject(appId, objectOf('_User', { username: 'ann', email: 'ann@x.org', mobilePhoneNumber: '+100' }))).ok, true);
  const cases: Array<[StoredObject['data'], string]> = [
    [{ username: 'ann' }, 'username'],
    [{ username: 'ann2', email: 'ann@x.org' }, 'email'],
    [{ username: 'ann3', mobilePhoneNumber: '+100' }, 'mobilePhoneNumber'],
  ];
  for (const [data, field] of cases) assert.deepEqual(await store().insertObject(appId, objectOf('_User', data)), { ok: false, reason: 'taken', field });
  assert.equal((await store().insertObject(other, objectOf('_User', { username: 'ann' }))).ok, true, 'another application');
  assert.equal((await store().insertObject(appId, objectOf('Post', { username: 'ann' }))).ok, true, 'not a _User');
  assert.equal((await store().insertObject(appId, objectOf('_User', { username: 'Ann' }))).ok, true, 'case-sensitive');
  assert.equal((await store().insertObject(appId, objectOf('_Installation', { installationId: 'dev1' }))).ok, true);
  assert.deepEqual(await store().insertObject(appId, objectOf('_Installation', { installationId: 'dev1' })), {
    ok: false,
    reason: 'taken',
    field: 'installationId',
  });
  // Concurrent sign-ups of one name: one wins.
  const outcomes = await Promise.all(Array.from({ length: 10 }, () => store().insertObject(appId, objectOf('_User', { username: 'race' }))));
  assert.equal(outcomes.filter((o) => o.ok).length, 1);
  for (const o of outcomes.filter((o) => !o.ok)) assert.deepEqual(o, { ok: false, reason: 'taken', field: 'username' });
});

test('getObject and getObjectJson: the readers of each row decide; null readers (master) see all; missing and implausible ids are null', async () => {
  const appId = await freshApp(store());
  const open = objectOf('Doc', { n: 1, text: 'a"b\\c' });
  const mine = objectOf('Doc', { n: 2 }, { u1: { read: true, write: true } });
  const role = objectOf('Doc', { n: 3 }, { 'role:admin': { read: true } });
  const writeOnly = objectOf('Doc', { n: 4 }, { u2: { write: true }, '*': { write: true } });
  for (const o of [open, mine, role, writeOnly]) await store().insertObject(appId, o);
  const cases: Array<[StoredObject, Array<readonly string[] | null>, Array<readonly string[]>]> = [
    [open, [null, ['*'], ['*', 'u9']], []],
    [mine, [null, ['*', 'u1'], ['u1']], [['*'], ['*', 'u2']]],
    [role, [null, ['*', 'u2', 'role:admin']], [['*', 'u2'], ['*', 'role:other']]],
    [writeOnly, [null], [['*'], ['*', 'u2']]],
  ];
  for (const [object, readable, unreadable] of cases) {
    for (const readers of readable) {
      assert.deepEqual(await store().getObject(refOf(appId, object), readers), object, `${object.data.n} by ${readers}`);
      const json = await store().getObjectJson(refOf(appId, object), readers);
      assert.deepEqual(json && { createdAt: json.createdAt, updatedAt: json.updatedAt, data: JSON.parse(json.dataJson) }, {
        createdAt: object.createdAt,
        updatedAt: object.updatedAt,
        data: object.data,
      });
    }
    for (const readers of unreadable) {
      assert.equal(await store().getObject(refOf(appId, object), readers), null, `${object.data.n} hidden from ${readers}`);
      assert.equal(await store().getObjectJson(refOf(appId, object), readers), null);
    }
  }
  for (const ref of [
    { ...refOf(appId, open), objectId: 'missing' },
    { ...refOf(appId, open), className: 'Other' },
    { ...refOf(appId, open), appId: 'no-such-app' },
    { ...refOf(appId, open), objectId: 'bad\u0000id' },
    { ...refOf(appId, open), objectId: '' },
  ]) {
    assert.equal(await store().getObject(ref, null), null);
    assert.equal(await store().getObjectJson(ref, null), null);
  }
});

test('getObjects: the readable ones among many ids of one class, in one call; duplicates, missing, other classes and implausible ids left out', async () => {
  const appId = await freshApp(store());
  const open = objectOf('Doc', { n: 1 });
  const mine = objectOf('Doc', { n: 2 }, { u1: { read: true } });
  const role = objectOf('Doc', { n: 3 }, { 'role:admin': { read: true } });
  const other = objectOf('Other', { n: 4 });
  for (const o of [open, mine, role, other]) await store().insertObject(appId, o);
  const ids = [open, mine, role, other].map((o) => o.objectId);
  const asked = [...ids, open.objectId, 'missing', 'bad\u0000id', ''];
  const read = async (readers: readonly string[] | null) =>
    (await store().getObjects(appId, 'Doc', asked, readers)).sort((a, b) => (a.data.n as number) - (b.data.n as number));
  assert.deepEqual(await read(null), [open, mine, role]);
  assert.deepEqual(await read(['*']), [open]);
  assert.deepEqual(await read(['*', 'u1']), [open, mine]);
  assert.deepEqual(await read(['*', 'role:admin']), [open, role]);
  assert.deepEqual(await store().getObjects(appId, 'Doc', [], null), []);
  assert.deepEqual(await store().getObjects(appId, 'Nothing', ids, null), []);
  assert.deepEqual(await store().getObjects('no-such-app', 'Doc', ids, null), []);
  // A level of a thousand results each holding a few pointers: still one call, past any per-statement id limit.
  const many = Array.from({ length: 5000 }, (_, i) => `id${i}`);
  assert.deepEqual(await store().getObjects(appId, 'Doc', [...many, open.objectId], ['*']), [open]);
});

test('findObjects: where, readers, order, skip and limit; countObjects and classExists agree', async () => {
  const appId = await freshApp(store());
  const rows = [
    objectOf('Item', { n: 3, tag: 'a' }),
    objectOf('Item', { n: 1, tag: 'b' }),
    objectOf('Item', { n: 2, tag: 'a' }, { u1: { read: true } }),
    objectOf('Item', { n: 2, tag: 'b' }),
    objectOf('Item', { n: 5, tag: 'a' }, { u2: { write: true } }),
  ];
  for (const o of rows) await store().insertObject(appId, o);
  await store().insertObject(appId, objectOf('Else', { n: 1 }));
  const find = (query: Partial<FindQuery>) =>
    store()
      .findObjects(appId, 'Item', { where: all, order: [], limit: 100, skip: 0, readers: null, ...query })
      .then((found) => found.map((o) => o.objectId));
  const ids = (...indexes: number[]) => indexes.map((i) => rows[i].objectId);
  const byN = [{ path: ['n'], descending: false }, { path: ['objectId'], descending: false }];
  assert.deepEqual(await find({ order: byN }), ids(1, 2, 3, 0, 4));
  assert.deepEqual(await find({ order: [{ path: ['n'], descending: true }, { path: ['objectId'], descending: true }] }), ids(4, 0, 3, 2, 1));
  assert.deepEqual(await find({ order: byN, skip: 1, limit: 2 }), ids(2, 3));
  assert.deepEqual(await find({ order: byN, readers: ['*'] }), ids(1, 3, 0));
  assert.deepEqual(await find({ order: byN, readers: ['*', 'u1'] }), ids(1, 2, 3, 0));
  const tagA: Where = { op: 'eq', path: ['tag'], value: 'a' };
  assert.deepEqual(await find({ order: byN, where: tagA }), ids(2, 0, 4));
  assert.deepEqual(await find({ order: byN, where: tagA, readers: ['*'] }), ids(0));
  assert.deepEqual(await find({ order: byN, where: { op: 'gt', path: ['n'], value: 2 } }), ids(0, 4));
  assert.deepEqual((await store().findObjects(appId, 'Item', { where: all, order: byN, limit: 1, skip: 0, readers: null }))[0], rows[1]);
  assert.equal(await store().countObjects(appId, 'Item', all, null), 5);
  assert.equal(await store().countObjects(appId, 'Item', all, ['*']), 3);
  assert.equal(await store().countObjects(appId, 'Item', tagA, ['*', 'u1']), 2);
  assert.equal(await store().countObjects(appId, 'Nothing', all, null), 0);
  assert.deepEqual(await store().findObjects(appId, 'Nothing', { where: all, order: [], limit: 10, skip: 0, readers: null }), []);
  assert.equal(await store().classExists(appId, 'Item'), true);
  assert.equal(await store().classExists(appId, 'Nothing'), false);
  assert.equal(await store().classExists(await freshApp(store()), 'Item'), false);
});

test('updateObject: stores what the change returns, under a row lock (concurrent changes all land)', async () => {
  const appId = await freshApp(store());
  const counter = objectOf('Counter', { n: 0 });
  await store().insertObject(appId, counter);
  const ref = refOf(appId, counter);
  const outcomes = await Promise.all(
    Array.from({ length: 25 }, () => store().updateObject(ref, (current) => ({ ...current, updatedAt: current.updatedAt + 1, data: { n: (current.data.n as number) + 1 } }))),
  );
  assert.ok(outcomes.every((o) => o.ok));
  const stored = await store().getObject(ref, null);
  assert.equal(stored?.data.n, 25);
  assert.equal(stored?.updatedAt, counter.updatedAt + 25);
  // The returned object is what was stored; a new ACL changes who reads it.
  const hidden = await store().updateObject(ref, (current) => ({ ...current, acl: { u1: { read: true } } }));
  assert.deepEqual(hidden, { ok: true, object: stored && { ...stored, acl: { u1: { read: true } } } });
  assert.equal(await store().getObject(ref, ['*']), null);
  assert.equal((await store().findObjects(appId, 'Counter', { where: all, order: [], limit: 10, skip: 0, readers: ['*'] })).length, 0);
  assert.equal((await store().getObject(ref, ['*', 'u1']))?.data.n, 25);
});

test('updateObject outcomes: refused before the condition, conditionFailed, notFound, taken; none changes the row', async () => {
  const appId = await freshApp(store());
  await store().insertObject(appId, objectOf('_User', { username: 'ann' }));
  const doc = objectOf('_User', { username: 'zed', n: 1 });
  await store().insertObject(appId, doc);
  const ref = refOf(appId, doc);
  const denial = { why: 'aclWriteDenied' };
  const refused = await store().updateObject(ref, () => ({ refused: denial }));
  assert.deepEqual(refused, { ok: false, reason: 'refused', refusal: denial });
  assert.equal(refused.ok === false && refused.reason === 'refused' && refused.refusal, denial, 'handed back untouched');
  const condition = { where: { op: 'eq', path: ['n'], value: 2 } as Where, readers: null };
  assert.deepEqual(await store().updateObject(ref, (c) => ({ ...c, data: { ...c.data, n: 9 } }), condition), { ok: false, reason: 'conditionFailed' });
  // Review of e2b2d15 (ACL oracle): the refusal comes before the condition, whatever it says.
  assert.deepEqual(await store().updateObject(ref, () => ({ refused: denial }), condition), { ok: false, reason: 'refused', refusal: denial });
  let called = false;
  const missing = await store().updateObject({ ...ref, objectId: 'nope' }, (c) => ((called = true), c), condition);
  assert.deepEqual(missing, { ok: false, reason: 'notFound' });
  assert.equal(called, false, 'no change runs for a missing row');
  assert.deepEqual(await store().updateObject({ ...ref, objectId: 'bad\u0000id' }, (c) => c), { ok: false, reason: 'notFound' });
  assert.deepEqual(await store().updateObject(ref, (c) => ({ ...c, data: { username: 'ann' } })), { ok: false, reason: 'taken', field: 'username' });
  assert.deepEqual(await store().getObject(ref, null), doc);
  const met = await store().updateObject(ref, (c) => ({ ...c, data: { ...c.data, n: 2 } }), { where: { op: 'eq', path: ['n'], value: 1 }, readers: null });
  assert.equal(met.ok, true);
  // A freed unique value can be taken by another row.
  assert.equal((await store().updateObject(ref, (c) => ({ ...c, data: { username: 'zed2' } }))).ok, true);
  assert.equal((await store().insertObject(appId, objectOf('_User', { username: 'zed' }))).ok, true);
});

// Review of e2b2d15 (ACL oracle): a condition is never met by a row its readers may not read, even a true one.
test('a condition is evaluated with its readers: an unreadable row never meets it', async () => {
  const appId = await freshApp(store());
  const doc = objectOf('Hidden', { secret: 's3' }, { u1: { read: true, write: true }, '*': { write: true } });
  await store().insertObject(appId, doc);
  const ref = refOf(appId, doc);
  const matching: Where = { op: 'eq', path: ['secret'], value: 's3' };
  const bump = (c: StoredObject) => ({ ...c, data: { ...c.data, n: 1 } });
  for (const readers of [['*'], ['*', 'u2']]) {
    assert.deepEqual(await store().updateObject(ref, bump, { where: matching, readers }), { ok: false, reason: 'conditionFailed' });
    assert.deepEqual(await store().deleteObject(ref, () => null, { where: matching, readers }), { ok: false, reason: 'conditionFailed' });
  }
  assert.equal((await store().updateObject(ref, bump, { where: matching, readers: ['*', 'u1'] })).ok, true);
  assert.equal((await store().deleteObject(ref, () => null, { where: matching, readers: null })).ok, true);
});

// SQLite's get-by-id runs straight on the one connection (src/storage/sqlite/sqlite-store.ts); inside an
// open write transaction it would see that transaction's uncommitted row, here one that is rolled back
// (the user's row is updated, then its identity row collides with another user's).
test('reads during an update never see a change that is rolled back', async () => {
  const appId = await freshApp(store());
  const authData = { weixin: { openid: 'rolled-back' } };
  await store().insertObject(appId, objectOf('_User', { username: 'holder' }));
  const holder = objectOf('_User', { username: 'holder2' });
  await store().insertObject(appId, holder);
  await store().updateObject(refOf(appId, holder), (current) => ({ ...current, data: { ...current.data, authData } }));
  const doc = objectOf('_User', { username: 'free' });
  await store().insertObject(appId, doc);
  const ref = refOf(appId, doc);
  const reads: Array<Promise<StoredObject | null>> = [];
  // A page read as stored too (SQLite: SqliteStore.preparedRows, straight on the connection outside transactions).
  const pages: Array<Promise<FoundJson[]>> = [];
  const page = { where: { op: 'eq', path: ['username'], value: 'free' }, order: [], limit: 5, skip: 0, readers: null } as FindQuery;
  const readEachTurn = (left: number) => {
    reads.push(store().getObject(ref, null));
    pages.push(store().findObjectsJson(appId, '_User', page));
    if (left > 0) queueMicrotask(() => readEachTurn(left - 1));
  };
  const taken = await store().updateObject(ref, (current) => {
    readEachTurn(300);
    return { ...current, data: { ...current.data, authData } };
  });
  assert.deepEqual(taken, { ok: false, reason: 'taken', field: 'authData' });
  const seen = new Set((await Promise.all(reads)).map((read) => JSON.stringify(read?.data)));
  assert.deepEqual([...seen], [JSON.stringify({ username: 'free' })]);
  const seenPages = new Set((await Promise.all(pages)).map((found) => JSON.stringify(found.map((one) => one.dataJson))));
  assert.deepEqual([...seenPages], [JSON.stringify([JSON.stringify({ username: 'free' })])]);
});

test('deleteObject: guard, condition, the deleted object returned, then notFound; concurrent deletes: one wins', async () => {
  const appId = await freshApp(store());
  const doc = objectOf('Gone', { n: 1 });
  await store().insertObject(appId, doc);
  const ref = refOf(appId, doc);
  let guarded: StoredObject | null = null;
  assert.deepEqual(await store().deleteObject(ref, (current) => ((guarded = current), { refused: 'aclWriteDenied' })), {
    ok: false,
    reason: 'refused',
    refusal: 'aclWriteDenied',
  });
  assert.deepEqual(guarded, doc, 'the guard sees the current row');
  assert.deepEqual(await store().deleteObject(ref, () => null, { where: { op: 'eq', path: ['n'], value: 9 }, readers: null }), {
    ok: false,
    reason: 'conditionFailed',
  });
  assert.deepEqual(await store().getObject(ref, null), doc);
  assert.deepEqual(await store().deleteObject(ref, () => null), { ok: true, object: doc });
  assert.deepEqual(await store().deleteObject(ref, () => null), { ok: false, reason: 'notFound' });
  assert.equal(await store().getObject(ref, null), null);
  assert.deepEqual(await store().deleteObject({ ...ref, objectId: 'bad\u0000id' }, () => null), { ok: false, reason: 'notFound' });
  const racing = objectOf('Gone', { n: 2 });
  await store().insertObject(appId, racing);
  const outcomes = await Promise.all(Array.from({ length: 8 }, () => store().deleteObject(refOf(appId, racing), () => null)));
  assert.equal(outcomes.filter((o) => o.ok).length, 1);
  for (const o of outcomes.filter((o) => !o.ok)) assert.deepEqual(o, { ok: false, reason: 'notFound' });
  // A deleted user's unique values are free again.
  const user = objectOf('_User', { username: 'once' });
  await store().insertObject(appId, user);
  assert.equal((await store().deleteObject(refOf(appId, user), () => null)).ok, true);
  assert.equal((await store().insertObject(appId, objectOf('_User', { username: 'once' }))).ok, true);
});
