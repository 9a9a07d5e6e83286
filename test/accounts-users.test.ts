// User reads (row 5), updates (row 9), deletes (row 13) on both path families and in batches.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { assertNoSecretsIn, signUp, uniqueName } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  // No password, hash or token of this file's flows reached a log line.
  if (server) assertNoSecretsIn(server.logs, ['sneaky-new-pw', 'in-a-batch']);
  await server?.close();
});

const families = [
  { name: '/1.1/users', path: (id: string) => `/1.1/users/${id}` },
  { name: '/1.1/classes/_User', path: (id: string) => `/1.1/classes/_User/${id}` },
];

for (const family of families) {
  test(`${family.name}: get by id, readable per ACL, never with password or token`, async () => {
    const ann = await signUp(server.client, { city: 'Oslo' });
    const bob = await signUp(server.client);
    const read = await bob.client.get(family.path(ann.objectId));
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.objectId, ann.objectId);
    assert.equal(read.body.username, ann.username);
    assert.equal(read.body.city, 'Oslo');
    assert.equal('sessionToken' in read.body, false);
    assert.equal('password' in read.body, false);
    const own = await ann.client.get(family.path(ann.objectId), { query: { keys: 'city,password,sessionToken' } });
    assert.deepEqual(Object.keys(own.body).sort(), ['city', 'createdAt', 'objectId', 'updatedAt']);

    const unknown = await server.client.get(family.path('nosuchuser000000000000000'));
    assert.equal(unknown.status, 400, unknown.text);
    assert.deepEqual(unknown.body, { code: 211, error: 'Could not find user.' });

    // Ann hides her record: only she and the master key still see it.
    const hidden = await ann.client.put(family.path(ann.objectId), { ACL: { [ann.objectId]: { read: true, write: true } } });
    assert.equal(hidden.status, 200, hidden.text);
    assert.equal((await bob.client.get(family.path(ann.objectId))).body.code, 211);
    assert.equal((await server.client.get(family.path(ann.objectId))).body.code, 211);
    assert.equal((await ann.client.get(family.path(ann.objectId))).status, 200);
    const byMaster = await server.master.get(family.path(ann.objectId), { query: { returnACL: 'true' } });
    assert.deepEqual(byMaster.body.ACL, { [ann.objectId]: { read: true, write: true } });
  });

  test(`${family.name}: updates need the own session or the master key, whatever the ACL`, async () => {
    const ann = await signUp(server.client, { city: 'Oslo', age: 30 });
    const bob = await signUp(server.client);
    // Even a public-write ACL does not let others change a user.
    assert.equal((await ann.client.put(family.path(ann.objectId), { ACL: { '*': { read: true, write: true } } })).status, 200);
    const byBob = await bob.client.put(family.path(ann.objectId), { city: 'Paris' });
    assert.equal(byBob.status, 403, byBob.text);
    assert.deepEqual(byBob.body, { code: 206, error: 'The user cannot be altered by a client without the session.' });
    const anonymous = await server.client.put(family.path(ann.objectId), { city: 'Paris' });
    assert.equal(anonymous.status, 403);
    assert.equal(anonymous.body.code, 206);

    const own = await ann.client.put(family.path(ann.objectId), { city: 'Bergen', age: { __op: 'Increment', amount: 2 } });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(Object.keys(own.body), ['updatedAt', 'objectId']);
    assert.equal(own.body.objectId, ann.objectId);
    const byMaster = await server.master.put(family.path(ann.objectId), { nickname: 'A' });
    assert.equal(byMaster.status, 200, byMaster.text);
    const read = await server.master.get(family.path(ann.objectId));
    assert.equal(read.body.city, 'Bergen');
    assert.equal(read.body.age, 32);
    assert.equal(read.body.nickname, 'A');
    assert.equal(read.body.username, ann.username); // unspecified fields untouched
    assert.equal(read.body.updatedAt, byMaster.body.updatedAt);

    const fetched = await ann.client.put(`${family.path(ann.objectId)}?new=true`, { city: 'Tromsø' });
    assert.equal(fetched.status, 200, fetched.text);
    // Only the touched field, as the hosted service answered (reference §5).
    assert.deepEqual(fetched.body, { city: 'Tromsø', updatedAt: fetched.body.updatedAt, objectId: ann.objectId });
  });

  test(`${family.name}: username, email and phone stay unique on update; password only through its flows`, async () => {
    const ann = await signUp(server.client, { email: `${uniqueName()}@example.com`, mobilePhoneNumber: `+44${Date.now()}` });
    const bob = await signUp(server.client);
    const cases: Array<[Record<string, unknown>, number]> = [
      [{ username: ann.username }, 202],
      [{ email: ann.body.email }, 203],
      [{ mobilePhoneNumber: ann.body.mobilePhoneNumber }, 214],
      [{ username: '' }, 217],
      [{ username: { __op: 'Delete' } }, 200],
    ];
    for (const [body, code] of cases) {
      const response = await bob.client.put(family.path(bob.objectId), body);
      assert.equal(response.status, 400, `${JSON.stringify(body)} → ${response.text}`);
      assert.equal(response.body.code, code, `${JSON.stringify(body)} → ${response.text}`);
    }
    const password = await bob.client.put(family.path(bob.objectId), { password: 'sneaky-new-pw' });
    assert.equal(password.status, 403, password.text);
    assert.equal(password.body.code, 119);
    assert.equal(password.text.includes('sneaky-new-pw'), false);
    const stillOld = await server.client.post('/1.1/login', { username: bob.username, password: bob.password });
    assert.equal(stillOld.status, 200, stillOld.text);

    // A free username can be taken; the old one is then free again.
    const renamed = uniqueName('renamed');
    assert.equal((await bob.client.put(family.path(bob.objectId), { username: renamed })).status, 200);
    const login = await server.client.post('/1.1/login', { username: renamed, password: bob.password });
    assert.equal(login.status, 200, login.text);
    const reuse = await signUp(server.client, { username: bob.username });
    assert.ok(reuse.objectId);
  });

  test(`${family.name}: delete with the own session or the master key`, async () => {
    const ann = await signUp(server.client);
    const bob = await signUp(server.client);
    const byBob = await bob.client.delete(family.path(ann.objectId));
    assert.equal(byBob.status, 403, byBob.text);
    assert.equal(byBob.body.code, 206);
    const own = await ann.client.delete(family.path(ann.objectId));
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.body, {});
    assert.equal((await server.master.get(family.path(ann.objectId))).body.code, 211);
    const login = await server.client.post('/1.1/login', { username: ann.username, password: ann.password });
    assert.equal(login.body.code, 211);
    // The deleted user's token is gone with it.
    const me = await server.client.get('/1.1/users/me', { session: ann.sessionToken });
    assert.equal(me.body.code, 211);
    const byMaster = await server.master.delete(family.path(bob.objectId));
    assert.equal(byMaster.status, 200, byMaster.text);
  });
}

