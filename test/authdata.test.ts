// Third-party accounts over HTTP (SPEC §2.2, §4.1 rows 2, 10, 11): authData sign-in, the race of
// first sign-ins, link and unlink, who sees authData, anonymous users, union ids, shape checks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, uniqueName } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const uid = () => `uid_${randomBytes(6).toString('hex')}`;
const other = (id = uid()) => ({ myplatform: { uid: id, access_token: `tok_${id}` } });
const signIn = (authData: unknown, query?: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  server.client.post('/1.1/users', { authData, ...extra }, { query });

test('first authData sign-in creates a user (201), the next one signs it in (200)', async () => {
  const authData = other();
  const first = await signIn(authData);
  assert.equal(first.status, 201, first.text);
  assert.match(first.body.username, /^[a-z0-9]{25}$/);
  assert.match(first.body.sessionToken, /^[a-z0-9]{25}$/);
  assert.equal(first.headers.get('location'), `/1.1/classes/_User/${first.body.objectId}`);
  assert.deepEqual(first.body.authData, authData);
  assert.equal(first.body.password, undefined);
  const second = await signIn(authData);
  assert.equal(second.status, 200, second.text);
  assert.equal(second.body.objectId, first.body.objectId);
  assert.equal(second.body.sessionToken, first.body.sessionToken);
  assert.equal(second.body.username, first.body.username);
  assert.deepEqual(second.body.authData, authData);
  assert.equal(second.headers.get('location'), `/1.1/classes/_User/${first.body.objectId}`);
  // The SDK path family reaches the same handler.
  const viaClasses = await server.client.post('/1.1/classes/_User', { authData });
  assert.equal(viaClasses.status, 200);
  assert.equal(viaClasses.body.objectId, first.body.objectId);
});

test('failOnNotExist: 400 code 211 without a match, a normal sign-in with one', async () => {
  const authData = other();
  const missing = await signIn(authData, { failOnNotExist: 'true' });
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, { code: 211, error: 'Could not find user.' });
  const created = await signIn(authData);
  assert.equal(created.status, 201);
  const found = await signIn(authData, { failOnNotExist: 'true' });
  assert.equal(found.status, 200);
  assert.equal(found.body.objectId, created.body.objectId);
});

test('20 concurrent first sign-ins with one uid make exactly one user', async () => {
  const authData = other();
  const responses = await Promise.all(Array.from({ length: 20 }, () => signIn(authData)));
  for (const response of responses) assert.ok(response.status === 200 || response.status === 201, response.text);
  assert.equal(new Set(responses.map((r) => r.body.objectId)).size, 1);
  assert.equal(responses.filter((r) => r.status === 201).length, 1);
  const count = await server.master.get('/1.1/users', {
    query: { where: { 'authData.myplatform.uid': authData.myplatform.uid }, count: 1, limit: 0 },
  });
  assert.equal(count.body.count, 1);
});

test('link with the session, 208 when bound elsewhere, unlink with Delete', async () => {
  const ann = await signUp(server.client);
  const bob = await signUp(server.client);
  const authData = other();
  const linked = await ann.client.put(`/1.1/users/${ann.objectId}`, { authData });
  assert.equal(linked.status, 200, linked.text);
  assert.deepEqual(Object.keys(linked.body).sort(), ['objectId', 'updatedAt']);
  assert.equal(linked.body.objectId, ann.objectId);
  const signedIn = await signIn(authData);
  assert.equal(signedIn.status, 200);
  assert.equal(signedIn.body.objectId, ann.objectId);
  assert.equal(signedIn.body.username, ann.username);

  const taken = await bob.client.put(`/1.1/classes/_User/${bob.objectId}`, { authData });
  assert.equal(taken.status, 400);
  assert.equal(taken.body.code, 208);
  const noSession = await server.client.put(`/1.1/users/${ann.objectId}`, { authData: other() });
  assert.equal(noSession.status, 403);
  const otherUser = await bob.client.put(`/1.1/users/${ann.objectId}`, { authData: other() });
  assert.equal(otherUser.status, 403);

  // A second platform merges with the first; ?new=true returns the merged authData.
  const second = { weibo: { uid: '12345', access_token: 'wb-token', expiration_in: '36000' } };
  const merged = await ann.client.put(`/1.1/classes/_User/${ann.objectId}`, { authData: second }, { query: { new: 'true' } });
  assert.equal(merged.status, 200, merged.text);
  assert.deepEqual(merged.body.authData, { ...authData, ...second });

  const unlinked = await ann.client.put(`/1.1/users/${ann.objectId}`, { 'authData.myplatform': { __op: 'Delete' } });
  assert.equal(unlinked.status, 200, unlinked.text);
  assert.deepEqual(Object.keys(unlinked.body).sort(), ['objectId', 'updatedAt']);
  const me = await ann.client.get('/1.1/users/me');
  assert.deepEqual(me.body.authData, second);
  // Unbound now: the next sign-in makes a new user, and Bob may link it.
  const fresh = await signIn(authData, { failOnNotExist: 'true' });
  assert.equal(fresh.body.code, 211);
  const bobLinks = await bob.client.put(`/1.1/users/${bob.objectId}`, { authData });
  assert.equal(bobLinks.status, 200, bobLinks.text);
});

