// Unchanged clients: the official JavaScript SDK (npm leancloud-storage) drives Roost through its
// user, object and installation surface as an app in the field does: every request signed
// (X-LC-Sign, app key or ",master"), the current user's X-LC-Session on every request, the SDK's
// own paths (/1.1/classes/_User, /1.1/classes/_Installation, /1.1/batch, ?new=true).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { initSdk, rejection } from './helpers/sdk.ts';
import { startServer, type TestServer } from './helpers/harness.ts';
import { uniqueName } from './helpers/accounts.ts';
import { exportUser } from './helpers/export.ts';
import { SessionTokens } from '../src/accounts/sessions.ts';
import { parseExportLine, sealSession } from '../src/import/export-format.ts';
import { prepareImportBatch } from '../src/storage/import-batch.ts';

let server: TestServer;

before(async () => {
  server = await startServer();
  initSdk(server);
});
after(async () => {
  await AV.User.logOut();
  await server?.close();
});

async function newUser(password = 'interop-password'): Promise<AV.User> {
  const user = new AV.User();
  user.setUsername(uniqueName('interop'));
  user.setPassword(password);
  await user.signUp();
  return user;
}

test('users: sign up, log in, become, update, fetch, current user across a logout', async () => {
  const user = await newUser();
  const token = user.getSessionToken();
  assert.match(token, /^[a-z0-9]+$/);
  await AV.User.logOut();
  assert.equal(await AV.User.currentAsync(), null);

  const loggedIn = await AV.User.logIn(user.getUsername(), 'interop-password');
  assert.equal(loggedIn.id, user.id);
  loggedIn.set('nickname', 'Ana');
  loggedIn.increment('visits', 2);
  await loggedIn.save(null, { fetchWhenSave: true });
  assert.equal(loggedIn.get('visits'), 2);

  await AV.User.logOut();
  const became = await AV.User.become(token);
  assert.equal(became.id, user.id);
  assert.equal(became.get('nickname'), 'Ana');
  assert.equal((await AV.User.currentAsync())?.id, user.id);
  assert.equal(await became.isAuthenticated(), true);

  const wrong = await rejection(AV.User.logIn(user.getUsername(), 'not-the-password'));
  assert.equal(wrong.code, 210);
  const stale = await rejection(AV.User.become('no-such-token'));
  assert.equal(stale.code, 211);
});

test('objects: ACLs are applied to queries, gets and writes', async () => {
  const owner = await newUser();
  const secret = new AV.Object('Diary');
  secret.set({ text: 'private', day: 1 });
  secret.setACL(new AV.ACL(owner));
  await secret.save();
  const open = new AV.Object('Diary');
  open.set({ text: 'public', day: 2 });
  const acl = new AV.ACL();
  acl.setPublicReadAccess(true);
  acl.setWriteAccess(owner, true);
  open.setACL(acl);
  await open.save();

  const ownerView = await new AV.Query('Diary').ascending('day').find();
  assert.deepEqual(ownerView.map((o) => o.get('text')), ['private', 'public']);
  assert.equal(await new AV.Query('Diary').count(), 2);

  await AV.User.logOut();
  await newUser();
  const otherView = await new AV.Query('Diary').find();
  assert.deepEqual(otherView.map((o) => o.get('text')), ['public']);
  assert.equal(await new AV.Query('Diary').count(), 1);
  // An unreadable object is {} on the wire: a single fetch finds no fields; a batch fetch
  // ({"success": null} in /1.1/batch) makes fetchAll fail with 101.
  const single = await AV.Object.createWithoutData('Diary', secret.id as string).fetch();
  assert.equal(single.get('text'), undefined);
  const hidden = await rejection(AV.Object.fetchAll([AV.Object.createWithoutData('Diary', secret.id as string)]));
  assert.equal(hidden.code, 101);
  const denied = await rejection(AV.Object.createWithoutData('Diary', open.id as string).set('text', 'defaced').save());
  assert.equal(denied.code, 403);

  // The master key (signed with ",master") passes every ACL.
  const all = await new AV.Query('Diary').find({ useMasterKey: true });
  assert.equal(all.length, 2);

  const query = new AV.Query('Diary');
  query.containedIn('text', ['public', 'private']).greaterThanOrEqualTo('day', 2).select('text');
  const selected = await query.find({ useMasterKey: true });
  assert.equal(selected.length, 1);
  assert.equal(selected[0].get('text'), 'public');
  assert.equal(selected[0].get('day'), undefined);
});

