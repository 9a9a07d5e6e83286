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

test('create, get, query', async () => {
  const created = await server.client.post('/1.1/classes/Post', { title: 'hello', n: 1 });
  assert.equal(created.status, 201, created.text);
  const got = await server.client.get(`/1.1/classes/Post/${created.body.objectId}`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.body.title, 'hello');
  const found = await server.client.get('/1.1/classes/Post', { query: { where: { n: { $gte: 1 } }, count: 1 } });
  assert.equal(found.status, 200, found.text);
  assert.equal(found.body.count, 1);
});
