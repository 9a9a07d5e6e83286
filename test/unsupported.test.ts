// What Roost does not support fails clearly (issue #15 point 9; README "Not supported (yet)"): an API or a
// query feature of the hosted service that Roost lacks answers an error naming it. Before: unknown routes
// answered a bare 404 "Not found.", $relatedTo 105 "Invalid key name", include was ignored silently,
// AddRelation was "Unsupported operation" (111) and _Role was stored as a plain class.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

describe('routes', () => {
  test('an unknown route is 404 naming the method and the path', async () => {
    const res = await server.client.get('/1.1/nothing-here');
    assert.deepEqual([res.status, res.body], [404, { code: 404, error: 'Not supported: Roost has no API GET /1.1/nothing-here.' }]);
    const patch = await server.client.request('PATCH', '/1.1/classes/Post/abc', { body: {} });
    assert.deepEqual([patch.status, patch.body], [404, { code: 404, error: 'Not supported: Roost has no API PATCH /1.1/classes/….' }]);
    const outside = await server.client.get('/nowhere?x=1');
    assert.deepEqual([outside.status, outside.body], [404, { code: 404, error: 'Not supported: Roost has no API GET /nowhere.' }]);
  });

  test('the path is shown only up to its first segment after the version: no id or token echoed', async () => {
    const res = await server.client.get('/1.1/nothing/secret-token-0123456789');
    assert.equal(res.status, 404);
    assert.equal(res.body.error, 'Not supported: Roost has no API GET /1.1/nothing/….');
    const long = await server.client.get(`/1.1/${'x'.repeat(200)}`);
    assert.equal(long.body.error, `Not supported: Roost has no API GET /1.1/${'x'.repeat(64)}….`);
  });

  test("the hosted service's APIs Roost lacks are named", async () => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/1.1/functions/hello', 'Not supported yet: cloud functions (POST /1.1/functions/…).'],
      ['POST', '/1.1/call/hello', 'Not supported yet: cloud functions (POST /1.1/call/…).'],
      ['POST', '/1.1/qiniu', 'Not supported yet: files (POST /1.1/qiniu).'],
      ['GET', '/1.1/requestCaptcha', 'Not supported yet: captcha (GET /1.1/requestCaptcha).'],
      ['GET', '/1.1/search/select?q=x', 'Not supported yet: app search (GET /1.1/search/…).'],
    ];
    for (const [method, path, error] of cases) {
      const res = await server.client.request(method, path, method === 'GET' ? {} : { body: {} });
      assert.deepEqual([res.status, res.body], [404, { code: 404, error }], `${method} ${path}`);
    }
  });

  test('built-in classes of those features are refused whole, 400 code 1', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/1.1/classes/_Conversation', { name: 'a' }, 'instant messaging (_Conversation)'],
      ['GET', '/1.1/classes/_Conversation', undefined, 'instant messaging (_Conversation)'],
    ];
    for (const [method, path, body, feature] of cases) {
      const res = await server.master.request(method, path, { body });
      assert.deepEqual([res.status, res.body], [400, { code: 1, error: `Not supported yet: ${feature}.` }], `${method} ${path}`);
    }
    const batch = await server.client.post('/1.1/batch', { requests: [{ method: 'GET', path: '/1.1/classes/_Conversation' }] });
    assert.deepEqual(batch.body, [{ error: { code: 1, error: 'Not supported yet: instant messaging (_Conversation).' } }]);
  });

  test('a batch naming a route of a feature Roost lacks names the feature', async () => {
    const batch = await server.client.post('/1.1/batch', {
      requests: [{ method: 'POST', path: '/1.1/classes/Post', body: {} }, { method: 'POST', path: '/1.1/functions/hello', body: {} }],
    });
    assert.deepEqual([batch.status, batch.body], [404, { code: 404, error: 'Not supported yet: cloud functions (POST /1.1/functions/…).' }]);
    // Nothing of the batch ran.
    assert.deepEqual((await server.master.get('/1.1/classes/Post', { query: { count: 1, limit: 0 } })).body.count, 0);
  });
});

describe('queries and writes', () => {
  const where = (w: unknown) => server.client.get('/1.1/classes/Post', { query: { where: w } });

  test('an operator where a key goes is named as an operator (102), not refused as a key name (105)', async () => {
    const res = await where({ $nor: [{ a: 1 }] });
    assert.deepEqual([res.status, res.body], [400, { code: 102, error: "Unsupported query operator '$nor'." }]);
    const unknown = await where({ a: { $elemMatch: { b: 1 } } });
    assert.deepEqual([unknown.status, unknown.body], [400, { code: 102, error: "Unsupported query operator '$elemMatch'." }]);
  });

  test('an unknown __op answers 1 naming it (the hosted code: the PHP SDK testSetHashValue); nothing is written', async () => {
    const created = await server.client.post('/1.1/classes/Post', { title: 't' });
    const other = await server.client.put(`/1.1/classes/Post/${created.body.objectId}`, { title: 'changed', a: { __op: 'Mystery' } });
    assert.deepEqual([other.status, other.body], [400, { code: 1, error: "Unsupported operation 'Mystery'." }]);
    assert.equal((await server.client.get(`/1.1/classes/Post/${created.body.objectId}`)).body.title, 't');
  });
});
