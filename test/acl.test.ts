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