test('batch: saveAll, nested saves, fetchAll and destroyAll go through /1.1/batch', async () => {
  await AV.User.logOut();
  const items = [1, 2, 3].map((n) => new AV.Object('Item').set({ n }));
  await AV.Object.saveAll(items);
  assert.ok(items.every((item) => typeof item.id === 'string'));

  // A new object pointing at another new object: the SDK saves both in one batch.
  const author = new AV.Object('Author').set('name', 'Rui');
  const book = new AV.Object('Book').set({ title: 'Roost', author });
  await book.save();
  assert.ok(author.id);
  // Without include the pointer carries only the id (test/interop-include.test.ts: with it).
  const fetched = await new AV.Query('Book').get(book.id as string);
  assert.equal((fetched.get('author') as AV.Object).id, author.id);

  const copies = items.map((item) => AV.Object.createWithoutData('Item', item.id as string));
  await AV.Object.fetchAll(copies);
  assert.deepEqual(copies.map((c) => c.get('n')), [1, 2, 3]);
  await AV.Object.destroyAll(items);
  assert.equal(await new AV.Query('Item').count(), 0);
});

test('installations: AV.Installation saves upsert by installationId; AV.Push.send reaches it', async () => {
  const installationId = 'f'.repeat(32);
  const device = new AV.Installation();
  device.set({ installationId, deviceType: 'android', channels: ['news'], vendor: 'HMS', registrationId: 'hms-token' });
  await device.save();
  assert.ok(device.id);

  // The app reinstalled with its cached id lost: it saves a new object with the same installationId.
  const again = new AV.Installation();
  again.set({ installationId, deviceType: 'android', channels: ['news', 'sports'] });
  await again.save();
  assert.equal(again.id, device.id);
  const stored = await AV.Object.createWithoutData('_Installation', device.id as string).fetch({}, { useMasterKey: true });
  assert.deepEqual(stored.get('channels'), ['news', 'sports']);
  assert.equal(stored.get('vendor'), 'HMS');

  const sent = (await AV.Push.send({ channels: ['sports'], data: { alert: 'Goal!', title: 'Match' } }, { useMasterKey: true })) as {
    objectId: string;
    createdAt: string;
  };
  assert.ok(sent.objectId);
  const withQuery = (await AV.Push.send(
    { where: new AV.Query(AV.Installation).equalTo('installationId', installationId), data: { alert: 'Direct' } },
    { useMasterKey: true },
  )) as { objectId: string };
  assert.ok(withQuery.objectId);
  await server.services.push.drain();
  const record = await server.master.get(`/1.1/notifications/${sent.objectId}`);
  assert.equal(record.status, 200, record.text);
  assert.equal(record.body.status, 'done');
  assert.equal(record.body.devices, 1);

  // Without the master key a client push is refused while clientPushAllowed is off.
  const refused = await rejection(AV.Push.send({ channels: ['news'], data: { alert: 'x' } }));
  assert.equal(refused.code, 403);
});

