// The console's users page over HTTP (docs/console.md): find a user by username, email, phone or
// objectId; view it without password, token or third-party secrets; mark verified, send a reset mail,
// sign out everywhere, unlock, delete; a viewer reads but changes nothing; each change audited.
// With a real SMTP sink; on the store this run selects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import { address, startMailServer, type MailTestServer } from './helpers/mail.ts';
import { ConsoleClient, makeOperator } from './helpers/console.ts';

let m: MailTestServer;
let ada: ConsoleClient;
let vic: ConsoleClient;
let user: SignedUpUser;
let email: string;
const phone = '+8613800138000';
let base: string;

before(async () => {
  m = await startMailServer();
  await makeOperator(m.server.services.operators, 'ada', 'admin');
  await makeOperator(m.server.services.operators, 'vic', 'viewer');
  ada = new ConsoleClient(m.server.url);
  vic = new ConsoleClient(m.server.url);
  await ada.signIn('ada');
  await vic.signIn('vic');
  email = address('found');
  user = await signUp(m.client, { email, mobilePhoneNumber: phone, authData: { weixin: { openid: 'wx-open-1', access_token: 'wx-secret-token', expires_in: 7200 } } });
  base = `/console/api/apps/${m.server.appId}/users`;
});
after(async () => m?.close());

async function lastAudit() {
  const [entry] = (await ada.request('GET', '/console/api/audit')).body.results;
  return { actor: entry.actor, action: entry.action, target: entry.target, detail: entry.detail };
}

async function login(password = user.password) {
  return m.client.withSession(undefined).post('/1.1/login', { username: user.username, password });
}

test('find a user by username, email, phone or objectId; nothing else matches', async () => {
  for (const query of [user.username, email, phone, user.objectId, `  ${user.username} `]) {
    const res = await vic.request('GET', `${base}?q=${encodeURIComponent(query)}`);
    assert.equal(res.status, 200, query);
    assert.deepEqual(res.body.results.map((u: { objectId: string }) => u.objectId), [user.objectId], query);
  }
  for (const query of [user.username.slice(0, -1), 'nobody@example.com', '', 'x'.repeat(300)]) {
    assert.deepEqual((await vic.request('GET', `${base}?q=${encodeURIComponent(query)}`)).body, { results: [] }, query);
  }
  const page = await vic.request('GET', `/console/apps/${m.server.appId}/users?q=${encodeURIComponent(email)}`);
  assert.equal(page.status, 200);
  assert.ok(page.text.includes(`href="/console/apps/${m.server.appId}/users/${user.objectId}"`));
});

