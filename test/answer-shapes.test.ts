// Answers shaped as the hosted service's (issue #15 point 4; reference leancloud-storage-wire.md §3, §4,
// §5, §14): the user flags, the update and token answers, the default ACL stored on new objects and the
// per-class setting, new=true/fetchWhenSave, and 401 only for the app's keys.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, uniqueName } from './helpers/accounts.ts';
import { Client } from './helpers/client.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const everyone = { '*': { read: true, write: true } };
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function settings(patch: Record<string, unknown>): Promise<void> {
  const res = await server.master.put('/1.1/settings', patch);
  assert.equal(res.status, 200, res.text);
}

describe('users', () => {
  test('sign-up, login and users/me: emailVerified as SPEC §3.1 says, mobilePhoneVerified false', async () => {
    const username = uniqueName();
    const signed = await server.client.post('/1.1/users', { username, password: 'pw-shapes', city: 'Oslo' });
    assert.equal(signed.status, 201, signed.text);
    const { objectId, createdAt, sessionToken } = signed.body;
    const user = { username, city: 'Oslo', emailVerified: null, mobilePhoneVerified: false, objectId, createdAt, updatedAt: createdAt };
    assert.deepEqual(signed.body, { ...user, sessionToken });
    const login = await server.client.post('/1.1/login', { username, password: 'pw-shapes' });
    assert.deepEqual(login.body, { ...user, sessionToken });
    const me = await server.client.get('/1.1/users/me', { session: sessionToken });
    assert.deepEqual(me.body, { ...user, sessionToken });

    // With verification on, a user with an address starts false; without one, null.
    await settings({ verifyEmailOnSignup: true });
    try {
      const email = `${uniqueName()}@example.com`;
      const withEmail = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw', email });
      assert.equal(withEmail.body.emailVerified, false);
      assert.equal(withEmail.body.mobilePhoneVerified, false);
      const without = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw' });
      assert.equal(without.body.emailVerified, null);
    } finally {
      await settings({ verifyEmailOnSignup: false });
    }
  });

  for (const path of ['/1.1/users', '/1.1/classes/_User']) {
    test(`PUT ${path}/<id> answers {updatedAt, objectId}, a link too`, async () => {
      const ann = await signUp(server.client);
      const plain = await ann.client.put(`${path}/${ann.objectId}`, { city: 'Bergen' });
      assert.equal(plain.status, 200, plain.text);
      assert.deepEqual(plain.body, { updatedAt: plain.body.updatedAt, objectId: ann.objectId });
      assert.match(plain.body.updatedAt, iso);
      const linked = await ann.client.put(`${path}/${ann.objectId}`, { authData: { shapes_site: { uid: uniqueName() } } });
      assert.deepEqual(linked.body, { updatedAt: linked.body.updatedAt, objectId: ann.objectId });
      const unlinked = await ann.client.put(`${path}/${ann.objectId}`, { 'authData.shapes_site': { __op: 'Delete' } });
      assert.deepEqual(unlinked.body, { updatedAt: unlinked.body.updatedAt, objectId: ann.objectId });
    });
  }

  test('updatePassword answers {updatedAt, objectId, sessionToken}; refreshSessionToken those, then the user fields SPEC §4.1 row 7 lists', async () => {
    const ann = await signUp(server.client);
    const changed = await ann.client.put(`/1.1/users/${ann.objectId}/updatePassword`, { old_password: ann.password, new_password: 'pw-new-1' });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body, { updatedAt: changed.body.updatedAt, objectId: ann.objectId, sessionToken: changed.body.sessionToken });
    assert.notEqual(changed.body.sessionToken, ann.sessionToken);
    const refreshed = await server.master.put(`/1.1/users/${ann.objectId}/refreshSessionToken`);
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.deepEqual(refreshed.body, {
      updatedAt: refreshed.body.updatedAt,
      objectId: ann.objectId,
      sessionToken: refreshed.body.sessionToken,
      username: ann.username,
      createdAt: ann.body.createdAt,
      emailVerified: null,
      mobilePhoneVerified: false,
    });
    // The refresh moves updatedAt, as the hosted service's did.
    assert.ok(refreshed.body.updatedAt >= changed.body.updatedAt);
    const read = await server.master.get(`/1.1/users/${ann.objectId}`);
    assert.equal(read.body.updatedAt, refreshed.body.updatedAt);
  });

  test('new=true on a user answers the touched fields: the merged authData of a link, emailVerified with an email', async () => {
    const ann = await signUp(server.client);
    const first = uniqueName();
    await ann.client.put(`/1.1/users/${ann.objectId}`, { authData: { shapes_a: { uid: first } } });
    const second = uniqueName();
    const linked = await ann.client.put(`/1.1/classes/_User/${ann.objectId}?new=true`, { authData: { shapes_b: { uid: second } } });
    assert.deepEqual(linked.body, {
      authData: { shapes_a: { uid: first }, shapes_b: { uid: second } },
      updatedAt: linked.body.updatedAt,
      objectId: ann.objectId,
    });
    const email = `${uniqueName()}@example.com`;
    const mailed = await ann.client.put(`/1.1/users/${ann.objectId}?fetchWhenSave=true`, { email, sessionToken: ann.sessionToken });
    assert.deepEqual(mailed.body, { email, emailVerified: null, updatedAt: mailed.body.updatedAt, objectId: ann.objectId });
  });
});

