// User queries (row 12): master key unless userQueryPermission; the usual query options; no secrets.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { assertNoSecretsIn, signUp, type SignedUpUser } from './helpers/accounts.ts';

let server: TestServer;
const users: SignedUpUser[] = [];
before(async () => {
  server = await startServer();
  for (let i = 0; i < 5; i++) users.push(await signUp(server.client, { username: `q_user_${i}`, rank: i, team: i % 2 ? 'odd' : 'even' }));
});
after(async () => {
  // No password, hash or token of this file's flows reached a log line.
  if (server) assertNoSecretsIn(server.logs);
  await server?.close();
});

const paths = ['/1.1/users', '/1.1/classes/_User'];

for (const path of paths) {
  test(`${path}: needs the master key while userQueryPermission is off`, async () => {
    for (const client of [server.client, users[0].client]) {
      const response = await client.get(path);
      // The hosted service's words for a class permission (reference §14).
      assert.deepEqual([response.status, response.body], [403, { code: 403, error: 'Forbidden to find by class permissions.' }]);
    }
    const counted = await server.client.get(path, { query: { count: 1, limit: 0 } });
    assert.equal(counted.status, 403);
    const byMaster = await server.master.get(path);
    assert.equal(byMaster.status, 200, byMaster.text);
    assert.equal(byMaster.body.results.length, 5);
  });

  test(`${path}: where, order, limit, skip, keys and count as for other classes`, async () => {
    const response = await server.master.get(path, {
      query: { where: { team: 'even', rank: { $gte: 1 } }, order: '-rank', limit: 1, count: 1, keys: 'rank,username' },
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.count, 2);
    assert.deepEqual(
      response.body.results.map((u: Record<string, unknown>) => ({ username: u.username, rank: u.rank, team: u.team })),
      [{ username: 'q_user_4', rank: 4, team: undefined }],
    );
    const skipped = await server.master.get(path, { query: { order: 'username', skip: 3 } });
    assert.deepEqual(
      skipped.body.results.map((u: Record<string, unknown>) => u.username),
      ['q_user_3', 'q_user_4'],
    );
    const byName = await server.master.get(path, { query: { where: { username: { $in: ['q_user_1', 'nobody'] } } } });
    assert.deepEqual(byName.body.results.map((u: Record<string, unknown>) => u.objectId), [users[1].objectId]);
    const onlyCount = await server.master.get(path, { query: { count: 1, limit: 0 } });
    assert.deepEqual(onlyCount.body, { results: [], count: 5 });
  });

  test(`${path}: passwords and tokens are not readable or queryable`, async () => {
    const all = await server.master.get(path, { query: { keys: 'password,sessionToken,username' } });
    for (const user of all.body.results) assert.deepEqual(Object.keys(user).sort(), ['createdAt', 'objectId', 'updatedAt', 'username']);
    const full = await server.master.get(path);
    for (const user of full.body.results) {
      assert.equal('password' in user, false);
      assert.equal('sessionToken' in user, false);
    }
    for (const where of [
      { password: users[0].password },
      { password: { $exists: true } },
      { sessionToken: users[0].sessionToken },
      { sessionToken: { $exists: true } },
      { password_hash: { $exists: true } },
    ]) {
      const response = await server.master.get(path, { query: { where, count: 1 } });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.count, 0, JSON.stringify(where));
    }
    const ordered = await server.master.get(path, { query: { order: 'password' } });
    assert.equal(ordered.status, 200, ordered.text);
    for (const user of users) {
      for (const response of [all, full, ordered]) {
        assert.equal(response.text.includes(user.password), false);
        assert.equal(response.text.includes(user.sessionToken), false);
        assert.equal(response.text.includes('$argon2'), false);
      }
    }
  });
}

test('with userQueryPermission on, the app key may query users, within their ACLs', async () => {
  const on = await server.master.put('/1.1/settings', { userQueryPermission: true });
  assert.equal(on.status, 200, on.text);
  try {
    const hidden = users[4];
    assert.equal((await hidden.client.put(`/1.1/users/${hidden.objectId}`, { ACL: { [hidden.objectId]: { read: true, write: true } } })).status, 200);
    const byKey = await server.client.get('/1.1/users', { query: { order: 'rank' } });
    assert.equal(byKey.status, 200, byKey.text);
    assert.deepEqual(byKey.body.results.map((u: Record<string, unknown>) => u.rank), [0, 1, 2, 3]);
    const bySelf = await hidden.client.get('/1.1/classes/_User', { query: { order: 'rank', count: 1 } });
    assert.equal(bySelf.body.count, 5);
    assert.equal(bySelf.body.results.length, 5);
    assert.equal(byKey.text.includes('sessionToken'), false);
    // Regression: authData is hidden from other users, so filtering or ordering by it would leak who is linked.
    for (const query of [{ where: { 'authData.weixin.openid': { $exists: true } } }, { order: 'authData.qq.uid' }]) {
      const probe = await server.client.get('/1.1/users', { query });
      assert.deepEqual([probe.status, probe.body.code], [403, 403], JSON.stringify(query));
    }
    assert.equal((await server.master.get('/1.1/users', { query: { where: { 'authData.weixin.openid': { $exists: true } } } })).status, 200);
  } finally {
    await server.master.put('/1.1/settings', { userQueryPermission: false });
  }
});

test('a batch GET query of users follows the same permission', async () => {
  const batch = await server.client.post('/1.1/batch', { requests: [{ method: 'GET', path: '/1.1/users' }] });
  assert.equal(batch.status, 200, batch.text);
  assert.equal(batch.body[0].error.code, 403);
  const byMaster = await server.master.post('/1.1/batch', { requests: [{ method: 'GET', path: '/1.1/classes/_User', params: { limit: 2 } }] });
  assert.equal(byMaster.body[0].success.results.length, 2);
});
