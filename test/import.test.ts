// `roost import`: a generated export of the hosted service (JSON lines) loaded through the CLI,
// then used over HTTP: ids, timestamps, ACLs, authData identities, legacy passwords (rehashed to
// argon2id at the first login), exported session tokens, an idempotent re-run and bad lines.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { exportUser, serviceHash, type ExportUser } from './helpers/export.ts';
import { roostScript } from './helpers/scripts.ts';

let database: TestDatabase;
let server: TestServer;
let dir: string;
const users: ExportUser[] = [];
const goodUsers = 12;
// Characters that bulk-load formats escape (PostgreSQL's COPY text format: tab, newline, backslash).
const postBody = 'tab\there, line\nbreak, CR\r, backslash \\ and \\N, quote " and {braces}, ünïcode ✓';
const postAcl = { '*': { read: true }, 'role:night shift': { read: true, write: true } };

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...roostScript('cli'), ...args], {
      env: { ...process.env, ...database.env, ROOST_SECRET: server.config.secret, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

before(async () => {
  database = await testDatabase();
  server = await startServer({ database });
  dir = mkdtempSync(join(tmpdir(), 'roost-import-'));
  for (let n = 0; n < goodUsers; n++) {
    const extra: Record<string, unknown> = {};
    if (n === 1) extra.authData = { weixin: { openid: 'wx-openid-1', access_token: 'tok' } };
    if (n === 7) extra.authData = { anonymous: { id: 'a1b2c3d4-0000-4000-8000-000000000001' } };
    // Same weixin account as user 1: it stays with user 1, user 2 is imported without it.
    if (n === 2) extra.authData = { weixin: { openid: 'wx-openid-1', access_token: 'tok' } };
    if (n === 3) extra.mobilePhoneNumber = '13800138003';
    users.push(exportUser(n, { extra }));
  }
  const userLines = users.map((u) => u.line);
  // Line numbers below are 1-based positions in _User.jsonl.
  userLines.splice(3, 0, '{"objectId": "broken", ');                                  // line 4: not JSON
  userLines.splice(5, 0, JSON.stringify({ username: 'no-id' }));                      // line 6: no objectId
  userLines.splice(7, 0, JSON.stringify({ objectId: 'baddate', username: 'bd', createdAt: 'yesterday' })); // line 8
  userLines.push(JSON.stringify({ objectId: 'badacl', username: 'ba', ACL: { '*': { read: 'yes' } } }));   // line 16
  userLines.push(JSON.stringify({ objectId: 'dupname', username: 'user0', salt: 's', password: serviceHash('s', 'x') })); // line 17
  userLines.push('');                                                                   // blank: ignored
  writeFileSync(join(dir, '_User.jsonl'), userLines.join('\n') + '\n');
  const devices = [
    { objectId: 'inst000000000000000000001', installationId: 'a'.repeat(32), deviceType: 'android', channels: ['news'], vendor: 'HMS', registrationId: 'hms-token-1', createdAt: '2020-05-01T10:00:00.000Z', updatedAt: '2024-05-01T10:00:00.000Z' },
    { objectId: 'inst000000000000000000002', installationId: 'b'.repeat(32), deviceType: 'android', deviceProfile: 'vip', user: { __type: 'Pointer', className: '_User', objectId: users[0].objectId }, createdAt: { __type: 'Date', iso: '2020-05-02T10:00:00.000Z' } },
    { objectId: 'inst000000000000000000003', installationId: 'c'.repeat(32), vendor: 'nokia' },
  ];
  writeFileSync(join(dir, '_Installation.json'), devices.map((d) => JSON.stringify(d)).join('\n') + '\n');
  const posts = [
    { objectId: 'post01', title: 'public', body: postBody, when: { __type: 'Date', iso: '2021-01-01T00:00:00.000Z' }, ACL: postAcl, createdAt: '2021-01-01T00:00:00.000Z', updatedAt: '2021-01-02T00:00:00.000Z' },
    { objectId: 'post02', title: 'private', ACL: { [users[0].objectId]: { read: true, write: true } }, createdAt: '2021-01-03T00:00:00.000Z', updatedAt: '2021-01-03T00:00:00.000Z' },
  ];
  writeFileSync(join(dir, 'Post.0.jsonl.gz'), gzipSync(posts.map((p) => JSON.stringify(p)).join('\r\n')));
  writeFileSync(join(dir, '_Conversation.jsonl'), JSON.stringify({ objectId: 'conv1' }) + '\n');
});

after(async () => {
  await server?.close();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the first import loads every good line and reports each bad one with its line number', async () => {
  const { code, stdout, stderr } = await cli(['import', '--app', server.appId, dir]);
  assert.equal(code, 0, stderr);
  const summary = JSON.parse(stdout) as { files: Array<{ className: string; inserted: number; existing: number; conflicts: number; bad: number; lines: number }> };
  const byClass = Object.fromEntries(summary.files.map((f) => [f.className, f]));
  assert.deepEqual(Object.keys(byClass), ['_User', '_Installation', 'Post', '_Conversation'], 'users first, then devices');
  assert.equal(byClass._User.inserted, goodUsers);
  assert.equal(byClass._User.bad, 4);
  assert.equal(byClass._User.conflicts, 1);
  assert.equal(byClass._Installation.inserted, 2);
  assert.equal(byClass._Installation.bad, 1);
  assert.equal(byClass.Post.inserted, 2);
  assert.equal(byClass._Conversation.inserted, 0);
  const users = join(dir, '_User.jsonl');
  assert.match(stderr, new RegExp(`${users}:4: skipped: not JSON`));
  assert.match(stderr, new RegExp(`${users}:6: skipped: objectId is missing`));
  assert.match(stderr, new RegExp(`${users}:8: skipped: createdAt is not an ISO 8601 date`));
  assert.match(stderr, new RegExp(`${users}:16: skipped: Invalid ACL permission`));
  assert.match(stderr, new RegExp(`${users}:17: skipped: username is already taken`));
  assert.match(stderr, /_User\.jsonl:\d+: warning: authData\.weixin is already bound to another user/);
  assert.match(stderr, /_Installation\.json:3: skipped: vendor must be one of/);
  assert.match(stderr, /_Conversation\.jsonl:0: warning: class _Conversation is not imported/);
  // No secret of the export reaches the output.
  for (const user of users.slice(0, 3) as unknown as ExportUser[]) assert.ok(!stderr.includes(user.sessionToken));
});

test('ids, timestamps, ACLs and fields arrive as exported; secrets stay out of the records', async () => {
  const { body } = await server.master.get('/1.1/classes/_User', { query: { count: 1, limit: 1000, order: 'createdAt' } });
  assert.equal(body.count, goodUsers);
  assert.deepEqual(body.results.map((u: { objectId: string }) => u.objectId), users.map((u) => u.objectId));
  const first = body.results[1];
  const exported = JSON.parse(users[1].line);
  assert.equal(first.createdAt, exported.createdAt.iso);
  assert.equal(first.updatedAt, exported.updatedAt);
  assert.equal(first.username, 'user1');
  assert.equal(first.emailVerified, false);
  for (const user of body.results) {
    for (const secret of ['password', 'salt', 'sessionToken']) assert.equal(user[secret], undefined, secret);
  }
  const phone = body.results[3];
  assert.equal(phone.mobilePhoneNumber, '+8613800138003', 'phone numbers are stored in E.164, as Roost stores them');

  const acl = await server.master.get(`/1.1/classes/_User/${users[0].objectId}`, { query: { returnACL: 'true' } });
  assert.deepEqual(acl.body.ACL, { '*': { read: true }, [users[0].objectId]: { write: true } });

  // An object readable only by user 0: hidden from others, shown to that user's exported session.
  assert.deepEqual((await server.client.get('/1.1/classes/Post/post02')).body, {});
  const own = await server.client.get('/1.1/classes/Post/post02', { session: users[0].sessionToken });
  assert.equal(own.body.title, 'private');
  assert.equal(own.body.createdAt, '2021-01-03T00:00:00.000Z');
  const publicPost = await server.client.get('/1.1/classes/Post/post01');
  assert.deepEqual(publicPost.body.when, { __type: 'Date', iso: '2021-01-01T00:00:00.000Z' });
  assert.equal(publicPost.body.updatedAt, '2021-01-02T00:00:00.000Z');
  assert.equal(publicPost.body.body, postBody);
  const postWithAcl = await server.master.get('/1.1/classes/Post/post01', { query: { returnACL: 'true' } });
  assert.deepEqual(postWithAcl.body.ACL, postAcl);

  const device = await server.master.get('/1.1/installations/inst000000000000000000002');
  assert.equal(device.body.deviceProfile, 'vip');
  assert.equal(device.body.createdAt, '2020-05-02T10:00:00.000Z');
  assert.equal(device.body.updatedAt, '2020-05-02T10:00:00.000Z', 'a missing updatedAt is the createdAt');
  const hms = await server.master.get('/1.1/installations/inst000000000000000000001');
  assert.equal(hms.body.deviceProfile, '_default');
  // The same device saving itself again (installationId is promoted and unique) updates its record.
  const resave = await server.client.post('/1.1/installations', { installationId: 'a'.repeat(32), deviceType: 'android', badge: 1 });
  assert.equal(resave.status, 200, resave.text);
  assert.equal(resave.body.objectId, 'inst000000000000000000001');
});

test('an imported user logs in with the old password; the hash becomes argon2id', async () => {
  const user = users[4];
  const before = await server.store.accounts.findUser(server.appId, { userId: user.objectId });
  assert.ok(before?.passwordHash?.startsWith('$lcsha512$'));
  const wrong = await server.client.post('/1.1/login', { username: user.username, password: 'not-it' });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.code, 210);

  const login = await server.client.post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(login.status, 200, login.text);
  assert.equal(login.body.objectId, user.objectId);
  assert.equal(login.body.sessionToken, user.sessionToken, 'the exported session token stays the user\'s token');
  const after = await server.store.accounts.findUser(server.appId, { userId: user.objectId });
  assert.ok(after?.passwordHash?.startsWith('$argon2id$'), 'rehashed at the first login');
  assert.equal(after?.user.updatedAt, before?.user.updatedAt, 'a rehash is not an update of the user');

  const again = await server.client.post('/1.1/login', { email: 'user4@example.com', password: user.password });
  assert.equal(again.status, 200, again.text);
  const stillWrong = await server.client.post('/1.1/login', { username: user.username, password: user.password + 'x' });
  assert.equal(stillWrong.body.code, 210);

  // A password change through the API needs the old (legacy) password as well.
  const other = users[5];
  const change = await server.client.put(
    `/1.1/users/${other.objectId}/updatePassword`,
    { old_password: other.password, new_password: 'brand-new-password' },
    { session: other.sessionToken },
  );
  assert.equal(change.status, 200, change.text);
  const relogin = await server.client.post('/1.1/login', { username: other.username, password: 'brand-new-password' });
  assert.equal(relogin.status, 200);
});

test('apps signed in before the move stay signed in: users/me with the exported token', async () => {
  const me = await server.client.get('/1.1/users/me', { session: users[6].sessionToken });
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.objectId, users[6].objectId);
  assert.equal(me.body.sessionToken, users[6].sessionToken);
});

