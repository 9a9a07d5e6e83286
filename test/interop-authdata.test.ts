// The official JavaScript SDK (npm leancloud-storage) against Roost's third-party sign-in, the way the SDK's
// own suite (test/user.js: "authData and unionId", "User loginAnonymously", "associate with authData") and
// apps drive it: weixin_1/weixin_2 entries named by uid with a union id, failOnNotExist, linking and
// unlinking, anonymous users that link a platform or sign up.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import AV from 'leancloud-storage';
import { initSdk, rejection } from './helpers/sdk.ts';
import { startServer, type TestServer } from './helpers/harness.ts';
import { uniqueName } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
  initSdk({ appId: server.appId, appKey: server.appKey, url: server.url });
});
after(async () => {
  await AV.User.logOut();
  await server?.close();
});

const stamp = () => `${Date.now()}${randomBytes(4).toString('hex')}`;
const wx = (uid: string) => ({ uid, access_token: 'access_token', expires_in: 1382686496 });
/** The static form the SDK's suite uses; its typings declare only the instance method. */
interface StaticAssociate {
  associateWithAuthData(user: AV.User, platform: string, authData: object): Promise<AV.User>;
}
/** What the server holds, read with the master key (the SDK's copy is what it was told). */
const storedAuthData = async (id: string | undefined) => (await server.master.get(`/1.1/users/${id}`)).body.authData;

test('failOnNotExist: an unknown weixin_1 account is refused with 211 "Could not find user."', async () => {
  const now = stamp();
  const refused = await rejection(AV.User.signUpOrlogInWithAuthData(wx(`openid1${now}`), 'weixin_1', { failOnNotExist: true }));
  assert.equal(refused.code, 211);
  assert.equal(refused.message, 'Could not find user.');
  const again = await rejection(AV.User.loginWithAuthData(wx(`openid1${now}`), 'weixin_1', { failOnNotExist: true }));
  assert.equal(again.code, 211);
  assert.equal(await AV.User.currentAsync(), null);
});

test('loginWithAuthDataAndUnionId: weixin_1 as main account, then weixin_2 with the same union id is the same user', async () => {
  const now = stamp();
  const username = uniqueName('union');
  const unionId = `unionid${now}`;
  const fresh = new AV.User();
  fresh.setUsername(username);
  const user1 = await fresh.loginWithAuthDataAndUnionId(wx(`openid1${now}`), 'weixin_1', unionId, { asMainAccount: true });
  assert.equal(user1.getUsername(), username);
  assert.deepEqual(user1.get('authData')._weixin_unionid, { uid: unionId });
  assert.deepEqual(user1.get('authData').weixin_1, { ...wx(`openid1${now}`), platform: 'weixin', unionid: unionId, main_account: true });
  await AV.User.logOut();

  const user2 = await AV.User.signUpOrlogInWithAuthDataAndUnionId(wx(`openid2${now}`), 'weixin_2', unionId);
  assert.equal(user2.id, user1.id);
  assert.equal(user2.getUsername(), username);
  assert.equal(user2.getSessionToken(), user1.getSessionToken());
  assert.deepEqual(Object.keys(user2.get('authData')).sort(), ['_weixin_unionid', 'weixin_1', 'weixin_2']);
  assert.equal((await AV.User.currentAsync())?.id, user1.id);
  await AV.User.logOut();

  // Either key signs in on its own now, also with failOnNotExist.
  const viaKey = await AV.User.loginWithAuthData(wx(`openid2${now}`), 'weixin_2', { failOnNotExist: true });
  assert.equal(viaKey.id, user1.id);
  await AV.User.logOut();
});

test('loginWithAuthDataAndUnionId with unionIdPlatform qq: qq (openid) and qq_app (uid) share one user', async () => {
  const now = stamp();
  const unionId = `qqunion${now}`;
  const first = await AV.User.loginWithAuthDataAndUnionId(
    { openid: `qqopenid${now}`, access_token: 't', expires_in: 7776000 },
    'qq',
    unionId,
    { unionIdPlatform: 'qq', asMainAccount: true },
  );
  assert.deepEqual(first.get('authData')._qq_unionid, { uid: unionId });
  await AV.User.logOut();
  const second = await AV.User.loginWithAuthDataAndUnionId({ uid: `qqapp${now}`, access_token: 't' }, 'qq_app', unionId, {
    unionIdPlatform: 'qq',
  });
  assert.equal(second.id, first.id);
  assert.equal(second.get('authData')._weixin_unionid, undefined);
  await AV.User.logOut();
});