test("a user's view has no password, session token or third-party token", async () => {
  const res = await vic.request('GET', `${base}/${user.objectId}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.user.username, user.username);
  assert.deepEqual(res.body.user.authData, { weixin: { openid: 'wx-open-1' } });
  assert.equal(res.body.lockedUntil, null);
  const page = await vic.request('GET', `/console/apps/${m.server.appId}/users/${user.objectId}`);
  for (const text of [res.text, page.text]) {
    assert.ok(!text.includes(user.password) && !text.includes(user.sessionToken) && !text.includes('wx-secret-token') && !text.includes('$argon2'));
  }
  assert.ok(!page.text.includes('<form method="post" action="/console/apps/'), 'a viewer is offered no action');
  const missing = await vic.request('GET', `${base}/nosuchuser123`);
  assert.deepEqual([missing.status, missing.body], [400, { code: 211, error: 'Could not find user.' }]);
});

test('a viewer cannot change a user', async () => {
  for (const action of ['verify-email', 'verify-phone', 'reset', 'revoke', 'unlock']) {
    const res = await vic.change('POST', `${base}/${user.objectId}/${action}`);
    assert.deepEqual([res.status, res.body], [403, { code: 403, error: 'A viewer cannot change anything.' }], action);
  }
  assert.equal((await vic.change('DELETE', `${base}/${user.objectId}`)).status, 403);
  const noToken = await ada.request('POST', `${base}/${user.objectId}/revoke`, { json: {} });
  assert.equal(noToken.status, 403, 'no change without the CSRF token');
  assert.equal((await login()).status, 200, 'the user is untouched');
});

test('mark email and phone verified, each audited', async () => {
  const page = await ada.request('POST', `/console/apps/${m.server.appId}/users/${user.objectId}/verify-email`, { form: { _csrf: ada.csrf } });
  assert.deepEqual([page.status, page.headers.get('location')], [303, `/console/apps/${m.server.appId}/users/${user.objectId}?done=verify-email`]);
  assert.deepEqual(await lastAudit(), { actor: 'ada', action: 'user.verifyEmail', target: `${m.server.appId}/${user.objectId}`, detail: { username: user.username } });
  assert.equal((await ada.change('POST', `${base}/${user.objectId}/verify-phone`)).status, 200);
  assert.equal((await lastAudit()).action, 'user.verifyPhone');
  const read = (await ada.request('GET', `${base}/${user.objectId}`)).body.user;
  assert.deepEqual([read.emailVerified, read.mobilePhoneVerified], [true, true]);
  const shown = await ada.request('GET', `/console/apps/${m.server.appId}/users/${user.objectId}?done=verify-email`);
  assert.match(shown.text, /role="status">The email is marked verified\./);
  assert.ok(!shown.text.includes('Mark email verified'), 'no button for what is done');
});

test('send a password reset email', async () => {
  const before = m.sink.to(email).length;
  const res = await ada.change('POST', `${base}/${user.objectId}/reset`);
  assert.equal(res.status, 200);
  await m.sink.waitFor(email, before + 1);
  assert.deepEqual(await lastAudit(), { actor: 'ada', action: 'user.resetMail', target: `${m.server.appId}/${user.objectId}`, detail: { username: user.username, email } });
  const other = await signUp(m.client, {});
  const refused = await ada.change('POST', `${base}/${other.objectId}/reset`);
  assert.deepEqual([refused.status, refused.body], [400, { code: 204, error: 'The email is missing, and must be specified.' }]);
});

test('sign out everywhere: the old session token is refused', async () => {
  assert.equal((await user.client.get('/1.1/users/me')).status, 200);
  assert.equal((await ada.change('POST', `${base}/${user.objectId}/revoke`)).status, 200);
  const stale = await user.client.get('/1.1/users/me');
  assert.deepEqual([stale.status, stale.body.code], [400, 211], 'users/me with the old token: no such session');
  assert.equal((await lastAudit()).action, 'user.revokeSessions');
});

test('a locked user is shown locked and unlocked by an admin', async () => {
  for (let i = 0; i < 7; i++) await login('not the password');
  assert.equal((await login()).body.code, 219, 'locked');
  const view = await ada.request('GET', `${base}/${user.objectId}`);
  assert.match(view.body.lockedUntil, /^\d{4}-/);
  const page = await ada.request('GET', `/console/apps/${m.server.appId}/users/${user.objectId}`);
  assert.match(page.text, /<strong>Locked<\/strong> until/);
  const unlocked = await ada.request('POST', `/console/apps/${m.server.appId}/users/${user.objectId}/unlock`, { form: { _csrf: ada.csrf } });
  assert.equal(unlocked.status, 303);
  assert.equal((await login()).status, 200, 'signs in again');
  assert.equal((await ada.request('GET', `${base}/${user.objectId}`)).body.lockedUntil, null);
  assert.equal((await lastAudit()).action, 'user.unlock');
});

test('delete a user: the form needs the box ticked', async () => {
  const doomed = await signUp(m.client, {});
  const path = `/console/apps/${m.server.appId}/users/${doomed.objectId}/delete`;
  const unticked = await ada.request('POST', path, { form: { _csrf: ada.csrf } });
  assert.equal(unticked.status, 400);
  assert.match(unticked.text, /role="alert">Tick the box to confirm the deletion\./);
  const done = await ada.request('POST', path, { form: { _csrf: ada.csrf, sure: 'on' } });
  assert.deepEqual([done.status, done.headers.get('location')], [303, `/console/apps/${m.server.appId}/users?done=deleted`]);
  assert.deepEqual((await ada.request('GET', `${base}?q=${doomed.username}`)).body, { results: [] });
  assert.deepEqual(await lastAudit(), { actor: 'ada', action: 'user.delete', target: `${m.server.appId}/${doomed.objectId}`, detail: { username: doomed.username } });
  const unknownAction = await ada.change('POST', `${base}/${user.objectId}/promote`);
  assert.equal(unknownAction.status, 404);
});
