// Third-party sign-in as the SDKs send it (issue #15 point 6; reference leancloud-storage-wire.md §12): the
// field that names an account per platform key (openid for weixin and qq, uid for every other key such as
// weixin_1), union-id sign-in as the hosted service recorded it, failOnNotExist, anonymous users losing
// `anonymous` when they link or get a password, and authData sign-in outside the unverified-email rule.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { startServer, type TestServer } from './helpers/harness.ts';
import { uniqueName } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const id = (prefix: string) => `${prefix}${randomBytes(6).toString('hex')}`;
const signIn = (authData: unknown, query?: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  server.client.post('/1.1/users', { authData, ...extra }, { query });
/** An entry as the JS SDK's loginWithAuthDataAndUnionId sends it (mergeUnionDataIntoAuthData). */
const unionEntry = (uid: string, unionid: string, main: boolean) => ({
  uid,
  access_token: 'access_token',
  expires_in: 1382686496,
  platform: 'weixin',
  unionid,
  main_account: main,
});

test('the hosted recording: weixin_1 (uid, main account) creates the user and _weixin_unionid; weixin_2 with the union id signs in to it', async () => {
  const unionid = id('unionid');
  const username = uniqueName('k0q9og8q');
  const weixin1 = unionEntry(id('openid1'), unionid, true);
  const first = await signIn({ weixin_1: weixin1 }, undefined, { username });
  assert.equal(first.status, 201, first.text);
  assert.equal(first.headers.get('location'), `/1.1/classes/_User/${first.body.objectId}`);
  assert.equal(first.body.username, username);
  assert.deepEqual(first.body.authData, { weixin_1: weixin1, _weixin_unionid: { uid: unionid } });
  assert.equal(first.body.mobilePhoneVerified, false);
  assert.match(first.body.sessionToken, /^[a-z0-9]{25}$/);

  const weixin2 = unionEntry(id('openid2'), unionid, false);
  const second = await signIn({ weixin_2: weixin2 });
  assert.equal(second.status, 200, second.text);
  assert.equal(second.body.objectId, first.body.objectId);
  assert.equal(second.body.sessionToken, first.body.sessionToken);
  assert.equal(second.body.username, username);
  assert.deepEqual(second.body.authData, { weixin_1: weixin1, _weixin_unionid: { uid: unionid }, weixin_2: weixin2 });
  assert.ok(second.body.updatedAt > first.body.updatedAt, 'the merge bumps updatedAt');

  // Each key now signs in directly, also with failOnNotExist.
  for (const authData of [{ weixin_1: weixin1 }, { weixin_2: weixin2 }]) {
    const again = await signIn(authData, { failOnNotExist: 'true' });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.objectId, first.body.objectId);
  }
  const stored = await server.master.get(`/1.1/users/${first.body.objectId}`);
  assert.deepEqual(Object.keys(stored.body.authData).sort(), ['_weixin_unionid', 'weixin_1', 'weixin_2']);
});

test('failOnNotExist without a match: 400 {"code":211,"error":"Could not find user."}, and nothing is created', async () => {
  const cases = [
    { weixin_1: { uid: id('openid1'), access_token: 'access_token', expires_in: 1382686496 } },
    { weixin_1: unionEntry(id('openid1'), id('unionid'), true) },
    { weixin: { openid: id('o'), access_token: 't' } },
    { anonymous: { id: randomUUID() } },
  ];
  for (const authData of cases) {
    for (let attempt = 0; attempt < 2; attempt++) {
      const missing = await signIn(authData, { failOnNotExist: 'true' });
      assert.equal(missing.status, 400, JSON.stringify(authData));
      assert.deepEqual(missing.body, { code: 211, error: 'Could not find user.' });
    }
  }
});

