// Relation fields have one record, the class schema (migration 0014): a relation added at sign-up or by a
// user's update is a field of GET /1.1/schemas and read as its descriptor at once, however long the node
// keeps what it read of the class (APP_CACHE_MS). Before: sign-up recorded it in relation_keys only
// (the schema left it out), and a node that had read _User's relation fields kept reading none.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp } from './helpers/accounts.ts';

let server: TestServer;

before(async () => {
  server = await startServer({ env: { APP_CACHE_MS: '600000' } });
});
after(async () => {
  await server?.close();
});

const relation = (className: string) => ({ __type: 'Relation', className });
const add = (className: string, objectId: string) => ({ __op: 'AddRelation', objects: [{ __type: 'Pointer', className, objectId }] });

test('a relation added at sign-up is a schema field and read as its descriptor at once', async () => {
  const post = (await server.client.post('/1.1/classes/Post', { title: 'a' })).body;
  const first = await signUp(server.client);
  // The node reads _User's fields now, and keeps them for the cache time.
  assert.equal((await server.master.get(`/1.1/users/${first.objectId}`)).body.favourites, undefined);

  const created = await server.client.post('/1.1/users', { username: 'fan', password: 'secret1', favourites: add('Post', post.objectId) });
  assert.equal(created.status, 201, created.text);
  const schema = await server.master.get('/1.1/schemas/_User');
  assert.deepEqual(schema.body.favourites, { type: 'Relation', className: 'Post' });
  assert.deepEqual((await server.master.get(`/1.1/users/${created.body.objectId}`)).body.favourites, relation('Post'));
  assert.deepEqual((await server.master.get(`/1.1/users/${first.objectId}`)).body.favourites, relation('Post'));
});

test("a relation added by a user's update is read at once; another class for it is refused (128)", async () => {
  const team = (await server.client.post('/1.1/classes/Team', { name: 't' })).body;
  const me = await signUp(server.client);
  const updated = await me.client.put(`/1.1/users/${me.objectId}`, { teams: add('Team', team.objectId) });
  assert.equal(updated.status, 200, updated.text);
  assert.deepEqual((await me.client.get(`/1.1/users/${me.objectId}`)).body.teams, relation('Team'));
  assert.deepEqual((await server.master.get('/1.1/schemas/_User')).body.teams, { type: 'Relation', className: 'Team' });
  const other = await me.client.put(`/1.1/users/${me.objectId}`, { teams: add('Post', team.objectId) });
  assert.deepEqual([other.status, other.body.code], [400, 128]);
});

test('a relation fixed by a create is in the schema with its class, and a where on it reads the relation', async () => {
  const fan = await signUp(server.client);
  const created = await server.client.post('/1.1/classes/Club', { likes: add('_User', fan.objectId) });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual((await server.master.get('/1.1/schemas/Club')).body.likes, { type: 'Relation', className: '_User' });
  const found = await server.client.get('/1.1/classes/Club', { query: { where: { likes: { __type: 'Pointer', className: '_User', objectId: fan.objectId } } } });
  assert.deepEqual(found.body.results.map((o: { objectId: string }) => o.objectId), [created.body.objectId]);
});
