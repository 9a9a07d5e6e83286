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

function requestLines(): Array<Record<string, unknown>> {
  return server.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'request');
}

// request.log makes its pino child on first use (src/http/request-logger.ts); the lines must not change.
test('one line per request: its own request id, method, path without the query, status and duration', async () => {
  const before = requestLines().length;
  const created = await server.client.post('/1.1/classes/Post', { title: 'logged' });
  await server.client.get(`/1.1/classes/Post/${created.body.objectId}`, { query: { keys: 'title' } });
  await server.client.get('/1.1/nowhere');
  const lines = requestLines().slice(before);
  assert.deepEqual(
    lines.map(({ level, service, method, url, status }) => ({ level, service, method, url, status })),
    [
      { level: 30, service: 'roost', method: 'POST', url: '/1.1/classes/Post', status: 201 },
      { level: 30, service: 'roost', method: 'GET', url: `/1.1/classes/Post/${created.body.objectId}`, status: 200 },
      { level: 30, service: 'roost', method: 'GET', url: '/1.1/nowhere', status: 404 },
    ],
  );
  for (const line of lines) {
    assert.match(String(line.reqId), /^req-[0-9a-z]+$/);
    assert.equal(typeof line.ms, 'number');
  }
  assert.equal(new Set(lines.map((line) => line.reqId)).size, 3);
});

// Lines group by route pattern and application, and carry the catalogue code of an error answer.
test('a line names the app, the route pattern, the status, the catalogue code and the duration, never a key', async () => {
  const before = requestLines().length;
  const created = await server.client.post('/1.1/classes/Post', { title: 'patterned' });
  await server.client.get('/1.1/classes/Post', { query: { where: '{not json' } });
  await server.client.get('/1.1/nowhere');
  const lines = requestLines().slice(before);
  assert.deepEqual(
    lines.map(({ app, route, status, code }) => ({ app, route, status, code })),
    [
      { app: server.appId, route: '/1.1/classes/:className', status: 201, code: undefined },
      { app: server.appId, route: '/1.1/classes/:className', status: 400, code: 107 },
      { app: undefined, route: 'unmatched', status: 404, code: 404 },
    ],
  );
  assert.ok(created.body.objectId);
  for (const line of lines) assert.equal(typeof line.ms, 'number');
  const written = server.logs.join('\n');
  for (const secret of [server.appKey, server.masterKey]) assert.ok(!written.includes(secret));
});
