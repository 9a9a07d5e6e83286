// Issue #15, point 3: key and class names as the hosted service took them. A key may start with a
// digit (`2fa` is a real app's field: a comment system on the SDK failed every logged-in request,
// because Roost refused it with 105); letters, digits and '_'; '__' first and the reserved names are
// refused with 105 and the hosted text; class names start with a letter (103, the hosted text).
// Every place a key is read: writes of objects, users and installations, where, keys=, order=, dotted
// paths and operations, declared indexes; the SQL spells a digit-first key on both stores.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, uniqueName, type SignedUpUser } from './helpers/accounts.ts';

let server: TestServer;
let user: SignedUpUser;

before(async () => {
  server = await startServer();
  user = await signUp(server.client);
});
after(async () => {
  await server?.close();
});

const badKey = (key: string) => ({
  code: 105,
  error: `Invalid key name. Keys are case-sensitive and 'a-zA-Z0-9_' are the only valid characters. The column is: '${key}'.`,
});
const badClass = {
  code: 103,
  error: 'Missing or invalid classname. Classnames are case-sensitive. They must start with a letter, and a-zA-Z0-9_ are the only valid characters.',
};

async function found(className: string, query: Record<string, string>): Promise<unknown[]> {
  const res = await server.client.get(`/1.1/classes/${className}`, { query });
  assert.equal(res.status, 200, res.text);
  return res.body.results;
}

test('a key starting with a digit is saved, read, updated, queried, ordered and projected', async () => {
  const a = await server.client.post('/1.1/classes/TwoFactor', { '2fa': 1, '3d': { '1x': 'a' }, '123': 'digits', _private: true, tags: ['t1'] });
  assert.equal(a.status, 201, a.text);
  const b = await server.client.post('/1.1/classes/TwoFactor', { '2fa': 5, '3d': { '1x': 'b' }, '123': 'more' });
  const id = a.body.objectId;
  const read = await server.client.get(`/1.1/classes/TwoFactor/${id}`);
  assert.deepEqual([read.body['2fa'], read.body['3d'], read.body['123'], read.body._private], [1, { '1x': 'a' }, 'digits', true]);

  const put = await server.client.put(`/1.1/classes/TwoFactor/${id}`, { '2fa': { __op: 'Increment', amount: 2 }, '3d.1x': 'c', '4k': { __op: 'Add', objects: [1] } });
  assert.equal(put.status, 200, put.text);
  const updated = await server.client.get(`/1.1/classes/TwoFactor/${id}`, { query: { keys: '2fa,3d.1x,4k' } });
  assert.deepEqual(updated.body, { objectId: id, createdAt: a.body.createdAt, updatedAt: put.body.updatedAt, '2fa': 3, '3d': { '1x': 'c' }, '4k': [1] });

  const ids = (results: unknown[]) => results.map((r) => (r as { objectId: string }).objectId);
  assert.deepEqual(ids(await found('TwoFactor', { where: JSON.stringify({ '2fa': 3 }) })), [id]);
  assert.deepEqual(ids(await found('TwoFactor', { where: JSON.stringify({ '2fa': { $in: [3, 5] } }) })), [id, b.body.objectId]);
  assert.deepEqual(ids(await found('TwoFactor', { where: JSON.stringify({ '2fa': { $gt: 4 } }) })), [b.body.objectId]);
  assert.deepEqual(ids(await found('TwoFactor', { where: JSON.stringify({ '3d.1x': 'c' }) })), [id]);
  assert.deepEqual(ids(await found('TwoFactor', { where: JSON.stringify({ '123': { $regex: '^mo' } }) })), [b.body.objectId]);
  assert.deepEqual(ids(await found('TwoFactor', { where: JSON.stringify({ '4k': { $exists: true } }) })), [id]);
  assert.deepEqual(ids(await found('TwoFactor', { where: JSON.stringify({ '4k': { $size: 1 } }) })), [id]);
  assert.deepEqual(ids(await found('TwoFactor', { order: '-2fa' })), [b.body.objectId, id]);
  assert.deepEqual(ids(await found('TwoFactor', { order: '2fa' })), [id, b.body.objectId]);
  assert.deepEqual(ids(await found('TwoFactor', { order: '3d.1x' })), [b.body.objectId, id]);
  assert.deepEqual(await found('TwoFactor', { keys: '2fa', where: JSON.stringify({ objectId: id }) }), [
    { objectId: id, createdAt: a.body.createdAt, updatedAt: put.body.updatedAt, '2fa': 3 },
  ]);
  const counted = await server.client.get('/1.1/classes/TwoFactor', { query: { where: JSON.stringify({ '2fa': { $gte: 3 } }), count: '1', limit: '0' } });
  assert.deepEqual(counted.body, { results: [], count: 2 });
  // A declared index on the field, and a query it serves.
  const index = await server.master.post('/1.1/indexes/TwoFactor', { name: 'by2fa', keys: { '2fa': -1 } });
  assert.equal(index.status, 201, index.text);
  assert.deepEqual(ids(await found('TwoFactor', { where: JSON.stringify({ '2fa': { $lt: 100 } }), order: '-2fa' })), [b.body.objectId, id]);
});