test('authData identities: imported accounts sign in; a duplicate stays with its first user', async () => {
  const signIn = await server.client.post('/1.1/users', { authData: { weixin: { openid: 'wx-openid-1', access_token: 'tok' } } });
  assert.equal(signIn.status, 200, signIn.text);
  assert.equal(signIn.body.objectId, users[1].objectId);
  const anonymous = await server.client.post('/1.1/users', { authData: { anonymous: { id: 'a1b2c3d4-0000-4000-8000-000000000001' } } });
  assert.equal(anonymous.status, 200, anonymous.text);
  assert.equal(anonymous.body.objectId, users[7].objectId);
  const second = await server.master.get(`/1.1/users/${users[2].objectId}`);
  assert.deepEqual(second.body.authData ?? {}, {}, 'left out of the second user');
  // The unique index holds: linking the same account to user 2 is refused.
  const link = await server.client.put(
    `/1.1/users/${users[2].objectId}`,
    { authData: { weixin: { openid: 'wx-openid-1', access_token: 'tok' } } },
    { session: users[2].sessionToken },
  );
  assert.equal(link.body.code, 208, link.text);
});

test('a re-run skips every objectId already present, conflicts again, and imports the lines added since', async () => {
  const before = await server.master.get('/1.1/classes/_User', { query: { count: 1, limit: 0 } });
  const { code, stdout, stderr } = await cli(['import', '--app', server.appId, '--batch', '5', dir]);
  assert.equal(code, 0, stderr);
  type Summary = { files: Array<{ className: string; inserted: number; existing: number; conflicts: number }> };
  const byClass = Object.fromEntries((JSON.parse(stdout) as Summary).files.map((f) => [f.className, f]));
  assert.equal(byClass._User.inserted, 0);
  assert.equal(byClass._User.existing, goodUsers);
  assert.equal(byClass._User.conflicts, 1);
  assert.match(stderr, /_User\.jsonl:17: skipped: username is already taken/);
  assert.equal(byClass._Installation.existing, 2);
  assert.equal(byClass.Post.existing, 2);
  const afterCount = await server.master.get('/1.1/classes/_User', { query: { count: 1, limit: 0 } });
  assert.equal(afterCount.body.count, before.body.count);
  // The rehashed user keeps the argon2id hash: a re-run does not bring the old one back.
  const rehashed = await server.store.accounts.findUser(server.appId, { userId: users[4].objectId });
  assert.ok(rehashed?.passwordHash?.startsWith('$argon2id$'));

  // A user created on the service since the first export: the next run (parsing on the main thread
  // this time) adds it, with its session, and skips the rest.
  const added = exportUser(goodUsers);
  appendFileSync(join(dir, '_User.jsonl'), added.line + '\n');
  const next = await cli(['import', '--app', server.appId, '--workers', '0', '--batch', '3', dir]);
  assert.equal(next.code, 0, next.stderr);
  const nextByClass = Object.fromEntries((JSON.parse(next.stdout) as Summary).files.map((f) => [f.className, f]));
  assert.equal(nextByClass._User.inserted, 1);
  assert.equal(nextByClass._User.existing, goodUsers);
  assert.equal(nextByClass._User.conflicts, 1);
  assert.equal(nextByClass.Post.existing, 2);
  const me = await server.client.get('/1.1/users/me', { session: added.sessionToken });
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.objectId, added.objectId);
});

test('usage errors and an unknown application', async () => {
  const missing = await cli(['import', dir]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--app APPID/);
  const unknown = await cli(['import', '--app', 'nope', dir]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no application with id nope/);
});