// Review of e2b2d15, finding 3 (installations belong to their user): the SDK's own flow under the rule.
test('installations: saved with the app key, bound after login with the current user, unbound at logout', async () => {
  await AV.User.logOut();
  const installationId = 'e'.repeat(32);
  const device = new AV.Installation();
  device.set({ installationId, deviceType: 'android' });
  await device.save();
  const user = await newUser();
  device.set('user', AV.User.current());
  await device.save();
  // Re-registering at the next start, signed in: the same record, still bound.
  const again = new AV.Installation();
  again.set({ installationId, deviceType: 'android' });
  await again.save();
  assert.equal(again.id, device.id);
  const stored = await AV.Object.createWithoutData('_Installation', device.id as string).fetch({}, { useMasterKey: true });
  assert.equal((stored.get('user') as AV.Object).id, user.id);
  // Someone else on this device cannot take it over, nor bind a device to another user.
  await AV.User.logOut();
  await newUser();
  const takeOver = new AV.Installation();
  takeOver.set({ installationId, deviceType: 'android' });
  assert.equal((await rejection(takeOver.save())).code, 403);
  const foreign = new AV.Installation();
  foreign.set({ installationId: 'd'.repeat(32), user: AV.Object.createWithoutData('_User', user.id as string) });
  assert.equal((await rejection(foreign.save())).code, 403);
  // Unbound by its user (as at logout), the device registers again for whoever signs in next.
  await AV.User.logOut();
  await AV.User.logIn(user.getUsername(), 'interop-password');
  device.unset('user');
  await device.save();
  await AV.User.logOut();
  const next = await newUser();
  const rebound = new AV.Installation();
  rebound.set({ installationId, deviceType: 'android' });
  await rebound.save();
  const nowBound = await AV.Object.createWithoutData('_Installation', device.id as string).fetch({}, { useMasterKey: true });
  assert.equal((nowBound.get('user') as AV.Object).id, next.id);
});

test('after the move: an imported user logs in with the old password and the old session still works', async () => {
  await AV.User.logOut();
  const exported = exportUser(9001, { extra: { username: uniqueName('moved') } });
  const sessions = new SessionTokens({ secret: server.config.secret });
  const parsed = parseExportLine(exported.line, { className: '_User', now: Date.now() });
  assert.ok('record' in parsed);
  const record = sealSession(parsed, (token) => sessions.seal(token));
  const [status] = await server.store.ops.importObjects(prepareImportBatch(server.store.kind, server.appId, '_User', [record]));
  assert.equal(status.kind, 'inserted');
  const username = JSON.parse(exported.line).username as string;

  // A phone that was signed in keeps its session: become() with the token it had cached.
  const current = await AV.User.become(exported.sessionToken);
  assert.equal(current.id, exported.objectId);
  await AV.User.logOut();
  const loggedIn = await AV.User.logIn(username, exported.password);
  assert.equal(loggedIn.id, exported.objectId);
  assert.equal(loggedIn.getSessionToken(), exported.sessionToken);
});

test('signed requests: a signature made with another key is refused, a stale one too', async () => {
  // The SDK signs every request (md5(timestamp + key), ms timestamp); Roost checks it the same way.
  const now = Date.now();
  const { createHash } = await import('node:crypto');
  const sign = (key: string, at: number) => createHash('md5').update(`${at}${key}`).digest('hex');
  const headers = (value: string) => ({ 'X-LC-Id': server.appId, 'X-LC-Sign': value, 'Content-Type': 'application/json' });
  const good = await fetch(`${server.url}/1.1/classes/Diary?limit=1`, { headers: headers(`${sign(server.appKey, now)},${now}`) });
  assert.equal(good.status, 200);
  const wrongKey = await fetch(`${server.url}/1.1/classes/Diary`, { headers: headers(`${sign('not-the-key', now)},${now}`) });
  assert.equal(wrongKey.status, 401);
  const old = now - 3600_000;
  const stale = await fetch(`${server.url}/1.1/classes/Diary`, { headers: headers(`${sign(server.appKey, old)},${old}`) });
  assert.equal(stale.status, 401);
  const master = await fetch(`${server.url}/1.1/users?limit=1`, { headers: headers(`${sign(server.masterKey, now)},${now},master`) });
  assert.equal(master.status, 200);
  const lines = server.logs.join('');
  assert.ok(!lines.includes(server.appKey) && !lines.includes(server.masterKey), 'keys never reach a log line');
});
