// Provider token checks, switched per application (settings.authProviders), against local fakes
// that check what the real providers check: the device-maker identity token as a JWT against the
// published keys (signature, issuer, audience, subject, expiry), the others through their token APIs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp } from './helpers/accounts.ts';
import { startFakeProviders, type FakeProviders } from './fakes/auth-providers.ts';

let server: TestServer;
let fake: FakeProviders;
const clientId = 'com.example.roost';

before(async () => {
  server = await startServer();
  fake = await startFakeProviders();
  const settings = await server.master.put('/1.1/settings', {
    authProviders: {
      weibo: { validate: true, baseUrl: fake.baseUrl, appKey: 'wb-app' },
      qq: { validate: true, baseUrl: fake.baseUrl, appId: 'qq-app' },
      weixin: { validate: true, baseUrl: fake.baseUrl, appId: 'wx-app', appSecret: 'wx-secret-value' },
      weixin_mini: { kind: 'weixin', validate: true, baseUrl: fake.baseUrl },
      taptap: { validate: true, baseUrl: fake.baseUrl, clientId: 'tap-client' },
      lc_apple: { validate: true, baseUrl: fake.baseUrl, clientId },
      myplatform: { validate: true, baseUrl: fake.baseUrl },
    },
  });
  assert.equal(settings.status, 200, settings.text);
});
after(async () => {
  await server?.close();
  await fake?.close();
});

const id = (prefix: string) => `${prefix}${randomBytes(5).toString('hex')}`;
const signIn = (authData: unknown) => server.client.post('/1.1/users', { authData });

function expectRefused(response: { status: number; body: any; text: string }, what: string) {
  assert.equal(response.status, 400, `${what}: ${response.text}`);
  assert.equal(response.body.code, 251, `${what}: ${response.text}`);
}

test('settings: provider credentials are validated and secrets shown masked', async () => {
  const shown = await server.master.get('/1.1/settings');
  assert.equal(shown.body.authProviders.weixin.appSecret, '****alue');
  assert.equal(shown.body.authProviders.lc_apple.clientId, clientId);
  for (const bad of [
    { weibo: { validate: 'yes' } },
    { weibo: { baseUrl: 'ftp://x' } },
    { weibo: { unknown: 'x' } },
    { 'bad key': {} },
    { weibo: { kind: 'fax' } },
  ]) {
    const response = await server.master.put('/1.1/settings', { authProviders: bad });
    assert.equal(response.status, 400, JSON.stringify(bad));
    assert.equal(typeof response.body.code, 'number');
  }
  assert.equal((await server.client.put('/1.1/settings', { authProviders: {} })).status, 403);
});

test('micro-blog platform: the token must belong to the uid and to the configured app', async () => {
  const uid = String(Date.now()).slice(-9);
  fake.weibo.set('wb-good', { uid, appkey: 'wb-app' });
  fake.weibo.set('wb-other-app', { uid, appkey: 'someone-else' });
  assert.equal((await signIn({ weibo: { uid, access_token: 'wb-good', expiration_in: '3600' } })).status, 201);
  expectRefused(await signIn({ weibo: { uid, access_token: 'wb-unknown' } }), 'unknown token');
  expectRefused(await signIn({ weibo: { uid: '999', access_token: 'wb-good' } }), 'other uid');
  expectRefused(await signIn({ weibo: { uid, access_token: 'wb-other-app' } }), 'other app');
});

test('social platform A: /me must name the openid and the configured app id', async () => {
  const openid = id('qq');
  fake.qq.set('qq-good', { openid, clientId: 'qq-app' });
  fake.qq.set('qq-foreign', { openid, clientId: 'other' });
  assert.equal((await signIn({ qq: { openid, access_token: 'qq-good', expires_in: 7776000 } })).status, 201);
  expectRefused(await signIn({ qq: { openid, access_token: 'qq-bad' } }), 'bad token');
  expectRefused(await signIn({ qq: { openid: id('qq'), access_token: 'qq-good' } }), 'other openid');
  expectRefused(await signIn({ qq: { openid, access_token: 'qq-foreign' } }), 'other app');
});

test('chat platform B: /sns/auth, and /sns/userinfo proves a claimed union id', async () => {
  const openid = id('wx');
  const unionid = id('union');
  fake.weixin.set('wx-good', { openid, unionid });
  assert.equal((await signIn({ weixin: { openid, access_token: 'wx-good', expires_in: 7200 } })).status, 201);
  expectRefused(await signIn({ weixin: { openid, access_token: 'wx-bad', expires_in: 7200 } }), 'bad token');
  expectRefused(await signIn({ weixin: { openid: id('wx'), access_token: 'wx-good' } }), 'other openid');
  // A custom key of the chat kind is checked the same way.
  const miniOpenid = id('wxm');
  fake.weixin.set('wx-mini', { openid: miniOpenid, unionid });
  expectRefused(
    await signIn({ weixin_mini: { openid: miniOpenid, access_token: 'wx-mini', unionid: id('stolen'), platform: 'weixin' } }),
    'a union id that is not the token’s',
  );
  const withUnion = await signIn({
    weixin_mini: { openid: miniOpenid, access_token: 'wx-mini', unionid, platform: 'weixin', main_account: true },
  });
  assert.equal(withUnion.status, 201, withUnion.text);
  // A custom key names its account by uid (the SDK's weixin_1 entries): that uid is the openid the provider must name.
  const byUid = id('wxu');
  fake.weixin.set('wx-mini-uid', { openid: byUid });
  assert.equal((await signIn({ weixin_mini: { uid: byUid, access_token: 'wx-mini-uid' } })).status, 201);
  expectRefused(await signIn({ weixin_mini: { uid: id('wxu'), openid: byUid, access_token: 'wx-mini-uid' } }), 'another uid');
});