test('authData is shown only to its owner and the master key', async () => {
  const authData = other();
  const owner = await signIn(authData);
  const id = owner.body.objectId;
  const stranger = await signUp(server.client);
  const anonymous = await server.client.get(`/1.1/users/${id}`);
  assert.equal(anonymous.status, 200);
  assert.equal(anonymous.body.authData, undefined);
  assert.equal((await stranger.client.get(`/1.1/classes/_User/${id}`)).body.authData, undefined);
  assert.deepEqual((await server.client.get(`/1.1/users/${id}`, { session: owner.body.sessionToken })).body.authData, authData);
  assert.deepEqual((await server.master.get(`/1.1/users/${id}`)).body.authData, authData);
  assert.deepEqual((await server.client.get('/1.1/users/me', { session: owner.body.sessionToken })).body.authData, authData);
  const listed = await server.master.get('/1.1/users', { query: { where: { objectId: id } } });
  assert.deepEqual(listed.body.results[0].authData, authData);
  await server.master.put('/1.1/settings', { userQueryPermission: true });
  try {
    const query = await stranger.client.get('/1.1/users', { query: { where: { objectId: id } } });
    assert.equal(query.body.results.length, 1);
    assert.equal(query.body.results[0].authData, undefined);
  } finally {
    await server.master.put('/1.1/settings', { userQueryPermission: false });
  }
});

test('anonymous users: lowercase UUID; linking a platform makes a regular user, same objectId', async () => {
  const id = randomUUID();
  const anon = await signIn({ anonymous: { id } });
  assert.equal(anon.status, 201, anon.text);
  const session = anon.body.sessionToken;
  assert.equal((await signIn({ anonymous: { id } })).body.objectId, anon.body.objectId);
  const authData = other();
  const linked = await server.client.put(`/1.1/users/${anon.body.objectId}`, { authData }, { session });
  assert.equal(linked.status, 200, linked.text);
  const me = await server.client.get('/1.1/users/me', { session });
  assert.equal(me.body.objectId, anon.body.objectId);
  assert.deepEqual(me.body.authData, authData);
  // The anonymous id is free again: signing in with it starts a new anonymous user.
  const again = await signIn({ anonymous: { id } });
  assert.equal(again.status, 201);
  assert.notEqual(again.body.objectId, anon.body.objectId);

  for (const bad of [id.toUpperCase(), 'not-a-uuid', '', 42]) {
    const refused = await signIn({ anonymous: { id: bad } });
    assert.equal(refused.status, 400, String(bad));
    assert.ok([111, 250].includes(refused.body.code), refused.text);
  }
});

test('anonymous users: a username and password make a regular user, same objectId', async () => {
  const anon = await signIn({ anonymous: { id: randomUUID() } });
  const session = anon.body.sessionToken;
  const username = uniqueName('upgraded');
  const upgraded = await server.client.put(`/1.1/classes/_User/${anon.body.objectId}`, { username, password: 'n3w-password' }, { session });
  assert.equal(upgraded.status, 200, upgraded.text);
  const me = await server.client.get('/1.1/users/me', { session });
  assert.equal(me.body.objectId, anon.body.objectId);
  assert.deepEqual(me.body.authData, {});
  const login = await server.client.post('/1.1/login', { username, password: 'n3w-password' });
  assert.equal(login.status, 200, login.text);
  assert.equal(login.body.objectId, anon.body.objectId);
  // Once it has a password, changing it needs updatePassword, as for everyone.
  const again = await server.client.put(`/1.1/users/${anon.body.objectId}`, { password: 'other' }, { session });
  assert.equal(again.status, 403);
});

