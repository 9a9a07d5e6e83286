import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const unauthorized = { code: 401, error: 'Unauthorized.' };

async function call(headers: Record<string, string>, path = '/1.1/classes/Thing', init: RequestInit = {}) {
  const response = await fetch(server.url + path, { ...init, headers: { 'Content-Type': 'application/json', ...headers } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

describe('application keys', () => {
  test('the reference signature vector is computed as documented', () => {
    assert.equal(md5('1453014943466UtOCzqb67d3sN12Kts4URwy8'), 'd5bcbb897e19b2f6633c716dfdfaf9be');
    assert.equal(md5('1453014943466DyJegPlemooo4X1tg94gQkw1'), 'e074720658078c898aa0d4b1b82bdf4b');
  });

  test('X-LC-Key and X-SVC-Key with the app key are accepted', async () => {
    assert.equal((await call({ 'X-LC-Id': server.appId, 'X-LC-Key': server.appKey })).status, 200);
    assert.equal((await call({ 'X-SVC-Id': server.appId, 'X-SVC-Key': server.appKey })).status, 200);
  });

  test('a fresh signature is accepted, with the app key or the master key', async () => {
    const now = Date.now();
    const app = await call({ 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(now + server.appKey)},${now}` });
    assert.equal(app.status, 200);
    const master = await call(
      { 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(now + server.masterKey)},${now},master` },
      '/1.1/settings',
    );
    assert.equal(master.status, 200);
    const svc = await call({ 'X-SVC-Id': server.appId, 'X-SVC-Sign': `${md5(now + server.appKey).toUpperCase()},${now}` });
    assert.equal(svc.status, 200);
  });

  test('a signature more than 15 minutes off is refused, either way', async () => {
    for (const offset of [-16 * 60_000, 16 * 60_000]) {
      const ts = Date.now() + offset;
      const res = await call({ 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(ts + server.appKey)},${ts}` });
      assert.deepEqual([res.status, res.body], [401, unauthorized]);
    }
    const ts = Date.now() - 14 * 60_000;
    assert.equal((await call({ 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(ts + server.appKey)},${ts}` })).status, 200);
  });

  test('wrong id, key or signature is 401 {"code":401,"error":"Unauthorized."}', async () => {
    const now = Date.now();
    const bad: Array<Record<string, string>> = [
      {},
      { 'X-LC-Id': server.appId },
      { 'X-LC-Id': 'nope', 'X-LC-Key': server.appKey },
      { 'X-LC-Id': server.appId, 'X-LC-Key': 'wrong' },
      { 'X-LC-Id': server.appId, 'X-LC-Key': `${server.appKey},master` },
      { 'X-LC-Id': server.appId, 'X-LC-Key': server.masterKey },
      { 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(now + 'wrong')},${now}` },
      { 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(now + server.appKey)},${now},master` },
      { 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(now + server.appKey)}` },
      { 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(now + server.appKey)},soon` },
      { 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(now + server.appKey)},${now},admin` },
    ];
    for (const headers of bad) {
      const res = await call(headers);
      assert.deepEqual([res.status, res.body], [401, unauthorized], JSON.stringify(headers));
    }
  });

  // Only the exact key opens anything, however often a right one was sent before (src/http/context.ts compares
  // every request's key with the record's key bytes; no cache of accepted headers).
  test('a key accepted before opens nothing else: near misses, the app key as master, an unknown id, again and again', async () => {
    for (let round = 0; round < 3; round++) {
      assert.equal((await call({ 'X-LC-Id': server.appId, 'X-LC-Key': server.appKey })).status, 200);
      assert.equal((await call({ 'X-LC-Id': server.appId, 'X-LC-Key': `${server.masterKey},master` }, '/1.1/settings')).status, 200);
      assert.equal((await call({ 'X-LC-Id': server.appId, 'X-LC-Key': server.appKey }, '/1.1/settings')).status, 403);
      const refused: Array<Record<string, string>> = [
        { 'X-LC-Id': server.appId, 'X-LC-Key': `${server.appKey}x` },
        { 'X-LC-Id': server.appId, 'X-LC-Key': server.appKey.slice(0, -1) },
        // As long as the key, one character off; as many characters but more bytes; the master key one short.
        { 'X-LC-Id': server.appId, 'X-LC-Key': `${server.appKey.slice(0, -1)}${server.appKey.endsWith('a') ? 'b' : 'a'}` },
        { 'X-LC-Id': server.appId, 'X-LC-Key': `${server.appKey.slice(0, -1)}é` },
        { 'X-LC-Id': server.appId, 'X-LC-Key': `${server.masterKey.slice(0, -1)},master` },
        { 'X-LC-Id': server.appId, 'X-LC-Key': `${server.appKey},master` },
        { 'X-LC-Id': server.appId, 'X-LC-Key': server.masterKey },
        { 'X-LC-Id': 'nope', 'X-LC-Key': server.appKey },
        { 'X-SVC-Id': 'nope', 'X-SVC-Key': `${server.masterKey},master` },
      ];
      for (const headers of refused) {
        const res = await call(headers);
        assert.deepEqual([res.status, res.body], [401, unauthorized], JSON.stringify(headers));
      }
    }
  });

  test('the master key opens master-only routes; the app key does not', async () => {
    const appKey = await call({ 'X-LC-Id': server.appId, 'X-LC-Key': server.appKey }, '/1.1/settings');
    assert.equal(appKey.status, 403);
    assert.equal(appKey.body.code, 403);
    const master = await call({ 'X-LC-Id': server.appId, 'X-LC-Key': `${server.masterKey},master` }, '/1.1/settings');
    assert.equal(master.status, 200);
  });

  test('an unknown session token is ignored where no user is needed', async () => {
    const res = await server.client.get('/1.1/classes/Thing', { session: 'not-a-token' });
    assert.equal(res.status, 200);
  });
});

describe('transport', () => {
  test('GET /health needs no keys', async () => {
    const res = await fetch(server.url + '/health');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok', store: server.store.kind });
  });

  test('CORS preflight allows the SDK headers from any origin', async () => {
    const res = await fetch(server.url + '/1.1/classes/Thing', {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'x-lc-id,x-lc-sign,x-lc-session,x-lc-ua,content-type',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const name of ['x-lc-id', 'x-lc-sign', 'x-lc-session', 'x-lc-ua', 'x-svc-id', 'x-svc-key', 'content-type']) {
      assert.ok(allowed.includes(name), `${name} in ${allowed}`);
    }
  });

  // Outside preflight the two CORS headers are set by Roost's own hook (src/server.ts), not @fastify/cors.
  test('every other answer lets any origin read it and the Location header, errors too', async () => {
    const origin = { Origin: 'https://app.example' };
    const answers = [
      await call({ ...origin, 'X-LC-Id': server.appId, 'X-LC-Key': server.appKey }),
      await call({ ...origin, 'X-LC-Id': server.appId, 'X-LC-Key': 'wrong' }),
      await call(origin, '/1.1/nowhere'),
      await call(origin, '/health'),
    ];
    assert.deepEqual(
      answers.map((res) => [res.status, res.headers.get('access-control-allow-origin'), res.headers.get('access-control-expose-headers'), res.headers.get('access-control-allow-methods')]),
      [
        [200, '*', 'Location', null],
        [401, '*', 'Location', null],
        [404, '*', 'Location', null],
        [200, '*', 'Location', null],
      ],
    );
    const strict = await fetch(server.url + '/1.1/classes/Thing', { method: 'OPTIONS' });
    assert.deepEqual([strict.status, await strict.text(), strict.headers.get('access-control-allow-origin')], [400, '{"code":1,"error":"A preflight request needs Origin and Access-Control-Request-Method headers."}', '*']);
  });

  test('large responses are gzipped when the client accepts gzip', async () => {
    await server.client.post('/1.1/classes/Big', { text: 'x'.repeat(5000) });
    const body = await new Promise<{ encoding: string | undefined; text: string }>((resolve, reject) => {
      const url = new URL(server.url + '/1.1/classes/Big');
      const req = httpRequest(url, { headers: { ...server.client.authHeaders(), 'Accept-Encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const encoding = res.headers['content-encoding'];
          resolve({ encoding, text: (encoding === 'gzip' ? gunzipSync(raw) : raw).toString() });
        });
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(body.encoding, 'gzip');
    assert.equal(JSON.parse(body.text).results[0].text.length, 5000);
  });

  test('malformed JSON is 400 code 107', async () => {
    for (const raw of ['{', '{"a":', 'nul', '{"__proto__":{"x":1}}']) {
      const res = await server.client.request('POST', '/1.1/classes/Thing', { raw });
      assert.deepEqual([res.status, res.body.code], [400, 107], raw);
    }
  });

  test('a body that is not an object is 400 code 107', async () => {
    for (const raw of ['[1,2]', '"text"', '42', 'null']) {
      const res = await server.client.request('POST', '/1.1/classes/Thing', { raw });
      assert.deepEqual([res.status, res.body.code], [400, 107], raw);
    }
  });

  test('a body that is not JSON is 415', async () => {
    const res = await server.client.request('POST', '/1.1/classes/Thing', {
      raw: 'a=1',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    assert.deepEqual([res.status, res.body.code], [415, 415]);
  });

  test('a body over the limit is 413', async () => {
    const small = await startServer({ env: { BODY_LIMIT_BYTES: '2048' } });
    try {
      const res = await small.client.post('/1.1/classes/Thing', { text: 'x'.repeat(4096) });
      assert.deepEqual([res.status, res.body.code], [413, 413]);
    } finally {
      await small.close();
    }
  });

  test('an unknown route is 404 with a JSON body', async () => {
    const res = await server.client.get('/1.1/nothing-here');
    assert.deepEqual([res.status, res.body], [404, { code: 404, error: 'Not supported: Roost has no API GET /1.1/nothing-here.' }]);
  });

  test('GET /1.1/date returns the server time', async () => {
    const res = await server.client.get('/1.1/date');
    assert.equal(res.body.__type, 'Date');
    assert.ok(Math.abs(Date.parse(res.body.iso) - Date.now()) < 60_000);
  });
});