test('game store: the profile call is MAC-signed with the token’s key and must name the openid', async () => {
  const openid = id('tap');
  fake.taptap.set('kid-1', { macKey: 'mac-secret', openid });
  const entry = { kid: 'kid-1', access_token: 'kid-1', token_type: 'mac', mac_key: 'mac-secret', mac_algorithm: 'hmac-sha-1', openid, name: 'p', avatar: 'https://a/b.png' };
  assert.equal((await signIn({ taptap: entry })).status, 201);
  expectRefused(await signIn({ taptap: { ...entry, mac_key: 'wrong-key' } }), 'wrong MAC key');
  expectRefused(await signIn({ taptap: { ...entry, kid: 'kid-unknown', access_token: 'kid-unknown' } }), 'unknown kid');
  expectRefused(await signIn({ taptap: { ...entry, openid: id('tap') } }), 'other openid');
  expectRefused(await signIn({ taptap: { ...entry, kid: 'bad"\r\nX-Evil: 1' } }), 'a kid that cannot be a header value');
  assert.deepEqual(fake.violations.filter((v) => !v.includes('signature')), []);
});

test('device-maker identity: signature, issuer, audience, subject and expiry of the JWT', async () => {
  const uid = id('apple.');
  const good = await fake.signIdentityToken({ sub: uid, aud: clientId });
  const first = await signIn({ lc_apple: { uid, identity_token: good, code: 'auth-code' } });
  assert.equal(first.status, 201, first.text);
  assert.equal((await signIn({ lc_apple: { uid, identity_token: good } })).status, 200);
  const cases: Array<[string, Promise<string>]> = [
    ['foreign key', fake.signIdentityToken({ sub: uid, aud: clientId }, { foreignKey: true })],
    ['wrong audience', fake.signIdentityToken({ sub: uid, aud: 'com.other.app' })],
    ['wrong issuer', fake.signIdentityToken({ sub: uid, aud: clientId }, { issuer: 'https://evil.example' })],
    ['other subject', fake.signIdentityToken({ sub: id('apple.'), aud: clientId })],
    ['expired', fake.signIdentityToken({ sub: uid, aud: clientId }, { expiresIn: '-1m' })],
  ];
  for (const [what, token] of cases) expectRefused(await signIn({ lc_apple: { uid, identity_token: await token } }), what);
  expectRefused(await signIn({ lc_apple: { uid, identity_token: 'not-a-jwt' } }), 'garbage');
});

test('linking is checked too; an unreachable provider is 503, not a refusal', async () => {
  const user = await signUp(server.client);
  const openid = id('wx');
  fake.weixin.set('wx-link', { openid });
  const bad = await user.client.put(`/1.1/users/${user.objectId}`, { authData: { weixin: { openid, access_token: 'nope' } } });
  expectRefused(bad, 'link with a bad token');
  const good = await user.client.put(`/1.1/users/${user.objectId}`, { authData: { weixin: { openid, access_token: 'wx-link' } } });
  assert.equal(good.status, 200, good.text);
  fake.down = true;
  try {
    const down = await signIn({ weixin: { openid, access_token: 'wx-link' } });
    assert.equal(down.status, 503, down.text);
    assert.equal(down.body.code, 503);
  } finally {
    fake.down = false;
  }
});

test('any other platform is never validated; switched-off platforms are not either', async () => {
  const before = [...fake.calls.values()].reduce((a, b) => a + b, 0);
  assert.equal((await signIn({ myplatform: { uid: id('u'), access_token: 'anything' } })).status, 201);
  await server.master.put('/1.1/settings', { authProviders: { qq: { validate: false } } });
  assert.equal((await signIn({ qq: { openid: id('qq'), access_token: 'unchecked' } })).status, 201);
  assert.equal([...fake.calls.values()].reduce((a, b) => a + b, 0), before);
  await server.master.put('/1.1/settings', { authProviders: { qq: { validate: true } } });
});

test('no access token reaches a log line', async () => {
  const text = server.logs.join('');
  for (const secret of ['wb-good', 'qq-good', 'wx-good', 'mac-secret', 'eyJ']) assert.ok(!text.includes(secret), secret);
});