test('users and installations take digit-first keys too', async () => {
  const signedUp = await server.client.post('/1.1/users', { username: uniqueName('names'), password: 'names-password-1', '2fa': false });
  assert.equal(signedUp.status, 201, signedUp.text);
  const session = server.client.withSession(signedUp.body.sessionToken);
  assert.equal((await session.put(`/1.1/users/${signedUp.body.objectId}`, { '2fa': true })).status, 200);
  assert.equal((await session.get('/1.1/users/me')).body['2fa'], true);
  const users = await server.master.get('/1.1/users', { query: { where: JSON.stringify({ '2fa': true }), keys: '2fa' } });
  assert.deepEqual(users.body.results.map((u: { objectId: string }) => u.objectId), [signedUp.body.objectId]);
  const device = await server.client.post('/1.1/installations', { installationId: 'n'.repeat(32), deviceType: 'android', '5g': true });
  assert.equal(device.status, 201, device.text);
  assert.equal((await server.master.get(`/1.1/installations/${device.body.objectId}`)).body['5g'], true);
});

test('bad and reserved keys are refused with 105 and the hosted text, wherever a key is read', async () => {
  const target = (await server.client.post('/1.1/classes/Names', { n: 1 })).body.objectId;
  const userPath = `/1.1/users/${user.objectId}`;
  const asUser = server.client.withSession(user.sessionToken);
  const refused: Array<[string, () => Promise<{ status: number; body: unknown }>, string]> = [];
  // Characters outside a-zA-Z0-9_, '__' first, and the reserved names in another letter case.
  const writeKeys = ['a-b', 'a b', 'é', '$set', '__x', '__type', 'x.__y', 'objectid', 'CreatedAt', 'UPDATEDAT', 'acl', 'Acl', 'className', 'classname', ''];
  for (const key of writeKeys) {
    refused.push(
      [`create ${key}`, () => server.client.post('/1.1/classes/Names', { [key]: 1 }), key],
      [`update ${key}`, () => server.client.put(`/1.1/classes/Names/${target}`, { [key]: 1 }), key],
      [`operation ${key}`, () => server.client.put(`/1.1/classes/Names/${target}`, { [key]: { __op: 'Increment' } }), key],
      [`sign-up ${key}`, () => server.client.post('/1.1/users', { username: uniqueName('names'), password: 'names-password-1', [key]: 1 }), key],
      [`user update ${key}`, () => asUser.put(userPath, { [key]: 1 }), key],
      [`installation ${key}`, () => server.client.post('/1.1/installations', { installationId: 'm'.repeat(32), deviceType: 'android', [key]: 1 }), key],
    );
  }
  // Reads: a reserved name may be queried (objectId, createdAt…); a bad one may not.
  for (const key of ['a-b', '__x', 'x.__y', 'a..b', 'é']) {
    refused.push(
      [`where ${key}`, () => server.client.get('/1.1/classes/Names', { query: { where: JSON.stringify({ [key]: 1 }) } }), key],
      [`order ${key}`, () => server.client.get('/1.1/classes/Names', { query: { order: `-${key}` } }), key],
      [`keys ${key}`, () => server.client.get('/1.1/classes/Names', { query: { keys: key } }), key],
      [`keys of a get ${key}`, () => server.client.get(`/1.1/classes/Names/${target}`, { query: { keys: `-${key}` } }), key],
    );
  }
  for (const [label, send, key] of refused) {
    const res = await send();
    assert.equal(res.status, 400, label);
    assert.deepEqual(res.body, badKey(key), label);
  }
  // A batch item answers the same.
  const batch = await server.client.post('/1.1/batch', { requests: [{ method: 'POST', path: '/1.1/classes/Names', body: { '__x': 1 } }] });
  assert.deepEqual(batch.body, [{ error: badKey('__x') }]);
  // Nothing of it was written.
  const stored = await server.client.get(`/1.1/classes/Names/${target}`);
  assert.deepEqual(Object.keys(stored.body).sort(), ['createdAt', 'n', 'objectId', 'updatedAt']);
});

test('the server fields, the ACL and the SDKs\' flags in a write body are not fields', async () => {
  // SDKs send objectId/createdAt/updatedAt back, the JS SDK __ignore_hooks, the Swift, C++ and old Android SDKs __internalId and __children.
  const body = { n: 1, objectId: 'mine', createdAt: '2000-01-01T00:00:00.000Z', updatedAt: 'x', __ignore_hooks: ['beforeSave'], __internalId: 'tmp1', __children: [] };
  const created = await server.client.post('/1.1/classes/Flags', body);
  assert.equal(created.status, 201, created.text);
  const batch = await server.client.post('/1.1/batch', { requests: [{ method: 'PUT', path: `/1.1/classes/Flags/${created.body.objectId}`, body: { n: 2, __internalId: created.body.objectId, __children: [] } }] });
  assert.equal(batch.status, 200, batch.text);
  assert.ok('success' in batch.body[0], batch.text);
  const stored = await server.client.get(`/1.1/classes/Flags/${created.body.objectId}`);
  assert.deepEqual(Object.keys(stored.body).sort(), ['createdAt', 'n', 'objectId', 'updatedAt']);
  assert.equal(stored.body.n, 2);
  assert.notEqual(stored.body.objectId, 'mine');
});

test('class names start with a letter; the built-in classes are the only ones starting with "_"', async () => {
  for (const name of ['Post', 'post_2', 'P', `C${'x'.repeat(127)}`]) {
    assert.equal((await server.client.post(`/1.1/classes/${name}`, { n: 1 })).status, 201, name);
  }
  for (const name of ['2fa', '_Custom', '_user', 'a-b', 'é', '__proto__', `C${'x'.repeat(128)}`]) {
    const path = `/1.1/classes/${encodeURIComponent(name)}`;
    for (const res of [await server.client.post(path, { n: 1 }), await server.client.get(path), await server.client.get(`${path}/x`)]) {
      assert.equal(res.status, 400, name);
      assert.deepEqual(res.body, badClass, name);
    }
  }
});
