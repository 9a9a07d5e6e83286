import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp } from './helpers/accounts.ts';
import { ChannelClient } from '../src/push/channel/client.ts';

let server: TestServer;
const devices: ChannelClient[] = [];
before(async () => {
  server = await startServer();
});
after(async () => {
  await Promise.all(devices.map((d) => d.close()));
  await server?.close();
});

test('create answers 201; a create with a known installationId updates that record', async () => {
  const first = await server.client.post('/1.1/installations', { installationId: 'inst-a', deviceType: 'android', channels: ['news'] });
  assert.equal(first.status, 201, first.text);
  assert.deepEqual(Object.keys(first.body).sort(), ['createdAt', 'objectId']);
  assert.equal(first.headers.get('location'), `/1.1/installations/${first.body.objectId}`);

  const again = await server.client.post('/1.1/classes/_Installation', { installationId: 'inst-a', channels: ['sport'] });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.body.objectId, first.body.objectId);

  const got = await server.client.get(`/1.1/installations/${first.body.objectId}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.body.channels, ['sport']);
  assert.equal(got.body.deviceType, 'android');
  assert.equal(got.body.deviceProfile, '_default');
  const viaClasses = await server.client.get(`/1.1/classes/_Installation/${first.body.objectId}`);
  assert.deepEqual(viaClasses.body, got.body);
});

test('vendor, registrationId, channels and deviceProfile are validated', async () => {
  const cases: Array<[Record<string, unknown>, number]> = [
    [{ installationId: 'v1', vendor: 'nokia' }, 111],
    [{ installationId: 'v2', vendor: 'HMS', registrationId: 42 }, 111],
    [{ installationId: 'v3', channels: 'news' }, 112],
    [{ installationId: 'v4', channels: ['bad channel!'] }, 112],
    [{ installationId: 'v5', deviceProfile: '9lives' }, 111],
    [{ installationId: 'v6', valid: 'yes' }, 111],
    [{ installationId: 7 }, 111],
  ];
  for (const [body, code] of cases) {
    const response = await server.client.post('/1.1/installations', body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(response.body.code, code, JSON.stringify(body));
    assert.equal(typeof response.body.error, 'string');
  }
  const ok = await server.client.post('/1.1/installations', {
    installationId: 'v-ok',
    vendor: 'honor',
    registrationId: 'reg-1',
    deviceProfile: 'eu_profile',
    channels: ['', 'a-b=c_d', '新闻'],
  });
  assert.equal(ok.status, 201, ok.text);
  const badAdd = await server.client.put(`/1.1/installations/${ok.body.objectId}`, {
    channels: { __op: 'AddUnique', objects: ['no spaces'] },
  });
  assert.equal(badAdd.status, 400);
  assert.equal(badAdd.body.code, 112);
  const goodAdd = await server.client.put(`/1.1/installations/${ok.body.objectId}`, {
    channels: { __op: 'AddUnique', objects: ['extra'] },
  });
  assert.equal(goodAdd.status, 200, goodAdd.text);
});

test('find and delete need the master key', async () => {
  const created = await server.client.post('/1.1/installations', { installationId: 'del-me' });
  const find = await server.client.get('/1.1/installations');
  assert.equal(find.status, 403);
  assert.equal(find.body.code, 403);
  const findClasses = await server.client.get('/1.1/classes/_Installation');
  assert.equal(findClasses.status, 403);
  const del = await server.client.delete(`/1.1/installations/${created.body.objectId}`);
  assert.equal(del.status, 403);

  const found = await server.master.get('/1.1/installations', { query: { where: { installationId: 'del-me' } } });
  assert.equal(found.status, 200);
  assert.equal(found.body.results.length, 1);
  const removed = await server.master.delete(`/1.1/classes/_Installation/${created.body.objectId}`);
  assert.equal(removed.status, 200);
  const gone = await server.master.get(`/1.1/installations/${created.body.objectId}`);
  assert.deepEqual(gone.body, {});
});

test('an installation saved with a session is tied to that user', async () => {
  const signup = await server.client.post('/1.1/users', { username: 'owner1', password: 'pw-123456' });
  assert.equal(signup.status, 201, signup.text);
  const saved = await server.client.post(
    '/1.1/installations',
    { installationId: 'owned-1' },
    { session: signup.body.sessionToken },
  );
  assert.equal(saved.status, 201, saved.text);
  const got = await server.master.get(`/1.1/installations/${saved.body.objectId}`);
  assert.deepEqual(got.body.user, { __type: 'Pointer', className: '_User', objectId: signup.body.objectId });
});

const userPointer = (objectId: string) => ({ __type: 'Pointer', className: '_User', objectId });
const notYours = { code: 403, error: "An installation bound to a user is changed, and a user bound, only with that user's session or the master key." };
const notYourUser = { code: 403, error: "An installation's user can only be set to the user of the session, or with the master key." };

// Review of e2b2d15, finding 3 (installations belong to their user): with the app key alone anyone could create
// an installation bound to any user, rewrite another user's by objectId or installationId and read it by
// objectId; a push aimed at that user then reached the attacker's own channel socket.
test("an installation bound to a user is that user's: others cannot bind to it, change it, read it or get its pushes", async () => {
  const bob = await signUp(server.client);
  const mallory = await signUp(server.client);
  const bobs = await bob.client.post('/1.1/installations', { installationId: 'bob-dev', deviceType: 'android', channels: ['b'] });
  assert.equal(bobs.status, 201, bobs.text);
  const bobId = bobs.body.objectId;
  const asBob = userPointer(bob.objectId);

  // Binding a new or one's own installation to Bob.
  for (const [client, path, installationId] of [
    [server.client, '/1.1/installations', 'mal-1'],
    [mallory.client, '/1.1/classes/_Installation', 'mal-2'],
  ] as const) {
    const created = await client.post(path, { installationId, deviceType: 'android', user: asBob });
    assert.deepEqual([created.status, created.body], [403, notYourUser], path);
  }
  const batch = await server.client.post('/1.1/batch', {
    requests: [{ method: 'POST', path: '/1.1/classes/_Installation', body: { installationId: 'mal-1', user: asBob } }],
  });
  assert.deepEqual(batch.body, [{ error: notYourUser }]);
  const own = await server.client.post('/1.1/installations', { installationId: 'mal-3', deviceType: 'android' });
  assert.equal(own.status, 201, own.text);
  const rebound = await mallory.client.put(`/1.1/installations/${own.body.objectId}`, { user: asBob });
  assert.deepEqual([rebound.status, rebound.body], [403, notYourUser]);

  // Rewriting Bob's: by objectId (both paths, batch) and by installationId (a create that finds it).
  const attempts = [
    () => server.client.put(`/1.1/installations/${bobId}`, { installationId: 'mal-4' }),
    () => mallory.client.put(`/1.1/classes/_Installation/${bobId}`, { installationId: 'mal-4' }),
    () => server.client.put(`/1.1/installations/${bobId}`, { user: { __op: 'Delete' } }),
    () => server.client.post('/1.1/installations', { installationId: 'bob-dev', channels: ['mal'] }),
    () => mallory.client.post('/1.1/classes/_Installation', { installationId: 'bob-dev', deviceType: 'android' }),
  ];
  for (const attempt of attempts) {
    const refused = await attempt();
    assert.deepEqual([refused.status, refused.body], [403, notYours]);
  }
  const viaBatch = await server.client.post('/1.1/batch', {
    requests: [{ method: 'PUT', path: `/1.1/classes/_Installation/${bobId}`, body: { installationId: 'mal-4' } }],
  });
  assert.deepEqual(viaBatch.body, [{ error: notYours }]);
  assert.equal((await server.client.delete(`/1.1/installations/${bobId}`)).status, 403);

  // Reading it by objectId: as missing, like an object the ACL hides.
  for (const client of [server.client, mallory.client]) {
    assert.deepEqual((await client.get(`/1.1/installations/${bobId}`)).body, {});
    assert.deepEqual((await client.get(`/1.1/classes/_Installation/${bobId}`)).body, {});
  }
  assert.equal((await bob.client.get(`/1.1/installations/${bobId}`)).body.installationId, 'bob-dev');
  const stored = await server.master.get(`/1.1/installations/${bobId}`);
  assert.deepEqual([stored.body.installationId, stored.body.channels, stored.body.user], ['bob-dev', ['b'], asBob]);

  // A push to Bob reaches Bob's device, and none of the attacker's sockets.
  const bobSocket = new ChannelClient({ url: server.url, appId: server.appId, appKey: server.appKey, installationId: 'bob-dev' });
  const attackerSockets = ['mal-1', 'mal-2', 'mal-3', 'mal-4'].map(
    (installationId) => new ChannelClient({ url: server.url, appId: server.appId, appKey: server.appKey, installationId }),
  );
  devices.push(bobSocket, ...attackerSockets);
  await Promise.all([bobSocket, ...attackerSockets].map((socket) => socket.connect()));
  const pushed = await server.master.post('/1.1/push', { where: { user: asBob }, data: { alert: 'for Bob' } });
  assert.equal(pushed.status, 201, pushed.text);
  await server.services.push.drain();
  await bobSocket.waitForMessages(1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(attackerSockets.map((socket) => socket.messages.length), [0, 0, 0, 0]);
});

// Review of e2b2d15, finding 3: the SDKs' flow keeps working under the rule above.
test('the SDK flow: save with the app key, re-register, bind after login, unbind; the master key binds anyone', async () => {
  const carol = await signUp(server.client);
  const asCarol = userPointer(carol.objectId);
  const first = await server.client.post('/1.1/installations', { installationId: 'sdk-dev', deviceType: 'android' });
  assert.equal(first.status, 201, first.text);
  const id = first.body.objectId;
  // Devices re-register on every start, unbound, with the app key alone.
  assert.equal((await server.client.post('/1.1/classes/_Installation', { installationId: 'sdk-dev', deviceType: 'android' })).status, 200);
  assert.equal((await server.client.put(`/1.1/installations/${id}`, { channels: ['c'] })).status, 200);
  // After login: bound with the session, by objectId (with its own pointer) or by installationId.
  const bound = await carol.client.put(`/1.1/classes/_Installation/${id}`, { user: asCarol }, { query: { new: 'true' } });
  assert.equal(bound.status, 200, bound.text);
  // new=true answers only the touched fields (reference §5).
  assert.deepEqual(bound.body, { user: asCarol, updatedAt: bound.body.updatedAt, objectId: id });
  const resaved = await carol.client.post('/1.1/installations', { installationId: 'sdk-dev', deviceType: 'android', user: asCarol });
  assert.deepEqual([resaved.status, resaved.body.objectId], [200, id]);
  assert.deepEqual((await carol.client.get(`/1.1/installations/${id}`)).body.user, asCarol);
  // Once bound, the app key alone no longer changes it; its user's session may unbind it.
  const anonymous = await server.client.post('/1.1/installations', { installationId: 'sdk-dev', deviceType: 'android' });
  assert.deepEqual([anonymous.status, anonymous.body], [403, notYours]);
  assert.equal((await carol.client.put(`/1.1/installations/${id}`, { user: { __op: 'Delete' } })).status, 200);
  assert.equal((await server.client.post('/1.1/installations', { installationId: 'sdk-dev', deviceType: 'android' })).status, 200);
  // The master key may bind an installation to any user, and change a bound one.
  assert.equal((await server.master.put(`/1.1/installations/${id}`, { user: asCarol })).status, 200);
  assert.equal((await server.master.put(`/1.1/installations/${id}`, { channels: ['m'] })).status, 200);
  const created = await server.master.post('/1.1/installations', { installationId: 'sdk-dev-2', user: asCarol });
  assert.equal(created.status, 201, created.text);
});
