import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import type { Client } from './helpers/client.ts';

let server: TestServer;
let owner: SignedUpUser;
let other: SignedUpUser;

before(async () => {
  server = await startServer();
  owner = await signUp(server.client);
  other = await signUp(server.client);
});
after(async () => {
  await server?.close();
});

const denied = { code: 403, error: "Forbidden writing by object's ACL." };
type Who = 'anonymous' | 'other user' | 'owner' | 'master';
const callers = (): Record<Who, Client> => ({
  anonymous: server.client,
  'other user': other.client,
  owner: owner.client,
  master: server.master,
});

/** What each caller may do with an object of the given ACL. */
const matrix: Array<{ name: string; acl: (ownerId: string) => unknown; read: Who[]; write: Who[] }> = [
  { name: 'no ACL (public)', acl: () => undefined, read: ['anonymous', 'other user', 'owner', 'master'], write: ['anonymous', 'other user', 'owner', 'master'] },
  { name: 'public read only', acl: () => ({ '*': { read: true } }), read: ['anonymous', 'other user', 'owner', 'master'], write: ['master'] },
  { name: 'owner only', acl: (id) => ({ [id]: { read: true, write: true } }), read: ['owner', 'master'], write: ['owner', 'master'] },
  { name: 'public read, owner write', acl: (id) => ({ '*': { read: true }, [id]: { write: true } }), read: ['anonymous', 'other user', 'owner', 'master'], write: ['owner', 'master'] },
  { name: 'owner write only', acl: (id) => ({ [id]: { write: true } }), read: ['master'], write: ['owner', 'master'] },
  { name: 'nobody', acl: () => ({}), read: ['master'], write: ['master'] },
];

describe('ACL matrix: no session, another user, the owner, the master key', () => {
  for (const row of matrix) {
    test(row.name, async () => {
      for (const [who, client] of Object.entries(callers()) as Array<[Who, Client]>) {
        const acl = row.acl(owner.objectId);
        const created = await server.master.post('/1.1/classes/Secret', { n: 0, ...(acl === undefined ? {} : { ACL: acl }) });
        assert.equal(created.status, 201);
        const id = created.body.objectId;

        const got = await client.get(`/1.1/classes/Secret/${id}`);
        assert.equal(got.status, 200);
        assert.equal(got.body.objectId === id, row.read.includes(who), `${who} read`);
        const listed = await client.get('/1.1/classes/Secret', { query: { where: { objectId: id }, count: 1 } });
        assert.equal(listed.body.count, row.read.includes(who) ? 1 : 0, `${who} query`);

        const updated = await client.put(`/1.1/classes/Secret/${id}`, { n: 1 });
        if (row.write.includes(who)) assert.equal(updated.status, 200, `${who} write`);
        else assert.deepEqual([updated.status, updated.body], [403, denied], `${who} write`);

        const removed = await client.delete(`/1.1/classes/Secret/${id}`);
        if (row.write.includes(who)) {
          assert.deepEqual([removed.status, removed.body], [200, {}], `${who} delete`);
        } else {
          assert.deepEqual([removed.status, removed.body], [403, denied], `${who} delete`);
          assert.equal((await server.master.get(`/1.1/classes/Secret/${id}`)).body.n, 0, `${who} changed nothing`);
        }
      }
    });
  }
});

describe('ACL values', () => {
  test('returnACL=true shows the ACL; it is not returned otherwise', async () => {
    const acl = { '*': { read: true }, [owner.objectId]: { read: true, write: true } };
    const created = await owner.client.post('/1.1/classes/Shown', { a: 1, ACL: acl });
    const plain = await owner.client.get(`/1.1/classes/Shown/${created.body.objectId}`);
    assert.equal('ACL' in plain.body, false);
    const shown = await owner.client.get(`/1.1/classes/Shown/${created.body.objectId}`, { query: { returnACL: 'true' } });
    assert.deepEqual(shown.body.ACL, acl);
  });

  test('an owner can change the ACL; afterwards the new one applies', async () => {
    const created = await owner.client.post('/1.1/classes/Moving', { ACL: { [owner.objectId]: { read: true, write: true } } });
    const id = created.body.objectId;
    assert.deepEqual((await other.client.get(`/1.1/classes/Moving/${id}`)).body, {});
    const shared = await owner.client.put(`/1.1/classes/Moving/${id}`, { ACL: { '*': { read: true }, [owner.objectId]: { write: true } } });
    assert.equal(shared.status, 200);
    assert.equal((await other.client.get(`/1.1/classes/Moving/${id}`)).body.objectId, id);
  });

  test('a malformed ACL is code 123 and writes nothing', async () => {
    const bad = [
      'everyone',
      { '*': true },
      { '*': { read: 'yes' } },
      { '*': { admin: true } },
      { 'bad key!': { read: true } },
    ];
    for (const ACL of bad) {
      const res = await owner.client.post('/1.1/classes/BadAcl', { a: 1, ACL });
      assert.deepEqual([res.status, res.body.code], [400, 123], JSON.stringify(ACL));
    }
    const count = await server.master.get('/1.1/classes/BadAcl', { query: { count: 1, limit: 0 } });
    assert.equal(count.body.count, 0);
  });
});

