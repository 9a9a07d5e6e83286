// The official JavaScript SDK (npm leancloud-storage) against Roost's third-party and phone flows:
// loginWithAuthData, associateWithAuthData, dissociateAuthData, anonymous login, failOnNotExist,
// union-id login, and the SMS helpers.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import AV from 'leancloud-storage';
import { initSdk, rejection } from './helpers/sdk.ts';
import { startServer, type TestServer } from './helpers/harness.ts';
import { uniqueName } from './helpers/accounts.ts';
import { lastCode, smsOutboxDir, uniquePhone } from './helpers/sms.ts';

let server: TestServer;
const dir = smsOutboxDir();
before(async () => {
  server = await startServer({ env: { SMS_OUTBOX_DIR: dir } });
  initSdk({ appId: server.appId, appKey: server.appKey, url: server.url });
});
after(async () => {
  await AV.User.logOut();
  await server?.close();
});

const uid = () => `sdk_${randomBytes(6).toString('hex')}`;

test('loginWithAuthData signs up then in; failOnNotExist refuses an unknown account with 211', async () => {
  const authData = { uid: uid(), access_token: 'token-1' };
  const missing = await rejection(AV.User.loginWithAuthData(authData, 'myplatform', { failOnNotExist: true }));
  assert.equal(missing.code, 211);
  const first = await AV.User.loginWithAuthData(authData, 'myplatform');
  assert.match(first.getUsername(), /^[a-z0-9]{25}$/);
  assert.equal((await AV.User.currentAsync())?.id, first.id);
  await AV.User.logOut();
  const second = await AV.User.loginWithAuthData(authData, 'myplatform', { failOnNotExist: true });
  assert.equal(second.id, first.id);
  assert.deepEqual(second.get('authData'), { myplatform: authData });
  await AV.User.logOut();
});

test('associateWithAuthData links, 208 for another user, dissociateAuthData unlinks', async () => {
  const weibo = { uid: uid(), access_token: 'wb', expiration_in: '36000' };
  const ann = await AV.User.signUp(uniqueName('sdkann'), 'ann-password');
  await ann.associateWithAuthData(weibo, 'weibo');
  assert.deepEqual(ann.get('authData').weibo, weibo);
  await AV.User.logOut();
  const viaWeibo = await AV.User.loginWithAuthData(weibo, 'weibo');
  assert.equal(viaWeibo.id, ann.id);
  await AV.User.logOut();

  const bob = await AV.User.signUp(uniqueName('sdkbob'), 'bob-password');
  const taken = await rejection(bob.associateWithAuthData(weibo, 'weibo'));
  assert.equal(taken.code, 208);
  await AV.User.logOut();

  const again = await AV.User.logIn(ann.getUsername(), 'ann-password');
  await again.dissociateAuthData('weibo');
  assert.equal(again.get('authData')?.weibo, undefined);
  await AV.User.logOut();
  const gone = await rejection(AV.User.loginWithAuthData(weibo, 'weibo', { failOnNotExist: true }));
  assert.equal(gone.code, 211);
});

test('anonymous login, then signUp turns the same user into a regular one', async () => {
  const anon = await AV.User.loginAnonymously();
  assert.equal(anon.isAnonymous(), true);
  assert.match(anon.get('authData').anonymous.id, /^[0-9a-f-]{36}$/);
  const username = uniqueName('sdkanon');
  anon.setUsername(username);
  anon.setPassword('anon-password');
  await anon.signUp();
  assert.equal(anon.isAnonymous(), false);
  await AV.User.logOut();
  const loggedIn = await AV.User.logIn(username, 'anon-password');
  assert.equal(loggedIn.id, anon.id);
  assert.equal(loggedIn.isAnonymous(), false);
  await AV.User.logOut();

  const other = await AV.User.loginAnonymously();
  await other.associateWithAuthData({ uid: uid(), access_token: 't' }, 'myplatform');
  assert.equal(other.isAnonymous(), false);
  await AV.User.logOut();
});

test('loginWithAuthDataAndUnionId: two platform keys with one union id reach one user', async () => {
  const unionId = `union_${randomBytes(6).toString('hex')}`;
  const first = await AV.User.loginWithAuthDataAndUnionId(
    { openid: uid(), access_token: 'a1', expires_in: 7200 },
    'weixin_app1',
    unionId,
    { unionIdPlatform: 'weixin', asMainAccount: true },
  );
  assert.deepEqual(first.get('authData')._weixin_unionid, { uid: unionId });
  await AV.User.logOut();
  const second = await AV.User.loginWithAuthDataAndUnionId({ openid: uid(), access_token: 'a2', expires_in: 7200 }, 'weixin_app2', unionId);
  assert.equal(second.id, first.id);
  assert.ok(second.get('authData').weixin_app2);
  await AV.User.logOut();
});

test('SMS: requestSmsCode + signUpOrlogInWithMobilePhone, login code, verify and reset by code', async () => {
  const phone = uniquePhone();
  await AV.Cloud.requestSmsCode(phone);
  const user = await AV.User.signUpOrlogInWithMobilePhone(phone, lastCode(dir, phone));
  assert.equal(user.getMobilePhoneNumber(), phone);
  assert.equal(user.get('mobilePhoneVerified'), true);
  await AV.User.logOut();

  const other = uniquePhone();
  const password = 'sms-user-password';
  const signedUp = await AV.User.signUp(uniqueName('sdksms'), password, { mobilePhoneNumber: other } as never);
  await AV.User.requestMobilePhoneVerify(other);
  await AV.User.verifyMobilePhone(lastCode(dir, other));
  assert.equal((await AV.User.become(signedUp.getSessionToken())).get('mobilePhoneVerified'), true);
  await AV.User.logOut();

  await new Promise((resolve) => setTimeout(resolve, 0));
  const third = uniquePhone();
  await AV.User.signUp(uniqueName('sdksms3'), password, { mobilePhoneNumber: third } as never);
  await AV.User.logOut();
  await AV.User.requestLoginSmsCode(third);
  const byCode = await AV.User.logInWithMobilePhoneSmsCode(third, lastCode(dir, third));
  assert.equal(byCode.getMobilePhoneNumber(), third);
  await AV.User.logOut();

  const fourth = uniquePhone();
  await AV.User.signUp(uniqueName('sdksms4'), password, { mobilePhoneNumber: fourth } as never);
  await AV.User.logOut();
  await AV.User.requestPasswordResetBySmsCode(fourth);
  await AV.User.resetPasswordBySmsCode(lastCode(dir, fourth), 'reset-password');
  const loggedIn = await AV.User.logInWithMobilePhone(fourth, 'reset-password');
  assert.equal(loggedIn.getMobilePhoneNumber(), fourth);
  const wrong = await rejection(AV.User.logInWithMobilePhoneSmsCode(fourth, '000000'));
  assert.equal(wrong.code, 603);
  await AV.User.logOut();
});