test('weixin and qq are matched on openid, every other key (weixin_1, weixin_app, wxleanoffice…) on uid', async () => {
  for (const key of ['weixin', 'qq']) {
    const openid = id('o');
    const created = await signIn({ [key]: { openid, uid: id('u'), access_token: 't' } });
    assert.equal(created.status, 201, created.text);
    const sameOpenid = await signIn({ [key]: { openid, uid: id('u'), access_token: 't2' } });
    assert.equal(sameOpenid.status, 200, `${key}: ${sameOpenid.text}`);
    assert.equal(sameOpenid.body.objectId, created.body.objectId);
    const noOpenid = await signIn({ [key]: { uid: id('u'), access_token: 't' } });
    assert.equal(noOpenid.status, 400);
    assert.deepEqual(noOpenid.body, { code: 250, error: `authData.${key}.openid is missing.` });
  }
  for (const key of ['weixin_1', 'weixin_app', 'wxleanoffice', 'weibo', 'github']) {
    const uid = id('u');
    const openid = id('o');
    const created = await signIn({ [key]: { uid, openid, access_token: 't' } });
    assert.equal(created.status, 201, `${key}: ${created.text}`);
    const sameUid = await signIn({ [key]: { uid, openid: id('o'), access_token: 't' } });
    assert.equal(sameUid.status, 200, `${key}: ${sameUid.text}`);
    assert.equal(sameUid.body.objectId, created.body.objectId);
    const sameOpenid = await signIn({ [key]: { uid: id('u'), openid, access_token: 't' } });
    assert.equal(sameOpenid.status, 201, `${key}: ${sameOpenid.text}`);
    assert.notEqual(sameOpenid.body.objectId, created.body.objectId);
  }
  // A custom key without uid is still read by its openid, as Roost always did.
  const openid = id('o');
  const byOpenid = await signIn({ weixin_app: { openid, access_token: 't' } });
  assert.equal(byOpenid.status, 201, byOpenid.text);
  assert.equal((await signIn({ weixin_app: { openid, access_token: 't' } })).body.objectId, byOpenid.body.objectId);
  const neither = await signIn({ weixin_1: { access_token: 't' } });
  assert.equal(neither.status, 400);
  assert.deepEqual(neither.body, { code: 250, error: 'authData.weixin_1.uid is missing.' });
});

test('keys the hosted service did not know need nothing but their id; its own names keep their required fields', async () => {
  for (const authData of [
    { weixin_1: { uid: id('u') } },
    { wx_mini: { openid: id('o'), session_key: 'k' } },
    { leanoffice: { openid: id('o') } },
    { qq_app: { uid: id('u'), expires_in: 7200 } },
  ]) {
    const created = await signIn(authData);
    assert.equal(created.status, 201, `${JSON.stringify(authData)}: ${created.text}`);
  }
  const typed = await signIn({ weixin_1: { uid: id('u'), expires_in: {} } });
  assert.equal(typed.status, 400);
  assert.deepEqual(typed.body, { code: 111, error: 'authData.weixin_1.expires_in must be a string or a number.' });
  // The SDKs' mini-app sign-in sends a code for the server to exchange: not supported, and said so.
  const miniApp = await signIn({ lc_weapp: { code: 'js-code' } });
  assert.equal(miniApp.status, 400);
  assert.deepEqual(miniApp.body, {
    code: 250,
    error: 'authData.lc_weapp holds a login code, no openid: Roost does not exchange mini-app login codes.',
  });
  // What the hosted mini-app sign-in stored (an import's users) signs in by its openid.
  const stored = { openid: id('o'), session_key: 'k', expires_in: 7200 };
  const weapp = await signIn({ lc_weapp: stored });
  assert.equal(weapp.status, 201, weapp.text);
  assert.equal((await signIn({ lc_weapp: { ...stored, uid: id('u') } })).body.objectId, weapp.body.objectId);
  const builtin = await signIn({ weixin: { openid: id('o') } });
  assert.equal(builtin.status, 400);
  assert.deepEqual(builtin.body, { code: 111, error: 'authData.weixin.access_token is missing.' });
});

test('an entry linked with both uid and openid is found by the field its key is matched on', async () => {
  const created = await signIn({ myplatform: { uid: id('u'), access_token: 't' } });
  const session = created.body.sessionToken;
  const weixin1 = { uid: id('u'), openid: id('o'), access_token: 't' };
  const weixin = { uid: id('u'), openid: id('o'), access_token: 't' };
  const linked = await server.client.put(`/1.1/users/${created.body.objectId}`, { authData: { weixin_1: weixin1, weixin } }, { session });
  assert.equal(linked.status, 200, linked.text);
  // An ordinary update rewrites the row; the identities stay those sign-in looks up.
  await server.client.put(`/1.1/users/${created.body.objectId}`, { city: 'Oslo' }, { session });
  for (const authData of [{ weixin_1: { uid: weixin1.uid } }, { weixin: { openid: weixin.openid, access_token: 't' } }]) {
    const found = await signIn(authData, { failOnNotExist: 'true' });
    assert.equal(found.status, 200, `${JSON.stringify(authData)}: ${found.text}`);
    assert.equal(found.body.objectId, created.body.objectId);
  }
  const bob = await signIn({ myplatform: { uid: id('u'), access_token: 't' } });
  const taken = await server.client.put(
    `/1.1/users/${bob.body.objectId}`,
    { authData: { weixin_1: { uid: weixin1.uid, access_token: 'x' } } },
    { session: bob.body.sessionToken },
  );
  assert.equal(taken.status, 400);
  assert.equal(taken.body.code, 208);
});

