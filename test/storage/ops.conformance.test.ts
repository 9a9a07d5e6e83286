// Conformance of the OpsStore (src/storage/ops-store.ts): an import batch answers one status per record
// in order (inserted, exists, conflict by field), keeps secrets, sessions, identities and ACL readers as
// a write would, and is safe to re-run; the queue gauges count what the push verbs left. Runs on the
// database the run selects, in the batch format that store loads (prepareImportBatch).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../src/objects/types.ts';
import type { ImportRecord } from '../../src/storage/ops-store.ts';
import type { NewPush } from '../../src/push/types.ts';
import { prepareImportBatch } from '../../src/storage/import-batch.ts';
import { freshApp, objectOf, sessionSeal, unique, useStore } from './stores.ts';

const store = useStore();

const record = (object: StoredObject, secrets: Partial<Omit<ImportRecord, 'object'>> = {}): ImportRecord => ({
  object,
  passwordHash: null,
  session: null,
  ...secrets,
});

function importBatch(appId: string, className: string, records: ImportRecord[]) {
  return store().ops.importObjects(prepareImportBatch(store().kind, appId, className, records));
}

const inserted = { kind: 'inserted', droppedAuthData: [] };
const exists = { kind: 'exists' };

test('importObjects: users with hashes, sessions and identities; an account another user holds is dropped; a re-run skips all', async () => {
  const appId = await freshApp(store());
  const session = sessionSeal(unique('s'));
  const ann = objectOf('_User', { username: 'ann', email: 'ann@x.org', authData: { weixin: { openid: 'wx1' }, qq: { openid: 'qq1' } } });
  const bob = objectOf('_User', { username: 'bob', authData: { weixin: { openid: 'wx1' }, anonymous: { id: 'anon-bob' } } });
  const annAgain = { ...ann, data: { username: 'ann-again' } };
  const records = [record(ann, { passwordHash: '$legacy$hash', session }), record(bob), record(annAgain)];
  assert.deepEqual(await importBatch(appId, '_User', records), [inserted, { kind: 'inserted', droppedAuthData: ['weixin'] }, exists]);

  assert.deepEqual(await store().accounts.findUser(appId, { field: 'username', value: 'ann' }), { user: ann, passwordHash: '$legacy$hash', sessionCipher: session.cipher });
  assert.deepEqual((await store().accounts.userBySession(appId, session.digest))?.object, ann);
  const storedBob = await store().accounts.findUser(appId, { userId: bob.objectId });
  assert.deepEqual(storedBob?.user.data.authData, { anonymous: { id: 'anon-bob' } });
  assert.equal(storedBob?.passwordHash, null);
  assert.deepEqual(
    (await store().identities.findBound(appId, [{ platform: 'weixin', uid: 'wx1' }, { platform: 'qq', uid: 'qq1' }, { platform: 'anonymous', uid: 'anon-bob' }]))
      .map((b) => `${b.platform}/${b.userId}`)
      .sort(),
    [`anonymous/${bob.objectId}`, `qq/${ann.objectId}`, `weixin/${ann.objectId}`],
  );
  // The imported users are ordinary users: their unique values are taken for sign-ups.
  assert.deepEqual(await store().identities.insertUser(appId, objectOf('_User', { username: 'x', email: 'ann@x.org' }), { passwordHash: 'h', session: sessionSeal(unique('s')) }), {
    ok: false,
    reason: 'taken',
    field: 'email',
  });

  assert.deepEqual(await importBatch(appId, '_User', records), [exists, exists, exists], 're-run');
  assert.deepEqual(await importBatch(appId, '_User', []), []);
  await store().ops.finishImport();
});

test('importObjects: a record losing on a unique value is a conflict naming it; the rest of the batch is stored', async () => {
  const appId = await freshApp(store());
  const session = sessionSeal(unique('s'));
  await store().identities.insertUser(appId, objectOf('_User', { username: 'held', mobilePhoneNumber: '+8613900000009' }), { passwordHash: 'h', session });
  await store().insertObject(appId, objectOf('_Installation', { installationId: 'dev-held' }));
  const fine = objectOf('_User', { username: 'fine' });
  const statuses = await importBatch(appId, '_User', [
    record(objectOf('_User', { username: 'held' })),
    record(fine),
    record(objectOf('_User', { username: 'other', mobilePhoneNumber: '+8613900000009' })),
    record(objectOf('_User', { username: 'stolen-session' }), { session }),
  ]);
  assert.deepEqual(statuses, [
    { kind: 'conflict', field: 'username' },
    inserted,
    { kind: 'conflict', field: 'mobilePhoneNumber' },
    { kind: 'conflict', field: 'sessionToken' },
  ]);
  assert.deepEqual(await store().accounts.findUser(appId, { userId: fine.objectId }).then((r) => r?.user), fine);
  const device = objectOf('_Installation', { installationId: 'dev-new' });
  assert.deepEqual(await importBatch(appId, '_Installation', [record(objectOf('_Installation', { installationId: 'dev-held' })), record(device)]), [
    { kind: 'conflict', field: 'installationId' },
    inserted,
  ]);
  assert.deepEqual(await store().getObject({ appId, className: '_Installation', objectId: device.objectId }, null), device);
});