describe('the default ACL', () => {
  test('an object created without an ACL stores {"*":{"read":true,"write":true}}, shown with returnACL', async () => {
    const created = await server.client.post('/1.1/classes/ShapeDefault', { n: 1 });
    const id = created.body.objectId;
    const read = await server.client.get(`/1.1/classes/ShapeDefault/${id}`, { query: { returnACL: 'true' } });
    assert.deepEqual(read.body, { n: 1, objectId: id, createdAt: created.body.createdAt, updatedAt: created.body.createdAt, ACL: everyone });
    const plain = await server.client.get(`/1.1/classes/ShapeDefault/${id}`);
    assert.equal('ACL' in plain.body, false);
    const found = await server.client.get('/1.1/classes/ShapeDefault', { query: { where: { objectId: id }, returnACL: 'true' } });
    assert.deepEqual(found.body.results[0].ACL, everyone);
    // Anyone may still write it, as before.
    const other = await signUp(server.client);
    assert.equal((await other.client.put(`/1.1/classes/ShapeDefault/${id}`, { n: 2 })).status, 200);
  });

  test('an object stored without an ACL (an import) shows the public default with returnACL', async () => {
    const now = Date.now();
    const object = { className: 'ShapeImported', objectId: 'imported-no-acl', createdAt: now, updatedAt: now, acl: null, data: { a: 1 } };
    assert.equal((await server.store.insertObject(server.appId, object)).ok, true);
    const read = await server.client.get('/1.1/classes/ShapeImported/imported-no-acl', { query: { returnACL: 'true' } });
    assert.deepEqual(read.body.ACL, everyone);
  });

  test('a user gets public read and its own write; an installation the class default', async () => {
    const ann = await signUp(server.client);
    const user = await server.master.get(`/1.1/users/${ann.objectId}`, { query: { returnACL: 'true' } });
    assert.deepEqual(user.body.ACL, { '*': { read: true }, [ann.objectId]: { read: true, write: true } });
    const device = await server.client.post('/1.1/installations', { installationId: uniqueName('dev'), deviceType: 'android' });
    const stored = await server.master.get(`/1.1/installations/${device.body.objectId}`, { query: { returnACL: 'true' } });
    assert.deepEqual(stored.body.ACL, everyone);
  });

  test('classDefaultACL sets a class default with the master key; "creator" is the creating session', async () => {
    const owner = await signUp(server.client);
    await settings({ classDefaultACL: { ShapePost: { '*': { read: true }, creator: { read: true, write: true } } } });
    const shown = await server.master.get('/1.1/settings');
    assert.deepEqual(shown.body.classDefaultACL, { ShapePost: { '*': { read: true }, creator: { read: true, write: true } } });

    const mine = await owner.client.post('/1.1/classes/ShapePost?new=true', { title: 't' });
    assert.equal(mine.status, 201, mine.text);
    const read = await server.master.get(`/1.1/classes/ShapePost/${mine.body.objectId}`, { query: { returnACL: 'true' } });
    assert.deepEqual(read.body.ACL, { '*': { read: true }, [owner.objectId]: { read: true, write: true } });
    const stranger = await signUp(server.client);
    const refused = await stranger.client.put(`/1.1/classes/ShapePost/${mine.body.objectId}`, { title: 'x' });
    assert.deepEqual([refused.status, refused.body], [403, { code: 403, error: "Forbidden writing by object's ACL." }]);
    // Without a session "creator" grants nothing; an explicit ACL wins over the default.
    const anonymous = await server.client.post('/1.1/classes/ShapePost', { title: 'a' });
    const anonymousAcl = await server.master.get(`/1.1/classes/ShapePost/${anonymous.body.objectId}`, { query: { returnACL: 'true' } });
    assert.deepEqual(anonymousAcl.body.ACL, { '*': { read: true } });
    const explicit = await owner.client.post('/1.1/classes/ShapePost', { title: 'e', ACL: everyone });
    const explicitAcl = await server.master.get(`/1.1/classes/ShapePost/${explicit.body.objectId}`, { query: { returnACL: 'true' } });
    assert.deepEqual(explicitAcl.body.ACL, everyone);
    // Other classes keep the built-in default; null restores it.
    await settings({ classDefaultACL: { ShapePost: null } });
    assert.deepEqual((await server.master.get('/1.1/settings')).body.classDefaultACL, {});
    const after = await owner.client.post('/1.1/classes/ShapePost', { title: 'n' });
    const afterAcl = await server.master.get(`/1.1/classes/ShapePost/${after.body.objectId}`, { query: { returnACL: 'true' } });
    assert.deepEqual(afterAcl.body.ACL, everyone);
  });

  test('classDefaultACL for _User replaces the built-in user default', async () => {
    await settings({ classDefaultACL: { _User: { creator: { read: true, write: true } } } });
    try {
      const ann = await signUp(server.client);
      const user = await server.master.get(`/1.1/users/${ann.objectId}`, { query: { returnACL: 'true' } });
      assert.deepEqual(user.body.ACL, { [ann.objectId]: { read: true, write: true } });
    } finally {
      await settings({ classDefaultACL: { _User: null } });
    }
  });

  test('classDefaultACL is checked, and only the master key may set it', async () => {
    const cases: Array<[unknown, number, string]> = [
      [[], 111, 'classDefaultACL must be an object: { <ClassName>: <ACL, where "creator" is the creating user> | null }.'],
      [{ '1bad': everyone }, 103, "classDefaultACL: invalid class name '1bad'."],
      [{ Post: 'public' }, 123, 'classDefaultACL.Post: Invalid ACL: it must be an object.'],
      [{ Post: { '*': { read: 'yes' } } }, 123, "classDefaultACL.Post: Invalid ACL permission 'read' for '*'."],
      [{ Post: { 'a b': { read: true } } }, 123, "classDefaultACL.Post: Invalid ACL key 'a b'."],
    ];
    for (const [value, code, error] of cases) {
      const res = await server.master.put('/1.1/settings', { classDefaultACL: value });
      assert.deepEqual([res.status, res.body], [400, { code, error }], JSON.stringify(value));
    }
    const byAppKey = await server.client.put('/1.1/settings', { classDefaultACL: { Post: everyone } });
    assert.deepEqual([byAppKey.status, byAppKey.body], [403, { code: 403, error: 'Forbidden: this operation needs the master key.' }]);
  });
});

