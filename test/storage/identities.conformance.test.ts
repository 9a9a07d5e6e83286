// Conformance of the IdentityStore (src/storage/identity-store.ts): the identity index follows a user's
// authData through inserts, updates and deletes, and binds a third-party account to one user at most.
// Runs on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../src/objects/types.ts';
import { freshApp, objectOf, sessionSeal, unique, useStore } from './stores.ts';

const store = useStore();
const secrets = (passwordHash: string | null = null) => ({ passwordHash, session: sessionSeal(unique('s')) });
const userRef = (appId: string, user: StoredObject) => ({ appId, className: '_User', objectId: user.objectId });

test('insertUser binds the identities of authData (weixin and qq by openid, other platforms by uid, else openid, else id); findBound finds them, per application', async () => {
  const appId = await freshApp(store());
  const ann = objectOf('_User', {
    username: 'ann',
    authData: {
      weixin: { openid: 'wx-ann', uid: 'wx-union' },
      weibo: { uid: 'wb-ann', openid: 'wb-open' },
      qq: { openid: 'qq-ann' },
      anonymous: { id: 'anon-ann' },
      bad: { token: 't' },
    },
  });
  assert.deepEqual(await store().identities.insertUser(appId, ann, secrets('h')), { ok: true, object: ann });
  const found = await store().identities.findBound(appId, [
    { platform: 'weixin', uid: 'wx-union' },
    { platform: 'weixin', uid: 'wx-ann' },
    { platform: 'weibo', uid: 'wb-ann' },
    { platform: 'weibo', uid: 'wb-open' },
    { platform: 'qq', uid: 'qq-ann' },
    { platform: 'anonymous', uid: 'anon-ann' },
    { platform: 'qq', uid: 'anon-ann' },
  ]);
  assert.deepEqual(
    found.map((b) => `${b.platform}/${b.uid}/${b.userId}`).sort(),
    [`anonymous/anon-ann/${ann.objectId}`, `qq/qq-ann/${ann.objectId}`, `weibo/wb-ann/${ann.objectId}`, `weixin/wx-ann/${ann.objectId}`],
  );
  const record = await store().accounts.findUser(appId, { userId: ann.objectId });
  assert.deepEqual(record, { user: ann, passwordHash: 'h', sessionCipher: record?.sessionCipher });
  assert.deepEqual(await store().identities.findBound(await freshApp(store()), [{ platform: 'qq', uid: 'qq-ann' }]), []);
  assert.deepEqual(await store().identities.findBound(appId, []), []);
});

test('insertUser: the loser of a race for one account learns field authData and leaves no row behind', async () => {
  const appId = await freshApp(store());
  const users = Array.from({ length: 10 }, (_, i) => objectOf('_User', { username: `u${i}`, authData: { p: { uid: 'same' } } }));
  const outcomes = await Promise.all(users.map((u) => store().identities.insertUser(appId, u, secrets())));
  assert.equal(outcomes.filter((o) => o.ok).length, 1);
  for (const outcome of outcomes.filter((o) => !o.ok)) assert.deepEqual(outcome, { ok: false, reason: 'taken', field: 'authData' });
  const winner = users[outcomes.findIndex((o) => o.ok)];
  assert.deepEqual(await store().identities.findBound(appId, [{ platform: 'p', uid: 'same' }]), [{ platform: 'p', uid: 'same', userId: winner.objectId }]);
  for (const loser of users.filter((u) => u !== winner)) assert.equal(await store().accounts.findUser(appId, { userId: loser.objectId }), null);
  // The same account in another application is another account.
  assert.ok((await store().identities.insertUser(await freshApp(store()), users[0], secrets())).ok);
});

test('insertUser: the other unique fields are reported as the plain store reports them; nothing is bound then', async () => {
  const appId = await freshApp(store());
  await store().identities.insertUser(appId, objectOf('_User', { username: 'taken' }), secrets());
  const loser = objectOf('_User', { username: 'taken', authData: { p: { uid: 'free' } } });
  assert.deepEqual(await store().identities.insertUser(appId, loser, secrets()), { ok: false, reason: 'taken', field: 'username' });
  assert.deepEqual(await store().identities.findBound(appId, [{ platform: 'p', uid: 'free' }]), []);
});

test('identities follow authData on update and delete through the object verbs', async () => {
  const appId = await freshApp(store());
  const ann = objectOf('_User', { username: 'ann', authData: { weixin: { openid: 'wx-ann' }, anonymous: { id: 'anon-ann' } } });
  const bob = objectOf('_User', { username: 'bob' });
  assert.ok((await store().identities.insertUser(appId, ann, secrets())).ok);
  assert.ok((await store().identities.insertUser(appId, bob, secrets('h'))).ok);
  // Bob cannot take Ann's account; his row is not changed.
  const taken = await store().updateObject(userRef(appId, bob), (c) => ({ ...c, data: { ...c.data, authData: { weixin: { openid: 'wx-ann' } } } }));
  assert.deepEqual(taken, { ok: false, reason: 'taken', field: 'authData' });
  assert.deepEqual(await store().getObject(userRef(appId, bob), null), bob);
  // Ann drops anonymous: its id is free, Bob may take it.
  assert.ok((await store().updateObject(userRef(appId, ann), (c) => ({ ...c, data: { ...c.data, authData: { weixin: { openid: 'wx-ann' } } } }))).ok);
  assert.deepEqual(await store().identities.findBound(appId, [{ platform: 'anonymous', uid: 'anon-ann' }]), []);
  assert.ok((await store().updateObject(userRef(appId, bob), (c) => ({ ...c, data: { ...c.data, authData: { anonymous: { id: 'anon-ann' } } } }))).ok);
  assert.deepEqual(await store().identities.findBound(appId, [{ platform: 'anonymous', uid: 'anon-ann' }]), [
    { platform: 'anonymous', uid: 'anon-ann', userId: bob.objectId },
  ]);
  // Deleting Ann frees her accounts.
  assert.ok((await store().deleteObject(userRef(appId, ann), () => null)).ok);
  assert.deepEqual(await store().identities.findBound(appId, [{ platform: 'weixin', uid: 'wx-ann' }]), []);
  const carol = objectOf('_User', { username: 'carol', authData: { weixin: { openid: 'wx-ann' } } });
  assert.ok((await store().identities.insertUser(appId, carol, secrets())).ok);
});
