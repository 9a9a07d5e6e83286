// Session tokens (SPEC §3.3): refreshSessionToken (row 7), updatePassword (row 8), old tokens.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { assertNoSecretsIn, signUp } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  // No password, hash or token of this file's flows reached a log line.
  if (server) assertNoSecretsIn(server.logs, ['next-pw', 'kept-session-pw']);
  await server?.close();
});

async function setForceRelogin(on: boolean) {
  const response = await server.master.put('/1.1/settings', { forceReloginOnPasswordChange: on });
  assert.equal(response.status, 200, response.text);
}

/** What an old token gets after it was replaced. */
async function assertStale(token: string, objectId: string) {
  const me = await server.client.get('/1.1/users/me', { session: token });
  assert.equal(me.status, 400, me.text);
  assert.equal(me.body.code, 211);
  const update = await server.client.put(`/1.1/users/${objectId}`, { city: 'x' }, { session: token });
  assert.equal(update.status, 403, update.text);
  const viaClasses = await server.client.put(`/1.1/classes/_User/${objectId}`, { city: 'x' }, { session: token });
  assert.equal(viaClasses.status, 403, viaClasses.text);
  const refresh = await server.client.put(`/1.1/users/${objectId}/refreshSessionToken`, undefined, { session: token });
  assert.equal(refresh.status, 403, refresh.text);
  const remove = await server.client.delete(`/1.1/users/${objectId}`, { session: token });
  assert.equal(remove.status, 403, remove.text);
  // Calls that need no user ignore it (DESIGN.md "Wire decisions").
  const open = await server.client.get('/1.1/classes/Anything', { session: token });
  assert.equal(open.status, 200, open.text);
  const objectCreate = await server.client.post('/1.1/classes/Thing', { a: 1 }, { session: token });
  assert.equal(objectCreate.status, 201, objectCreate.text);
}

test('refreshSessionToken with the own session issues a new token; the old one is rejected', async () => {
  const user = await signUp(server.client, { city: 'Rome' });
  const response = await user.client.put(`/1.1/users/${user.objectId}/refreshSessionToken`);
  assert.equal(response.status, 200, response.text);
  const fresh = response.body.sessionToken;
  assert.match(fresh, /^[a-z0-9]{25}$/);
  assert.notEqual(fresh, user.sessionToken);
  // The hosted service's answer (reference §3: the bumped updatedAt, the id and the new token), then the
  // user fields its docs and SPEC §4.1 row 7 list.
  assert.deepEqual(Object.keys(response.body), ['updatedAt', 'objectId', 'sessionToken', 'username', 'createdAt', 'emailVerified', 'mobilePhoneVerified']);
  assert.equal(response.body.username, user.username);
  assert.equal(response.body.createdAt, user.body.createdAt);
  assert.equal(response.body.emailVerified, null, 'no email: SPEC §3.1');
  assert.equal(response.body.mobilePhoneVerified, false);
  assert.equal(response.body.objectId, user.objectId);
  assert.ok(response.body.updatedAt >= String(user.body.createdAt));
  const read = await server.master.get(`/1.1/users/${user.objectId}`);
  assert.equal(read.body.updatedAt, response.body.updatedAt);

  await assertStale(user.sessionToken, user.objectId);
  const me = await server.client.get('/1.1/users/me', { session: fresh });
  assert.equal(me.body.objectId, user.objectId);
  // Login now returns the new token.
  const login = await server.client.post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(login.body.sessionToken, fresh);
});