test('the email and verification flags', async () => {
  const ann = await signUp(server.client, { email: `${uniqueName()}@example.com` });
  assert.equal(ann.body.emailVerified, null);
  const flag = await ann.client.put(`/1.1/users/${ann.objectId}`, { emailVerified: true });
  assert.equal(flag.status, 403, flag.text);
  assert.equal((await server.master.put(`/1.1/users/${ann.objectId}`, { emailVerified: true })).status, 200);
  // A new address is not a confirmed one.
  assert.equal((await ann.client.put(`/1.1/users/${ann.objectId}`, { email: `${uniqueName()}@example.org` })).status, 200);
  const read = await server.master.get(`/1.1/users/${ann.objectId}`);
  assert.equal(read.body.emailVerified, false);
  const badEmail = await ann.client.put(`/1.1/users/${ann.objectId}`, { email: 'nope' });
  assert.equal(badEmail.body.code, 125);
});

test('batch: user updates, reads and deletes go through the same rules', async () => {
  const ann = await signUp(server.client);
  const bob = await signUp(server.client);
  const batch = await ann.client.post('/1.1/batch', {
    requests: [
      { method: 'PUT', path: `/1.1/classes/_User/${ann.objectId}`, body: { city: 'Lima' } },
      { method: 'PUT', path: `/1.1/users/${bob.objectId}`, body: { city: 'Lima' } },
      { method: 'GET', path: `/1.1/classes/_User/${ann.objectId}` },
      { method: 'PUT', path: `/1.1/users/${ann.objectId}`, body: { password: 'in-a-batch' } },
      { method: 'DELETE', path: `/1.1/classes/_User/${bob.objectId}` },
    ],
  });
  assert.equal(batch.status, 200, batch.text);
  assert.ok(batch.body[0].success.updatedAt);
  assert.equal(batch.body[1].error.code, 206);
  assert.equal(batch.body[2].success.city, 'Lima');
  assert.equal('sessionToken' in batch.body[2].success, false);
  assert.equal(batch.body[3].error.code, 119);
  assert.equal(batch.body[4].error.code, 206);
  assert.equal(batch.text.includes('in-a-batch'), false);
  assert.equal((await server.master.get(`/1.1/users/${bob.objectId}`)).status, 200);
});