test('importObjects: objects keep their ACL readers; presentObjectIds names those of a class already stored', async () => {
  const appId = await freshApp(store());
  const open = objectOf('Post', { title: 'open', n: 1 });
  const mine = objectOf('Post', { title: 'mine', n: 2 }, { u1: { read: true, write: true } });
  const hidden = objectOf('Post', { title: 'hidden', n: 3 }, { 'role:admin': { write: true } });
  assert.deepEqual(await importBatch(appId, 'Post', [open, mine, hidden].map((o) => record(o))), [inserted, inserted, inserted]);
  const ref = (o: StoredObject) => ({ appId, className: 'Post', objectId: o.objectId });
  assert.deepEqual(await store().getObject(ref(open), ['*']), open);
  assert.equal(await store().getObject(ref(mine), ['*']), null);
  assert.deepEqual(await store().getObject(ref(mine), ['*', 'u1']), mine);
  assert.equal(await store().getObject(ref(hidden), ['*', 'u1', 'role:admin']), null);
  assert.deepEqual(await store().getObject(ref(hidden), null), hidden);
  const titles = await store().findObjects(appId, 'Post', { where: { op: 'const', value: true }, order: [{ path: ['n'], descending: false }], limit: 10, skip: 0, readers: ['*', 'u1'] });
  assert.deepEqual(titles.map((o) => o.data.title), ['open', 'mine']);
  assert.equal(await store().countObjects(appId, 'Post', { op: 'const', value: true }, ['*']), 1);

  const asked = [open.objectId, 'missing', hidden.objectId, open.objectId];
  assert.deepEqual([...(await store().ops.presentObjectIds(appId, 'Post', asked))].sort(), [open.objectId, hidden.objectId].sort());
  assert.deepEqual([...(await store().ops.presentObjectIds(appId, 'Other', asked))], []);
  assert.deepEqual([...(await store().ops.presentObjectIds(await freshApp(store()), 'Post', asked))], []);
  assert.deepEqual([...(await store().ops.presentObjectIds(appId, 'Post', []))], []);
  // A re-run that skips the present ones, as the import does, still answers each record.
  assert.deepEqual(await importBatch(appId, 'Post', [record(open), record(objectOf('Post', { title: 'new' }))]), [exists, inserted]);
});

test('queueDepth: pushes due, pushes waiting for their time, pages not yet delivered', async () => {
  const now = 5_000_000;
  assert.deepEqual(await store().ops.queueDepth(now), { due: 0, scheduled: 0, pagesPending: 0 });
  const appId = await freshApp(store());
  for (let i = 0; i < 3; i++) await store().insertObject(appId, objectOf('_Installation', { installationId: unique('dev') }));
  const push = (pushTime: number, status: NewPush['status']): NewPush => ({
    appId,
    objectId: unique('n'),
    createdAt: now,
    pushTime,
    expiresAt: null,
    status,
    selector: { op: 'const', value: true },
    content: { data: { alert: 'x' } },
    request: {},
    reqId: null,
    dedupeMs: 0,
  });
  await store().push.createPush(push(now, 'in-queue'));
  await store().push.createPush(push(now + 1000, 'scheduled'));
  assert.deepEqual(await store().ops.queueDepth(now), { due: 1, scheduled: 1, pagesPending: 0 });
  const claimed = await store().push.claimPage({ now, pageSize: 2, leaseMs: 30_000 });
  assert.ok(claimed?.kind === 'page' && !claimed.last);
  assert.deepEqual(await store().ops.queueDepth(now), { due: 1, scheduled: 1, pagesPending: 1 });
  assert.deepEqual(await store().ops.queueDepth(now + 1000), { due: 2, scheduled: 0, pagesPending: 1 });
  const route = () => ({ channel: [], vendor: [], counts: {} });
  // Routed to nobody: the page is done at once.
  assert.equal(await store().push.fillPage(claimed.page, { now, route }), null);
  assert.deepEqual(await store().ops.queueDepth(now), { due: 1, scheduled: 1, pagesPending: 0 });
  for (;;) {
    const next = await store().push.claimPage({ now: now + 1000, pageSize: 2, leaseMs: 30_000 });
    if (!next) break;
    if (next.kind === 'page') await store().push.fillPage(next.page, { now: now + 1000, route });
  }
  assert.deepEqual(await store().ops.queueDepth(now + 1000), { due: 0, scheduled: 0, pagesPending: 0 });
});
