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

const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });
const denied = { code: 403, error: "Forbidden writing by object's ACL." };

/** A role `name` (master key, public read) holding the users and roles given. */
async function makeRole(name: string, members: { users?: string[]; roles?: string[] } = {}): Promise<string> {
  const body: Record<string, unknown> = { name, ACL: publicRead };
  if (members.users) body.users = { __op: 'AddRelation', objects: members.users.map((id) => pointer('_User', id)) };
  if (members.roles) body.roles = { __op: 'AddRelation', objects: members.roles.map((id) => pointer('_Role', id)) };
  const created = await server.master.post('/1.1/roles', body);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.objectId;
}

describe('role:NAME in ACLs', () => {
  test('the users of a role read and write what the role may; others do not', async () => {
    const [member, outsider] = [await signUp(server.client), await signUp(server.client)];
    const name = uniqueName('Editors');
    await makeRole(name, { users: [member.objectId] });
    const created = await server.master.post('/1.1/classes/Article', { title: 'a', ACL: { [`role:${name}`]: { read: true, write: true } } });
    const path = `/1.1/classes/Article/${created.body.objectId}`;
    const got = await member.client.get(path);
    assert.deepEqual(got.body, { title: 'a', objectId: created.body.objectId, createdAt: created.body.createdAt, updatedAt: created.body.createdAt });
    assert.deepEqual((await outsider.client.get(path)).body, {});
    assert.deepEqual((await server.client.get(path)).body, {});
    const listed = await member.client.get('/1.1/classes/Article', { query: { count: 1 } });
    assert.deepEqual([listed.body.results.length, listed.body.count], [1, 1]);
    assert.deepEqual((await outsider.client.get('/1.1/classes/Article', { query: { count: 1 } })).body, { results: [], count: 0 });
    const written = await member.client.put(path, { title: 'b' });
    assert.equal(written.status, 200);
    const refused = await outsider.client.put(path, { title: 'c' });
    assert.deepEqual([refused.status, refused.body], [403, denied]);
    const conditional = await member.client.put(path, { title: 'd' }, { query: { where: { title: 'b' } } });
    assert.equal(conditional.status, 200, 'a condition is read with the role too');
    assert.equal((await server.master.get(path)).body.title, 'd');
    assert.deepEqual((await outsider.client.delete(path)).body, denied);
    assert.deepEqual((await member.client.delete(path)).body, {});
    assert.deepEqual((await server.master.get(path)).body, { code: 101, error: "Class or object doesn't exists." }, 'gone, and the class with it');
  });

  test('read-only and write-only role grants are kept apart', async () => {
    const member = await signUp(server.client);
    const [reader, writer] = [uniqueName('Reader'), uniqueName('Writer')];
    await makeRole(reader, { users: [member.objectId] });
    await makeRole(writer);
    const readOnly = await server.master.post('/1.1/classes/Note', { n: 1, ACL: { [`role:${reader}`]: { read: true }, [`role:${writer}`]: { write: true } } });
    const path = `/1.1/classes/Note/${readOnly.body.objectId}`;
    assert.equal((await member.client.get(path)).body.n, 1);
    assert.deepEqual((await member.client.put(path, { n: 2 })).body, denied);
    const writeOnly = await server.master.post('/1.1/classes/Note', { n: 3, ACL: { [`role:${reader}`]: { write: true } } });
    const writePath = `/1.1/classes/Note/${writeOnly.body.objectId}`;
    assert.deepEqual((await member.client.get(writePath)).body, {});
    assert.equal((await member.client.put(writePath, { n: 4 })).status, 200);
  });

  test('new=true after a write answers the object to a writer who reads it through a role, and not to one who cannot read it', async () => {
    const member = await signUp(server.client);
    const [reader, writer] = [uniqueName('NewReader'), uniqueName('NewWriter')];
    await makeRole(reader, { users: [member.objectId] });
    await makeRole(writer, { users: [member.objectId] });
    const readable = await server.master.post('/1.1/classes/Note', { n: 1, ACL: { [`role:${reader}`]: { read: true }, [`role:${writer}`]: { write: true } } });
    const answered = await member.client.put(`/1.1/classes/Note/${readable.body.objectId}`, { n: 2 }, { query: { new: 'true' } });
    assert.deepEqual([answered.status, answered.body], [200, { n: 2, objectId: readable.body.objectId, updatedAt: answered.body.updatedAt }]);
    const blind = await server.master.post('/1.1/classes/Note', { n: 3, ACL: { [`role:${writer}`]: { write: true } } });
    const plain = await member.client.put(`/1.1/classes/Note/${blind.body.objectId}`, { n: 4 }, { query: { new: 'true' } });
    assert.equal(plain.status, 200);
    assert.deepEqual(Object.keys(plain.body).sort(), ['objectId', 'updatedAt']);
  });

  test('a role granted two levels up works (Moderators.roles holds Admins, Admins.roles holds Owners); a cycle answers', async () => {
    const owner = await signUp(server.client);
    const ownersName = uniqueName('Owners');
    const owners = await makeRole(ownersName, { users: [owner.objectId] });
    const admins = await makeRole(uniqueName('Admins'), { roles: [owners] });
    const moderatorsName = uniqueName('Moderators');
    const moderators = await makeRole(moderatorsName, { roles: [admins] });
    const created = await server.master.post('/1.1/classes/Thread', { t: 1, ACL: { [`role:${moderatorsName}`]: { read: true, write: true } } });
    const path = `/1.1/classes/Thread/${created.body.objectId}`;
    assert.equal((await owner.client.get(path)).body.t, 1);
    assert.equal((await owner.client.put(path, { t: 2 })).status, 200);
    // Owners.roles holds Moderators: Owners → Admins → Moderators → Owners.
    const cycle = await server.master.put(`/1.1/roles/${owners}`, { roles: { __op: 'AddRelation', objects: [pointer('_Role', moderators)] } });
    assert.equal(cycle.status, 200);
    const stranger = await signUp(server.client);
    assert.deepEqual((await stranger.client.get(path)).body, {});
    assert.deepEqual((await stranger.client.put(path, { t: 3 })).body, denied);
    assert.equal((await owner.client.get(path)).body.t, 2);
    assert.equal((await owner.client.get('/1.1/classes/Thread', { query: { count: 1, limit: 0 } })).body.count, 1);
  });

  test('a removed member loses access at once, reads and writes', async () => {
    const member = await signUp(server.client);
    const name = uniqueName('Temporary');
    const role = await makeRole(name, { users: [member.objectId] });
    const created = await server.master.post('/1.1/classes/Shift', { s: 1, ACL: { [`role:${name}`]: { read: true, write: true } } });
    const path = `/1.1/classes/Shift/${created.body.objectId}`;
    assert.equal((await member.client.get(path)).body.s, 1);
    const removed = await server.master.put(`/1.1/roles/${role}`, { users: { __op: 'RemoveRelation', objects: [pointer('_User', member.objectId)] } });
    assert.equal(removed.status, 200);
    assert.deepEqual((await member.client.get(path)).body, {});
    assert.deepEqual((await member.client.get('/1.1/classes/Shift', { query: { count: 1 } })).body, { results: [], count: 0 });
    assert.deepEqual((await member.client.put(path, { s: 2 })).body, denied);
  });

  test('count and paging stay right among role-protected objects', async () => {
    const member = await signUp(server.client);
    const name = uniqueName('Pager');
    await makeRole(name, { users: [member.objectId] });
    const acls = [{ [`role:${name}`]: { read: true } }, { [`role:${uniqueName('Other')}`]: { read: true } }, { '*': { read: true } }];
    const requests = Array.from({ length: 30 }, (_, i) => ({
      method: 'POST',
      path: '/1.1/classes/Paged',
      body: { i, ACL: acls[i % 3] },
    }));
    const batch = await server.master.post('/1.1/batch', { requests });
    assert.equal(batch.status, 200);
    // Readable: i % 3 === 0 (the role) and i % 3 === 2 (public): 20 objects.
    const expected = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 3 !== 1);
    const seen: number[] = [];
    for (let skip = 0; skip < 30; skip += 7) {
      const page = await member.client.get('/1.1/classes/Paged', { query: { order: 'i', limit: 7, skip, count: 1 } });
      assert.equal(page.body.count, 20);
      seen.push(...page.body.results.map((object: { i: number }) => object.i));
    }
    assert.deepEqual(seen, expected);
    const anonymous = await server.client.get('/1.1/classes/Paged', { query: { order: 'i', limit: 5, count: 1 } });
    assert.deepEqual([anonymous.body.count, anonymous.body.results.map((object: { i: number }) => object.i)], [10, [2, 5, 8, 11, 14]]);
  });

  test('the roles of a user: where={"users":<_User pointer>} answers the roles holding the user directly', async () => {
    const member = await signUp(server.client);
    const direct = uniqueName('Direct');
    const directId = await makeRole(direct, { users: [member.objectId] });
    await makeRole(uniqueName('Parent'), { roles: [directId] });
    const found = await member.client.get('/1.1/classes/_Role', { query: { where: { users: pointer('_User', member.objectId) } } });
    assert.deepEqual(found.body.results.map((role: { name: string }) => role.name), [direct]);
    assert.deepEqual(found.body.results[0].users, descriptors.users);
    assert.deepEqual(found.body.results[0].roles, descriptors.roles);
    const viaRoles = await server.client.get('/1.1/roles', { query: { where: { users: pointer('_User', member.objectId) }, count: 1, limit: 0 } });
    assert.deepEqual(viaRoles.body, { results: [], count: 1 });
  });

  test('a role relation takes only its own class: users holds _User, roles holds _Role (128)', async () => {
    const name = uniqueName();
    const refused = await server.master.post('/1.1/roles', { name, ACL: publicRead, users: { __op: 'AddRelation', objects: [pointer('Post', 'x1')] } });
    assert.deepEqual([refused.status, refused.body], [400, { code: 128, error: 'Invalid relation data.' }]);
    const id = await makeRole(name);
    const wrongRoles = await server.master.put(`/1.1/roles/${id}`, { roles: { __op: 'AddRelation', objects: [pointer('_User', alice.objectId)] } });
    assert.deepEqual([wrongRoles.status, wrongRoles.body], [400, { code: 128, error: 'Invalid relation data.' }]);
  });
});
