import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import { Client } from './helpers/client.ts';

let server: TestServer;
let alice: SignedUpUser;

before(async () => {
  server = await startServer();
  alice = await signUp(server.client);
});
after(async () => {
  await server?.close();
});

const publicRead = { '*': { read: true } };
const descriptors = { roles: { __type: 'Relation', className: '_Role' }, users: { __type: 'Relation', className: '_User' } };
const invalidName = { code: 139, error: "Role's name is invalid." };
let names = 0;
/** A name no other test uses (roles are unique in the app). */
const uniqueName = (prefix = 'Role') => `${prefix}_${++names}`;

describe('_Role: names, ACL, descriptors', () => {
  test('a role is created at /1.1/classes/_Role and /1.1/roles, and every read answers both relation descriptors', async () => {
    for (const path of ['/1.1/classes/_Role', '/1.1/roles']) {
      const name = uniqueName();
      const created = await alice.client.post(path, { name, ACL: publicRead });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(Object.keys(created.body).sort(), ['createdAt', 'objectId']);
      const id = created.body.objectId;
      const expected = { name, objectId: id, createdAt: created.body.createdAt, updatedAt: created.body.createdAt, ...descriptors };
      for (const read of [`/1.1/classes/_Role/${id}`, `/1.1/roles/${id}`]) {
        assert.deepEqual((await server.client.get(read)).body, expected, read);
      }
      const listed = await server.client.get('/1.1/roles', { query: { where: { name } } });
      assert.deepEqual(listed.body, { results: [expected] });
      const byClass = await server.client.get('/1.1/classes/_Role', { query: { where: { name } } });
      assert.deepEqual(byClass.body, { results: [expected] });
    }
  });

  test('keys selects the descriptors as any field; new=true answers them', async () => {
    const name = uniqueName();
    const created = await alice.client.post('/1.1/classes/_Role', { name, ACL: publicRead }, { query: { new: 'true' } });
    assert.deepEqual(created.body, {
      name,
      objectId: created.body.objectId,
      createdAt: created.body.createdAt,
      updatedAt: created.body.createdAt,
      ...descriptors,
    });
    const id = created.body.objectId;
    const onlyName = await server.client.get(`/1.1/roles/${id}`, { query: { keys: 'name' } });
    assert.deepEqual(Object.keys(onlyName.body).sort(), ['createdAt', 'name', 'objectId', 'updatedAt']);
    const onlyUsers = await server.client.get(`/1.1/roles/${id}`, { query: { keys: 'users' } });
    assert.deepEqual(onlyUsers.body.users, descriptors.users);
    assert.equal('roles' in onlyUsers.body, false);
    const withoutRoles = await server.client.get(`/1.1/roles/${id}`, { query: { keys: '-roles' } });
    assert.equal('roles' in withoutRoles.body, false);
    assert.deepEqual(withoutRoles.body.users, descriptors.users);
  });

  test('a role without an ACL is refused, with a session and with the master key', async () => {
    for (const client of [alice.client, server.client, server.master]) {
      const refused = await client.post('/1.1/classes/_Role', { name: uniqueName() });
      assert.deepEqual([refused.status, refused.body], [400, { code: 1, error: 'Role ACL is required.' }]);
    }
    const empty = await server.master.post('/1.1/roles', { name: uniqueName(), ACL: {} });
    assert.equal(empty.status, 201, 'an empty ACL is an ACL (master key only)');
  });

  test('names: letters, digits, _, - and space, 1 to 128 of them; anything else is 139', async () => {
    for (const name of ['Admins', 'a_b-c d', '0', 'x'.repeat(128)]) {
      const created = await server.master.post('/1.1/roles', { name, ACL: publicRead });
      assert.equal(created.status, 201, name);
    }
    const bad: unknown[] = ['', 'a.b', 'role:x', 'é', 'x'.repeat(129), 'tab\there', 12, null, true, { a: 1 }, ['a']];
    for (const name of bad) {
      const refused = await server.master.post('/1.1/roles', { name, ACL: publicRead });
      assert.deepEqual([refused.status, refused.body], [400, invalidName], JSON.stringify(name));
    }
    const missing = await server.master.post('/1.1/roles', { ACL: publicRead });
    assert.deepEqual([missing.status, missing.body], [400, invalidName]);
    const dotted = await server.master.post('/1.1/roles', { 'name.x': 'a', ACL: publicRead });
    assert.deepEqual([dotted.status, dotted.body], [400, invalidName]);
  });

  test('a name is unique in the app: the second role with it is 137, in another app it is free', async () => {
    const name = uniqueName('Unique');
    assert.equal((await alice.client.post('/1.1/roles', { name, ACL: publicRead })).status, 201);
    const again = await server.master.post('/1.1/classes/_Role', { name, ACL: publicRead });
    assert.deepEqual([again.status, again.body], [400, { code: 137, error: 'A unique field was given a value that is already taken.' }]);
    const together = await Promise.all([1, 2, 3].map(() => server.master.post('/1.1/roles', { name: `${name}x`, ACL: publicRead })));
    assert.deepEqual(together.map((r) => r.status).sort(), [201, 400, 400]);
    const keys = await server.services.registry.create('other');
    const other = new Client({ url: server.url, appId: keys.appId, appKey: keys.appKey, masterKey: keys.masterKey });
    assert.equal((await other.post('/1.1/roles', { name, ACL: publicRead })).status, 201);
  });

  test('a name is set once: the same name may be sent again, another one or a delete is 139', async () => {
    const name = uniqueName();
    const created = await alice.client.post('/1.1/roles', { name, ACL: { [alice.objectId]: { read: true, write: true } } });
    const path = `/1.1/roles/${created.body.objectId}`;
    const same = await alice.client.put(path, { name, note: 'x' });
    assert.equal(same.status, 200);
    const immutable = { code: 139, error: "A role's name can only be set before it has been saved." };
    for (const client of [alice.client, server.master]) {
      const renamed = await client.put(path, { name: uniqueName() });
      assert.deepEqual([renamed.status, renamed.body], [400, immutable]);
    }
    const deleted = await server.master.put(path, { name: { __op: 'Delete' } });
    assert.deepEqual([deleted.status, deleted.body], [400, invalidName]);
    const stranger = await signUp(server.client);
    const notWriter = await stranger.client.put(path, { name: uniqueName() });
    assert.deepEqual([notWriter.status, notWriter.body], [403, { code: 403, error: "Forbidden writing by object's ACL." }]);
    assert.equal((await server.master.get(path)).body.name, name);
  });
});