describe('new=true and fetchWhenSave', () => {
  test('a create answers the whole object', async () => {
    for (const flag of ['new', 'fetchWhenSave']) {
      const res = await server.client.post(`/1.1/classes/ShapeFetch?${flag}=true`, { a: 1, n: { __op: 'Increment', amount: 3 } });
      assert.equal(res.status, 201, res.text);
      const { objectId, createdAt } = res.body;
      assert.deepEqual(res.body, { a: 1, n: 3, objectId, createdAt, updatedAt: createdAt });
    }
  });

  test('an update answers only the touched fields at their new values, then updatedAt and objectId', async () => {
    const created = await server.client.post('/1.1/classes/ShapeFetch', { a: 1, n: 9, keep: 'x', gone: true, o: { p: 1, q: 2 } });
    const id = created.body.objectId;
    for (const flag of ['new', 'fetchWhenSave']) {
      const res = await server.client.put(`/1.1/classes/ShapeFetch/${id}?${flag}=true`, { n: { __op: 'Increment', amount: 10 } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body), ['n', 'updatedAt', 'objectId']);
      assert.equal(res.body.objectId, id);
    }
    const many = await server.client.put(`/1.1/classes/ShapeFetch/${id}?new=true`, {
      a: 2,
      gone: { __op: 'Delete' },
      'o.q': 3,
      tags: { __op: 'AddUnique', objects: ['x'] },
    });
    assert.deepEqual(many.body, { a: 2, o: { p: 1, q: 3 }, tags: ['x'], updatedAt: many.body.updatedAt, objectId: id });
    // The ACL is a touched field too, shown with returnACL.
    const acl = { '*': { read: true, write: true }, 'role:editors': { write: true } };
    const withAcl = await server.client.put(`/1.1/classes/ShapeFetch/${id}`, { a: 3, ACL: acl }, { query: { new: 'true', returnACL: 'true' } });
    assert.deepEqual(withAcl.body, { a: 3, ACL: acl, updatedAt: withAcl.body.updatedAt, objectId: id });
    const without = await server.client.put(`/1.1/classes/ShapeFetch/${id}`, { a: 4 });
    assert.deepEqual(without.body, { updatedAt: without.body.updatedAt, objectId: id });
  });

  test('an installation update answers the touched fields', async () => {
    const device = await server.client.post('/1.1/installations', { installationId: uniqueName('dev'), deviceType: 'android' });
    const id = device.body.objectId;
    const res = await server.client.put(`/1.1/installations/${id}?fetchWhenSave=true`, { channels: ['news'] });
    assert.deepEqual(res.body, { channels: ['news'], updatedAt: res.body.updatedAt, objectId: id });
  });

  test('fetchWhenSave as a batch sub-request param, as the JS SDK sends it', async () => {
    const created = await server.client.post('/1.1/classes/ShapeFetch', { a: 1, b: 2 });
    const id = created.body.objectId;
    const batch = await server.client.post('/1.1/batch', {
      requests: [
        { method: 'PUT', path: `/1.1/classes/ShapeFetch/${id}`, body: { b: { __op: 'Increment', amount: 1 } }, params: { fetchWhenSave: true } },
        { method: 'POST', path: '/1.1/classes/ShapeFetch', body: { c: 1 }, params: { fetchWhenSave: true } },
        { method: 'PUT', path: `/1.1/classes/ShapeFetch/${id}`, body: { a: 5 } },
      ],
    });
    assert.equal(batch.status, 200, batch.text);
    const [update, create, plain] = batch.body;
    assert.deepEqual(update, { success: { b: 3, updatedAt: update.success.updatedAt, objectId: id } });
    const made = create.success;
    assert.deepEqual(create, { success: { c: 1, objectId: made.objectId, createdAt: made.createdAt, updatedAt: made.createdAt } });
    assert.deepEqual(plain, { success: { updatedAt: plain.success.updatedAt, objectId: id } });
  });
});