test('refreshSessionToken: master key for anyone; another user or no session is refused', async () => {
  const user = await signUp(server.client);
  const other = await signUp(server.client);
  const byOther = await other.client.put(`/1.1/users/${user.objectId}/refreshSessionToken`);
  assert.equal(byOther.status, 403, byOther.text);
  assert.equal(byOther.body.code, 206);
  const anonymous = await server.client.put(`/1.1/users/${user.objectId}/refreshSessionToken`);
  assert.equal(anonymous.status, 403);
  assert.equal(anonymous.body.code, 206);
  const byMaster = await server.master.put(`/1.1/users/${user.objectId}/refreshSessionToken`);
  assert.equal(byMaster.status, 200, byMaster.text);
  assert.notEqual(byMaster.body.sessionToken, user.sessionToken);
  await assertStale(user.sessionToken, user.objectId);
  const missing = await server.master.put('/1.1/users/nosuchuser000000000000000/refreshSessionToken');
  assert.equal(missing.status, 400);
  assert.equal(missing.body.code, 211);
});

test('updatePassword rotates the token when forceReloginOnPasswordChange is on (the default)', async () => {
  const user = await signUp(server.client);
  const path = `/1.1/users/${user.objectId}/updatePassword`;
  const wrong = await user.client.put(path, { old_password: 'not-it', new_password: 'next-pw' });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.code, 210);
  const changed = await user.client.put(path, { old_password: user.password, new_password: 'next-pw' });
  assert.equal(changed.status, 200, changed.text);
  assert.deepEqual(Object.keys(changed.body).sort(), ['objectId', 'sessionToken', 'updatedAt']);
  assert.notEqual(changed.body.sessionToken, user.sessionToken);
  assert.ok(Date.parse(changed.body.updatedAt) >= Date.parse(user.body.updatedAt as string));
  await assertStale(user.sessionToken, user.objectId);

  const oldPassword = await server.client.post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(oldPassword.body.code, 210);
  const newPassword = await server.client.post('/1.1/login', { username: user.username, password: 'next-pw' });
  assert.equal(newPassword.status, 200, newPassword.text);
  assert.equal(newPassword.body.sessionToken, changed.body.sessionToken);
});

test('updatePassword keeps the token when forceReloginOnPasswordChange is off', async () => {
  await setForceRelogin(false);
  try {
    const user = await signUp(server.client);
    const changed = await user.client.put(`/1.1/users/${user.objectId}/updatePassword`, {
      old_password: user.password,
      new_password: 'kept-session-pw',
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.sessionToken, user.sessionToken);
    const me = await user.client.get('/1.1/users/me');
    assert.equal(me.status, 200, me.text);
    const login = await server.client.post('/1.1/login', { username: user.username, password: 'kept-session-pw' });
    assert.equal(login.body.sessionToken, user.sessionToken);
  } finally {
    await setForceRelogin(true);
  }
});

test('updatePassword needs the own session and valid passwords', async () => {
  const user = await signUp(server.client);
  const other = await signUp(server.client);
  const path = `/1.1/users/${user.objectId}/updatePassword`;
  const byOther = await other.client.put(path, { old_password: user.password, new_password: 'x1' });
  assert.equal(byOther.status, 403, byOther.text);
  assert.equal(byOther.body.code, 206);
  const none = await server.client.put(path, { old_password: user.password, new_password: 'x1' });
  assert.equal(none.body.code, 206);
  const cases: Array<[unknown, number]> = [
    [{ new_password: 'x1' }, 201],
    [{ old_password: user.password }, 201],
    [{ old_password: user.password, new_password: '' }, 218],
    [{ old_password: user.password, new_password: 5 }, 218],
  ];
  for (const [body, code] of cases) {
    const response = await user.client.put(path, body);
    assert.equal(response.status, 400, `${JSON.stringify(body)} → ${response.text}`);
    assert.equal(response.body.code, code, `${JSON.stringify(body)} → ${response.text}`);
  }
  // Nothing changed: the original password still logs in.
  const login = await server.client.post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(login.status, 200, login.text);
});

test('each user has one token: concurrent logins all return the same one', async () => {
  const user = await signUp(server.client);
  const logins = await Promise.all(
    Array.from({ length: 8 }, () => server.client.post('/1.1/login', { username: user.username, password: user.password })),
  );
  for (const login of logins) assert.equal(login.body.sessionToken, user.sessionToken);
  const other = await signUp(server.client);
  assert.notEqual(other.sessionToken, user.sessionToken);
});