test('associateWithAuthData merges weixin beside test; dissociateAuthData removes it and frees the account', async () => {
  const now = stamp();
  const logined = await AV.User.signUpOrlogInWithAuthData(
    { uid: `zaabbbccc123123${now}`, access_token: 'a123123aaabbbbcccc', expires_in: 1382686496 },
    'test',
  );
  const openid = `aaabbbccc123123${now}`;
  const user = await (AV.User as unknown as StaticAssociate).associateWithAuthData(logined, 'weixin', { openid, access_token: 'a123123aaabbbbcccc', expires_in: 1382686496 });
  assert.ok(user.get('authData').weixin);
  assert.ok(user.get('authData').test);
  assert.deepEqual(Object.keys(await storedAuthData(user.id)).sort(), ['test', 'weixin']);
  await user.dissociateAuthData('weixin');
  assert.equal(user.get('authData').weixin, undefined);
  assert.ok(user.get('authData').test);
  assert.deepEqual(Object.keys(await storedAuthData(user.id)), ['test']);
  await AV.User.logOut();
  const freed = await rejection(AV.User.loginWithAuthData({ openid, access_token: 't' }, 'weixin', { failOnNotExist: true }));
  assert.equal(freed.code, 211);
});

test('associateWithAuthDataAndUnionId on a password user: a later weixin_2 sign-in with the union id reaches it', async () => {
  const now = stamp();
  const unionId = `unionid${now}`;
  const user = await AV.User.signUp(uniqueName('assoc'), 'assoc-password');
  await user.associateWithAuthDataAndUnionId(wx(`openid1${now}`), 'weixin_1', unionId, { asMainAccount: true });
  assert.deepEqual((await storedAuthData(user.id))._weixin_unionid, { uid: unionId });
  await AV.User.logOut();
  const other = await AV.User.loginWithAuthDataAndUnionId(wx(`openid2${now}`), 'weixin_2', unionId);
  assert.equal(other.id, user.id);
  await AV.User.logOut();
  const taken = await AV.User.signUp(uniqueName('assoc2'), 'assoc-password');
  const refused = await rejection(taken.associateWithAuthData(wx(`openid1${now}`), 'weixin_1'));
  assert.equal(refused.code, 208);
  await AV.User.logOut();
});

test('an anonymous user that associates github stops being anonymous, with nothing left unsaved', async () => {
  const user = await AV.User.loginAnonymously();
  assert.ok(user.id);
  assert.equal(user.isAnonymous(), true);
  const github = { uid: `justsomerandomstring${stamp()}`, access_token: 'access_token' };
  const linked = await user.associateWithAuthData(github, 'github');
  assert.equal(linked.isAnonymous(), false);
  assert.equal(linked.dirty(), false);
  assert.deepEqual(await storedAuthData(user.id), { github });
  await AV.User.logOut();
  const again = await AV.User.loginWithAuthData(github, 'github', { failOnNotExist: true });
  assert.equal(again.id, user.id);
  await AV.User.logOut();
});

test('an anonymous user that signs up keeps its id, stops being anonymous, and logs in with its password', async () => {
  const user = await AV.User.loginAnonymously();
  assert.equal(user.isAnonymous(), true);
  const name = uniqueName('justsomeuniquename');
  user.setUsername(name);
  user.setPassword(name);
  const signedUp = await user.signUp();
  assert.equal(signedUp.isAnonymous(), false);
  assert.equal(signedUp.dirty(), false);
  assert.deepEqual(await storedAuthData(user.id), {});
  await AV.User.logOut();
  const loggedIn = await AV.User.logIn(name, name);
  assert.equal(loggedIn.id, user.id);
  assert.equal(loggedIn.isAnonymous(), false);
  await AV.User.logOut();
});