// #14 Speed: a user reading itself by id answers with its own session lookup's row (AccountService.get,
// ownRead) when the ACL lets it read without roles. Equivalence: the same answers as the store's read for
// every ACL kind (public, own, role only, none, master), and through HTTP the same body as another reader's.
test('a user reading itself by id answers as the store read does, whatever its ACL', async () => {
  const pointer = (id: string) => ({ __type: 'Pointer', className: '_User', objectId: id });
  const owner = await signUp(server.client, { city: 'Oslo' });
  const role = `readers_${uniqueName('r')}`;
  const made = await server.master.post('/1.1/roles', {
    name: role,
    ACL: { '*': { read: true } },
    users: { __op: 'AddRelation', objects: [pointer(owner.objectId)] },
  });
  assert.equal(made.status, 201, made.text);
  const acls = [
    null,
    { '*': { read: true } },
    { [owner.objectId]: { read: true, write: true } },
    { [`role:${role}`]: { read: true }, [owner.objectId]: { write: true } },
    { [owner.objectId]: { write: true } },
  ];
  const accounts = server.services.accounts;
  for (const acl of acls) {
    const set = await server.master.put(`/1.1/users/${owner.objectId}`, { ACL: acl ?? { '*': { read: true, write: true } }, city: `c${acls.indexOf(acl)}` });
    assert.equal(set.status, 200, set.text);
    if (acl === null) await server.store.updateObject({ appId: server.appId, className: '_User', objectId: owner.objectId }, (o) => ({ ...o, acl: null }));
    const sessionUser = (await accounts.resolveSession(server.appId, owner.sessionToken))?.object;
    assert.ok(sessionUser);
    const app = (await server.services.registry.get(server.appId))!;
    for (const master of [false, true]) {
      const caller = { app, appId: server.appId, master, userId: owner.objectId, sessionToken: owner.sessionToken, sessionVersion: null };
      const outcome = (run: Promise<unknown>) => run.then((user) => ({ user }), (error: Error) => ({ error: error.message }));
      const seam = await outcome(accounts.get({ ...caller, sessionUser }, owner.objectId));
      const store = await outcome(accounts.get({ ...caller, sessionUser: null }, owner.objectId));
      assert.deepEqual(seam, store, `ACL ${JSON.stringify(acl)}, master ${master}`);
    }
    const own = await owner.client.get(`/1.1/users/${owner.objectId}`);
    const byMaster = await server.master.get(`/1.1/users/${owner.objectId}`);
    const readable = acl === null || JSON.stringify(acl).includes('read');
    assert.deepEqual(own.body, readable ? byMaster.body : { code: 211, error: 'Could not find user.' }, JSON.stringify(acl));
  }
});