test('shapes of each platform kind are checked: a clear 4xx', async () => {
  const cases: Array<[string, unknown, number]> = [
    ['weibo without uid', { weibo: { access_token: 't', expiration_in: '1' } }, 250],
    ['weibo without token', { weibo: { uid: '1' } }, 111],
    ['qq openid not a string', { qq: { openid: 5, access_token: 't', expires_in: 7200 } }, 111],
    ['qq expires_in an object', { qq: { openid: 'o', access_token: 't', expires_in: {} } }, 111],
    ['weixin without openid', { weixin: { uid: 'x', access_token: 't' } }, 250],
    ['apple without identity_token', { lc_apple: { uid: 'u', code: 'c' } }, 111],
    ['taptap token_type', { taptap: { kid: 'k', access_token: 'k', token_type: 'bearer', mac_key: 'm', mac_algorithm: 'hmac-sha-1', openid: 'o' } }, 111],
    ['taptap mac_algorithm', { taptap: { kid: 'k', access_token: 'k', token_type: 'mac', mac_key: 'm', mac_algorithm: 'sha256', openid: 'o' } }, 111],
    ['taptap without mac_key', { taptap: { kid: 'k', access_token: 'k', openid: 'o' } }, 111],
    ['other without uid', { myplatform: { access_token: 't' } }, 250],
    ['an openid-named entry is chat B: its token must be a string', { leanoffice: { openid: 'o', access_token: 5 } }, 111],
    ['entry not an object', { myplatform: 'uid' }, 111],
    ['authData not an object', 'x', 111],
    ['no entry', {}, 250],
    ['reserved key', { _weixin_unionid: { uid: 'u' } }, 105],
    ['bad union platform', { weixin: { openid: 'o', access_token: 't', unionid: 'u', platform: 'a b' } }, 111],
    ['bad main_account', { weixin: { openid: 'o', access_token: 't', unionid: 'u', main_account: 'yes' } }, 111],
  ];
  for (const [name, authData, code] of cases) {
    const response = await signIn(authData);
    assert.equal(response.status, 400, `${name}: ${response.text}`);
    assert.equal(response.body.code, code, `${name}: ${response.text}`);
    assert.equal(typeof response.body.error, 'string');
  }
  const user = await signUp(server.client);
  const badLink = await user.client.put(`/1.1/users/${user.objectId}`, { 'authData.weibo': { uid: 7 } });
  assert.equal(badLink.status, 400);
  const good = await signIn({ taptap: { kid: 'k1', access_token: 'k1', token_type: 'mac', mac_key: 'm', mac_algorithm: 'hmac-sha-1', openid: uid(), name: 'n', avatar: 'https://x/a.png', unionid: 'tu' } });
  assert.equal(good.status, 201, good.text);
});

test('union id: a main-account entry adds _<platform>_unionid; another key with that union id reaches the same user', async () => {
  const unionid = `union_${randomBytes(5).toString('hex')}`;
  const first = await signIn({
    weixin_app1: { openid: uid(), access_token: 't1', expires_in: 7200, unionid, platform: 'weixin', main_account: true },
  });
  assert.equal(first.status, 201, first.text);
  assert.deepEqual(first.body.authData._weixin_unionid, { uid: unionid });
  for (const key of ['updatedAt', 'emailVerified', 'mobilePhoneVerified']) assert.ok(key in first.body, key);

  const second = await signIn({
    weixin_app2: { openid: uid(), access_token: 't2', expires_in: 7200, unionid, platform: 'weixin', main_account: 'false' },
  });
  assert.equal(second.status, 200, second.text);
  assert.equal(second.body.objectId, first.body.objectId);
  assert.deepEqual(Object.keys(second.body.authData).sort(), ['_weixin_unionid', 'weixin_app1', 'weixin_app2']);
  // Either key now signs in directly.
  assert.equal((await signIn({ weixin_app2: second.body.authData.weixin_app2 })).body.objectId, first.body.objectId);

  // Several entries of one request sharing a union id: one user, one derived entry.
  const shared = `union_${randomBytes(5).toString('hex')}`;
  const both = await signIn({
    weixin: { openid: uid(), access_token: 'a', unionid: shared, platform: 'weixin', main_account: true },
    weibo: { uid: uid(), access_token: 'b', unionid: shared, platform: 'weixin', main_account: true },
  });
  assert.equal(both.status, 201, both.text);
  assert.deepEqual(Object.keys(both.body.authData).sort(), ['_weixin_unionid', 'weibo', 'weixin']);

  // Not the main account: the union id finds nobody, so a new user without the derived entry.
  const lone = `union_${randomBytes(5).toString('hex')}`;
  const notMain = await signIn({ weixin: { openid: uid(), access_token: 'c', unionid: lone, platform: 'weixin' } });
  assert.equal(notMain.status, 201);
  assert.equal(notMain.body.authData._weixin_unionid, undefined);

  // Keys of the hosted service's examples (wxleanoffice, weixinapp1) and openid-named entries of
  // custom keys are chat platform B, so their union ids count.
  const docs = `union_${randomBytes(5).toString('hex')}`;
  const office = await signIn({ wxleanoffice: { openid: uid(), access_token: 'e', unionid: docs, platform: 'weixin', main_account: true } });
  assert.equal(office.status, 201, office.text);
  const app1 = await signIn({ weixinapp1: { openid: uid(), access_token: 'f', unionid: docs, platform: 'weixin', main_account: false } });
  const custom = await signIn({ leanmini: { openid: uid(), access_token: 'g', unionid: docs, platform: 'weixin' } });
  assert.deepEqual([app1.status, custom.status], [200, 200]);
  assert.equal(app1.body.objectId, office.body.objectId);
  assert.equal(custom.body.objectId, office.body.objectId);

  // Without platform the derived name comes from the authData key.
  const keyed = await signIn({ weixin_mini: { openid: uid(), access_token: 'd', unionid: lone, main_account: true } });
  assert.deepEqual(keyed.body.authData._weixin_mini_unionid, { uid: lone });

  // Any other platform: no union-id handling.
  const plain = await signIn({ myplatform: { uid: uid(), unionid: lone, platform: 'weixin', main_account: true } });
  assert.equal(plain.status, 201);
  assert.deepEqual(Object.keys(plain.body.authData), ['myplatform']);

  // Unlinking the last entry carrying a union id drops its derived entry.
  const session = both.body.sessionToken;
  await server.client.put(`/1.1/users/${both.body.objectId}`, { 'authData.weixin': { __op: 'Delete' } }, { session });
  assert.ok((await server.client.get('/1.1/users/me', { session })).body.authData._weixin_unionid);
  await server.client.put(`/1.1/users/${both.body.objectId}`, { 'authData.weibo': { __op: 'Delete' } }, { session });
  assert.deepEqual((await server.client.get('/1.1/users/me', { session })).body.authData, {});
});