test('union id through a link: an anonymous user links weixin_1 as main account, loses anonymous, and weixin_2 reaches it', async () => {
  const anon = await signIn({ anonymous: { id: randomUUID() } });
  assert.equal(anon.status, 201, anon.text);
  const session = anon.body.sessionToken;
  const unionid = id('unionid');
  const weixin1 = unionEntry(id('openid1'), unionid, true);
  const linked = await server.client.put(`/1.1/classes/_User/${anon.body.objectId}`, { authData: { weixin_1: weixin1 } }, {
    session,
    query: { new: 'true' },
  });
  assert.equal(linked.status, 200, linked.text);
  assert.deepEqual(linked.body.authData, { weixin_1: weixin1, _weixin_unionid: { uid: unionid } });
  const second = await signIn({ weixin_2: unionEntry(id('openid2'), unionid, false) });
  assert.equal(second.status, 200, second.text);
  assert.equal(second.body.objectId, anon.body.objectId);
  assert.equal(second.body.sessionToken, session);
  assert.deepEqual(Object.keys(second.body.authData).sort(), ['_weixin_unionid', 'weixin_1', 'weixin_2']);
});

test('anonymous is dropped by linking any platform, by a first password, and by a first password given with a link', async () => {
  for (const platform of ['github', 'weixin_1', 'weibo']) {
    const anon = await signIn({ anonymous: { id: randomUUID() } });
    const entry = { uid: id('u'), access_token: 't' };
    const linked = await server.client.put(`/1.1/users/${anon.body.objectId}`, { [`authData.${platform}`]: entry }, {
      session: anon.body.sessionToken,
    });
    assert.equal(linked.status, 200, linked.text);
    const me = await server.client.get('/1.1/users/me', { session: anon.body.sessionToken });
    assert.deepEqual(me.body.authData, { [platform]: entry });
  }
  const anon = await signIn({ anonymous: { id: randomUUID() } });
  const password = await server.client.put(`/1.1/users/${anon.body.objectId}`, { password: 'first-password' }, {
    session: anon.body.sessionToken,
  });
  assert.equal(password.status, 200, password.text);
  const me = await server.client.get('/1.1/users/me', { session: anon.body.sessionToken });
  assert.deepEqual(me.body.authData, {});
  const login = await server.client.post('/1.1/login', { username: anon.body.username, password: 'first-password' });
  assert.equal(login.status, 200, login.text);
  assert.equal(login.body.objectId, anon.body.objectId);
});

test('authData sign-in is not a password login: the unverified-email rule (216) does not apply to it', async () => {
  const entry = { github: { uid: id('u'), access_token: 't' } };
  const created = await signIn(entry);
  const session = created.body.sessionToken;
  const email = `${id('mail')}@example.com`;
  const update = await server.client.put(`/1.1/users/${created.body.objectId}`, { email, password: 'pw-216-check' }, { session });
  assert.equal(update.status, 200, update.text);
  const on = await server.master.put('/1.1/settings', { preventLoginWithUnverifiedEmail: true });
  assert.equal(on.status, 200, on.text);
  try {
    const login = await server.client.post('/1.1/login', { email, password: 'pw-216-check' });
    assert.equal(login.status, 400, login.text);
    assert.equal(login.body.code, 216);
    const third = await signIn(entry);
    assert.equal(third.status, 200, third.text);
    assert.equal(third.body.objectId, created.body.objectId);
    assert.equal(third.body.sessionToken, session);
  } finally {
    await server.master.put('/1.1/settings', { preventLoginWithUnverifiedEmail: false });
  }
});