// Review of e2b2d15, finding 4 (ACL oracle): PUT/DELETE ?where= on an object the caller could not read answered
// 403 when the condition matched and 305 when it did not, so an anonymous client rebuilt a private field.
describe('no ACL oracle', () => {
  const conditionFailed = { code: 305, error: 'No effect on updating/deleting a document.' };

  test('a condition on an object the caller cannot read answers the same whether it matches or not', async () => {
    const cases: Array<{ name: string; acl: Record<string, unknown>; callers: Client[]; answer: [number, unknown] }> = [
      // Neither read nor write: refused by the ACL, before any condition.
      { name: 'nobody', acl: {}, callers: [server.client, other.client, owner.client], answer: [403, denied] },
      { name: 'owner only', acl: { [owner.objectId]: { read: true, write: true } }, callers: [server.client, other.client], answer: [403, denied] },
      // Write but not read: a condition never matches what the caller cannot read.
      { name: 'public write only', acl: { '*': { write: true } }, callers: [server.client, other.client], answer: [400, conditionFailed] },
      { name: 'owner write only', acl: { [owner.objectId]: { write: true } }, callers: [owner.client], answer: [400, conditionFailed] },
    ];
    const conditions = [
      { secret: 's3cr3t' },
      { secret: 'other' },
      { secret: { $regex: '^s' } },
      { secret: { $regex: '^x' } },
      { secret: { $exists: true } },
      { secret: { $exists: false } },
    ];
    for (const { name, acl, callers, answer } of cases) {
      const created = await server.master.post('/1.1/classes/Vault', { secret: 's3cr3t', n: 0, ACL: acl });
      const id = created.body.objectId;
      for (const client of callers) {
        for (const where of conditions) {
          const put = await client.put(`/1.1/classes/Vault/${id}`, { n: 1 }, { query: { where } });
          assert.deepEqual([put.status, put.body], answer, `${name} PUT ${JSON.stringify(where)}`);
          const del = await client.delete(`/1.1/classes/Vault/${id}`, { query: { where } });
          assert.deepEqual([del.status, del.body], answer, `${name} DELETE ${JSON.stringify(where)}`);
        }
      }
      const kept = await server.master.get(`/1.1/classes/Vault/${id}`);
      assert.deepEqual([kept.body.secret, kept.body.n], ['s3cr3t', 0], `${name} unchanged`);
    }
  });

  test('a condition on a readable object still decides: a match writes, a miss is 305', async () => {
    const created = await owner.client.post('/1.1/classes/Vault', { secret: 'open', n: 0, ACL: { [owner.objectId]: { read: true, write: true } } });
    const id = created.body.objectId;
    const miss = await owner.client.put(`/1.1/classes/Vault/${id}`, { n: 1 }, { query: { where: { secret: 'no' } } });
    assert.deepEqual([miss.status, miss.body], [400, conditionFailed]);
    const hit = await owner.client.put(`/1.1/classes/Vault/${id}`, { n: 1 }, { query: { where: { secret: 'open' } } });
    assert.equal(hit.status, 200, hit.text);
    const gone = await owner.client.delete(`/1.1/classes/Vault/${id}`, { query: { where: { n: 1 } } });
    assert.deepEqual([gone.status, gone.body], [200, {}]);
  });

  // Review of e2b2d15, finding 4: new=true / fetchWhenSave returned every field of an object the writer may not read.
  test('new=true and fetchWhenSave answer without the fields when the writer may not read the object', async () => {
    const created = await server.master.post('/1.1/classes/Drop', { secret: 's3cr3t', n: 0, ACL: { '*': { write: true } } });
    const id = created.body.objectId;
    for (const query of [{ new: 'true' }, { fetchWhenSave: 'true' }, { new: 'true', returnACL: 'true' }]) {
      const saved = await server.client.put(`/1.1/classes/Drop/${id}`, { n: { __op: 'Increment' } }, { query });
      assert.equal(saved.status, 200, saved.text);
      assert.deepEqual(Object.keys(saved.body).sort(), ['objectId', 'updatedAt'], JSON.stringify(query));
    }
    const batch = await server.client.post('/1.1/batch', {
      requests: [{ method: 'PUT', path: `/1.1/classes/Drop/${id}`, body: { n: 5 }, params: { new: true } }],
    });
    assert.deepEqual(Object.keys(batch.body[0].success).sort(), ['objectId', 'updatedAt']);
    const writeOnly = await server.client.post('/1.1/classes/Drop', { a: 1, ACL: { '*': { write: true } } }, { query: { fetchWhenSave: 'true' } });
    assert.deepEqual([writeOnly.status, Object.keys(writeOnly.body).sort()], [201, ['createdAt', 'objectId']]);
    // The ACL after the write decides: giving up one's own read gives up the answer too.
    const mine = await owner.client.post('/1.1/classes/Drop', { secret: 'mine', ACL: { [owner.objectId]: { read: true, write: true } } });
    const readable = await owner.client.put(`/1.1/classes/Drop/${mine.body.objectId}`, { n: 1 }, { query: { new: 'true' } });
    // Only the touched field comes back (reference §5), but it does come back.
    assert.deepEqual(readable.body, { n: 1, updatedAt: readable.body.updatedAt, objectId: mine.body.objectId });
    const givenUp = await owner.client.put(
      `/1.1/classes/Drop/${mine.body.objectId}`,
      { n: 2, ACL: { [owner.objectId]: { write: true } } },
      { query: { new: 'true' } },
    );
    assert.deepEqual(Object.keys(givenUp.body).sort(), ['objectId', 'updatedAt']);
  });
});