test('deleting a user frees its third-party accounts', async () => {
  const authData = other();
  const created = await signIn(authData);
  const removed = await server.client.delete(`/1.1/users/${created.body.objectId}`, { session: created.body.sessionToken });
  assert.equal(removed.status, 200);
  const again = await signIn(authData);
  assert.equal(again.status, 201);
  assert.notEqual(again.body.objectId, created.body.objectId);
});

test('a username given at sign-in is used, and must be free', async () => {
  const username = uniqueName('third');
  const created = await signIn(other(), undefined, { username, city: 'Oslo' });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.username, username);
  assert.equal(created.body.city, 'Oslo');
  const clash = await signIn(other(), undefined, { username });
  assert.equal(clash.status, 400);
  assert.equal(clash.body.code, 202);
});

test('malformed authData bodies get a clear 4xx, never a 5xx', async () => {
  const user = await signUp(server.client);
  const bodies: unknown[] = [
    { authData: null },
    { authData: [] },
    { authData: { myplatform: null } },
    { authData: { myplatform: [] } },
    { authData: { myplatform: { uid: 'a\u0000b' } } },
    { authData: { myplatform: { uid: 'x'.repeat(300) } } },
    { authData: { 'a.b': { uid: 'x' } } },
    { authData: { myplatform: { uid: 'x', nested: { __op: 'Delete' } } } },
    { authData: { anonymous: { id: null } } },
    { authData: { weixin: { openid: 'o', access_token: 't', unionid: 5 } } },
    { authData: { myplatform: { uid: 'x' } }, username: 12 },
    { authData: { myplatform: { uid: 'x' } }, password: '' },
    { authData: { myplatform: { uid: 'x' } }, emailVerified: 'no', ACL: 'bad' },
  ];
  for (const body of bodies) {
    const response = await server.client.post('/1.1/users', body);
    assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body)} → ${response.status} ${response.text}`);
    assert.equal(typeof response.body.code, 'number');
    assert.equal(typeof response.body.error, 'string');
  }
  const updates: unknown[] = [
    { authData: 'x' },
    { authData: { __op: 'Increment' } },
    { 'authData.': { uid: 'x' } },
    { 'authData.a b': { __op: 'Delete' } },
    { 'authData.myplatform': 5 },
    { 'authData.myplatform.uid': 'x' },
  ];
  for (const body of updates) {
    const response = await user.client.put(`/1.1/users/${user.objectId}`, body);
    assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body)} → ${response.status} ${response.text}`);
  }
});

test('authData sign-in and unlink work inside a batch', async () => {
  const authData = other();
  const batch = await server.client.post('/1.1/batch', {
    requests: [
      { method: 'POST', path: '/1.1/users', body: { authData } },
      { method: 'POST', path: '/1.1/classes/_User', body: { authData } },
    ],
  });
  assert.equal(batch.status, 200, batch.text);
  const [first, second] = batch.body;
  assert.ok(first.success?.sessionToken, batch.text);
  assert.equal(second.success.objectId, first.success.objectId);
  const unlink = await server.client.post(
    '/1.1/batch',
    { requests: [{ method: 'PUT', path: `/1.1/users/${first.success.objectId}`, body: { 'authData.myplatform': { __op: 'Delete' } } }] },
    { session: first.success.sessionToken },
  );
  assert.deepEqual(Object.keys(unlink.body[0].success).sort(), ['objectId', 'updatedAt']);
});
