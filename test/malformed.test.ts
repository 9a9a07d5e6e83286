// No request, however malformed, may produce a 5xx or a stack trace.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
let existingId: string;
before(async () => {
  server = await startServer();
  existingId = (await server.client.post('/1.1/classes/Fuzz', { n: 1, list: [1], obj: { a: 1 } })).body.objectId;
});
after(async () => {
  await server?.close();
});

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const values: unknown[] = [
  null, true, 0, -1, 1e308, 'x', '', [], {}, [null], { __type: 'Date' }, { __op: 'Increment', amount: 'x' },
  { __op: 'Add' }, { __op: 'Nope' }, { $gt: {} }, { $in: {} }, { $regex: 5 }, { $exists: null }, { $or: 1 },
  { 'a.b': 1 }, { __proto__: 1 }, { constructor: { prototype: 1 } }, { __type: 'Pointer', className: 5 },
  'x'.repeat(10_000), 'nul\u0000byte', { 'k\u0000': 1 },
  // A lone UTF-16 surrogate: PostgreSQL's jsonb refuses it, so it once surfaced as a 500 there.
  'lone\ud800surrogate', '\udc00', { 'k\ud800': 1 }, { __type: 'GeoPoint', latitude: 'n', longitude: [] },
];

function junkBodies(): string[] {
  const bodies = values.flatMap((value) => [JSON.stringify({ field: value }), JSON.stringify(value)]);
  bodies.push(
    JSON.stringify({ ACL: { '*': { read: 1 } } }),
    JSON.stringify({ 'x.y.z': { __op: 'Increment' }, x: 5 }),
    JSON.stringify({ objectId: 5, createdAt: [] }),
    `{"deep":${nested(2000)}}`,
    '\u0000',
    '{"a":1}garbage',
  );
  return bodies;
}

test('junk bodies on every write route answer 2xx or 4xx with {code, error}', async () => {
  const targets: Array<[string, string]> = [
    ['POST', '/1.1/classes/Fuzz'],
    ['PUT', `/1.1/classes/Fuzz/${existingId}`],
    ['POST', '/1.1/batch'],
    ['PUT', '/1.1/settings'],
    ['POST', '/1.1/users'],
    ['POST', '/1.1/login'],
  ];
  for (const [method, path] of targets) {
    for (const raw of junkBodies()) {
      const client = path === '/1.1/settings' ? server.master : server.client;
      const res = await client.request(method, path, { raw });
      assert.ok(res.status < 500, `${method} ${path} ${raw.slice(0, 80)} → ${res.status} ${res.text.slice(0, 200)}`);
      if (res.status >= 400) {
        assert.equal(typeof res.body.code, 'number', res.text);
        assert.equal(typeof res.body.error, 'string', res.text);
        assert.ok(!/\n\s+at /.test(res.text), 'no stack trace');
      }
    }
  }
});

test('junk query parameters answer 2xx or 4xx', async () => {
  const params: Array<Record<string, string>> = [
    ...values.map((value) => ({ where: JSON.stringify({ n: value }) })),
    ...values.map((value) => ({ where: JSON.stringify(value) })),
    { where: '{"n":' },
    { order: '-,,--x' },
    { order: 'a.b.c,-$x' },
    { keys: '-' },
    { keys: 'a..b' },
    { limit: 'many' },
    { limit: '1e3' },
    { skip: '-5' },
    { skip: '99999999999999999999' },
    { count: 'maybe' },
    { where: JSON.stringify({ $and: [{ $or: [{ n: { $regex: '[' } }] }] }) },
    { where: '{"$or":['.repeat(500) + '{}' + ']}'.repeat(500) },
    { where: JSON.stringify({ n: { $in: Array.from({ length: 50_000 }, (_, i) => i) } }) },
  ];
  for (const query of params) {
    const res = await server.client.get('/1.1/classes/Fuzz', { query });
    assert.ok(res.status < 500, `${JSON.stringify(query)} → ${res.status} ${res.text.slice(0, 200)}`);
    const update = await server.client.put(`/1.1/classes/Fuzz/${existingId}`, { n: 1 }, { query });
    assert.ok(update.status < 500, `update ${JSON.stringify(query)} → ${update.status} ${update.text.slice(0, 200)}`);
  }
});

test('odd paths and ids answer 2xx or 4xx', async () => {
  const paths = [
    '/1.1/classes/%00',
    '/1.1/classes/Fuzz/%00',
    '/1.1/classes/Fuzz/' + 'a'.repeat(5000),
    '/1.1/classes/Fuzz/..%2F..%2Fetc',
    '/1.1/classes/' + 'A'.repeat(300),
    '/1.1/classes/Fuzz/,,,',
    '/1.1/users/%ZZ',
    '/1.1/users/%00',
    '/1.1/classes/_User/%00',
  ];
  for (const path of paths) {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await server.client.request(method, path, method === 'GET' ? {} : { body: {} });
      assert.ok(res.status < 500, `${method} ${path.slice(0, 60)} → ${res.status} ${res.text.slice(0, 200)}`);
    }
  }
});

// Regression: a lone UTF-16 surrogate reached PostgreSQL's jsonb and answered 500 there.
test('a string with a lone surrogate is refused with 111 on every store, and nothing is stored', async () => {
  const message = 'Strings must be valid Unicode (a lone surrogate was found).';
  const created = await server.client.request('POST', '/1.1/classes/Surrogate', { raw: '{"name":"a\\ud800b"}' });
  assert.equal(created.status, 400);
  assert.deepEqual(created.body, { code: 111, error: message });
  const query = await server.client.get('/1.1/classes/Surrogate', { query: { where: '{"name":"\\udc00"}' } });
  assert.equal(query.status, 400);
  assert.deepEqual(query.body, { code: 111, error: message });
  const nested = await server.client.request('POST', '/1.1/classes/Surrogate', { raw: '{"obj":{"k\\ud800":1}}' });
  assert.equal(nested.status, 400);
  assert.equal(nested.body.code, 121);
  const stored = await server.master.get('/1.1/classes/Surrogate');
  assert.deepEqual(stored.body, { results: [] });
});