describe('status codes', () => {
  test('401 is for the app keys only; a bad session is no 401', async () => {
    const unauthorized = { code: 401, error: 'Unauthorized.' };
    const wrongKey = new Client({ url: server.url, appId: server.appId, appKey: 'not-the-key' });
    const wrongApp = new Client({ url: server.url, appId: 'no-such-app', appKey: server.appKey });
    for (const client of [wrongKey, wrongApp]) {
      const res = await client.get('/1.1/classes/ShapeFetch');
      assert.deepEqual([res.status, res.body], [401, unauthorized]);
    }
    const staleSession = await server.client.get('/1.1/classes/ShapeFetch', { session: 'no-such-session-token', query: { limit: '0' } });
    assert.equal(staleSession.status, 200, staleSession.text);
    const me = await server.client.get('/1.1/users/me', { session: 'no-such-session-token' });
    assert.deepEqual([me.status, me.body], [400, { code: 211, error: 'Could not find user.' }]);
  });

  test('ACL and permission failures are 403 with the hosted messages', async () => {
    const ann = await signUp(server.client);
    const privateObject = await ann.client.post('/1.1/classes/ShapeLocked', { a: 1, ACL: { [ann.objectId]: { read: true, write: true } } });
    const denied = await server.client.delete(`/1.1/classes/ShapeLocked/${privateObject.body.objectId}`);
    assert.deepEqual([denied.status, denied.body], [403, { code: 403, error: "Forbidden writing by object's ACL." }]);
    const noSession = await server.client.put(`/1.1/users/${ann.objectId}`, { city: 'x' });
    assert.deepEqual([noSession.status, noSession.body], [403, { code: 206, error: 'The user cannot be altered by a client without the session.' }]);
    const flag = await ann.client.put(`/1.1/users/${ann.objectId}`, { emailVerified: true });
    assert.equal(flag.status, 403);
    assert.equal(flag.body.code, 119);
    // Class permissions, in the hosted words: installations are found and deleted with the master key only,
    // users found unless userQueryPermission is on.
    const devices = await server.client.get('/1.1/installations');
    assert.deepEqual([devices.status, devices.body], [403, { code: 403, error: 'Forbidden to find by class permissions.' }]);
    const device = await server.client.post('/1.1/installations', { installationId: uniqueName('dev'), deviceType: 'ios' });
    const removed = await server.client.delete(`/1.1/classes/_Installation/${device.body.objectId}`);
    assert.deepEqual([removed.status, removed.body], [403, { code: 403, error: 'Forbidden to delete by class permissions.' }]);
    const users = await ann.client.get('/1.1/users');
    assert.deepEqual([users.status, users.body], [403, { code: 403, error: 'Forbidden to find by class permissions.' }]);
  });
});
