// The official JavaScript SDK (npm leancloud-storage) against Roost: it signs every request
// with X-LC-Sign, sends X-LC-Session on every request and uses /1.1/classes/_User paths.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { initSdk, rejection } from './helpers/sdk.ts';
import { startServer, type TestServer } from './helpers/harness.ts';
import { assertNoSecretsIn, uniqueName } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
  initSdk({ appId: server.appId, appKey: server.appKey, url: server.url });
});
after(async () => {
  // No password, hash or token of this file's flows reached a log line.
  if (server) assertNoSecretsIn(server.logs, ['first-password', 'second-password', 'right-password', 'query-password', 'wrong-password']);
  await AV.User.logOut();
  await server?.close();
});

test('sign up, log in, become, currentAsync, updatePassword, refreshSessionToken, logout', async () => {
  const username = uniqueName('sdk');
  const user = new AV.User();
  user.setUsername(username);
  user.setPassword('first-password');
  user.set('city', 'Lisbon');
  await user.signUp();
  assert.match(user.id ?? '', /^[a-z0-9]{24}$/);
  const firstToken = user.getSessionToken();
  assert.match(firstToken, /^[a-z0-9]{25}$/);
  assert.equal((await AV.User.currentAsync())?.id, user.id);

  await AV.User.logOut();
  assert.equal(await AV.User.currentAsync(), null);

  const loggedIn = await AV.User.logIn(username, 'first-password');
  assert.equal(loggedIn.id, user.id);
  assert.equal(loggedIn.get('city'), 'Lisbon');
  assert.equal(loggedIn.getSessionToken(), firstToken);
  assert.equal((await AV.User.currentAsync())?.id, user.id);
  assert.equal(await loggedIn.isAuthenticated(), true);

  // A save through the SDK's own path (/1.1/classes/_User/<id>) with its session.
  loggedIn.set('city', 'Porto');
  await loggedIn.save();
  const fetched = await AV.Object.createWithoutData('_User', user.id as string).fetch();
  assert.equal(fetched.get('city'), 'Porto');

  await AV.User.logOut();
  const became = await AV.User.become(firstToken);
  assert.equal(became.id, user.id);
  assert.equal(became.getUsername(), username);
  assert.equal((await AV.User.currentAsync())?.id, user.id);

  // updatePassword exists in the SDK but is missing from its type declarations.
  await (became as unknown as { updatePassword(old: string, next: string): Promise<unknown> }).updatePassword(
    'first-password',
    'second-password',
  );
  const secondToken = became.getSessionToken();
  assert.notEqual(secondToken, firstToken); // forceReloginOnPasswordChange is on by default
  assert.equal((await AV.User.currentAsync())?.getSessionToken(), secondToken);
  const stale = await rejection(AV.User.become(firstToken));
  assert.equal(stale.code, 211);

  await became.refreshSessionToken();
  const thirdToken = became.getSessionToken();
  assert.notEqual(thirdToken, secondToken);
  assert.equal((await AV.User.become(thirdToken)).id, user.id);
  assert.equal((await rejection(AV.User.become(secondToken))).code, 211);

  await AV.User.logOut();
  assert.equal(await AV.User.currentAsync(), null);
  const again = await AV.User.logIn(username, 'second-password');
  assert.equal(again.getSessionToken(), thirdToken);
  await AV.User.logOut();
});

test('SDK errors: wrong password 210, unknown user 211, taken username 202', async () => {
  const username = uniqueName('sdkerr');
  await AV.User.signUp(username, 'right-password');
  await AV.User.logOut();
  const wrong = await rejection(AV.User.logIn(username, 'wrong-password'));
  assert.equal(wrong.code, 210);
  assert.equal(wrong.message, 'The username and password mismatch.');
  const unknown = await rejection(AV.User.logIn(uniqueName('nobody'), 'whatever'));
  assert.equal(unknown.code, 211);
  const taken = await rejection(AV.User.signUp(username, 'another'));
  assert.equal(taken.code, 202);
  const byEmail = await rejection(AV.User.loginWithEmail('nobody@example.com', 'x'));
  assert.equal(byEmail.code, 211);
});

test('SDK queries of users: refused by default, allowed with userQueryPermission', async () => {
  const username = uniqueName('sdkq');
  await AV.User.signUp(username, 'query-password', { team: 'blue' } as never);
  await AV.User.logOut();
  const denied = await rejection(new AV.Query('_User').equalTo('team', 'blue').find());
  assert.equal(denied.code, 403);
  assert.equal((await server.master.put('/1.1/settings', { userQueryPermission: true })).status, 200);
  try {
    const found = await new AV.Query('_User').equalTo('team', 'blue').find();
    assert.deepEqual(found.map((user) => user.get('username')), [username]);
    assert.equal(found[0].get('password'), undefined);
    assert.equal(await new AV.Query('_User').equalTo('username', username).count(), 1);
  } finally {
    await server.master.put('/1.1/settings', { userQueryPermission: false });
  }
});
