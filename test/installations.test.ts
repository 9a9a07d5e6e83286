import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
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
