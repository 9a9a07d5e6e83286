// HTTP-level limits: body shape and size, batch paths and nesting, header size, preflight, timeouts.
// Every refusal is {code, error}; every limit below is the documented one (README "Limits").
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
before(async () => {
  server = await startServer({ env: { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1500', KEEP_ALIVE_TIMEOUT_MS: '1000' } });
});
after(async () => {
  await server?.close();
});

const MiB = 1024 * 1024;
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

test('bodies beyond the documented limits are refused before they are parsed (Review of e2b2d15: 10-19 MiB bodies froze the node for seconds)', async () => {
  const post = (raw: string) => server.client.request('POST', '/1.1/classes/Body', { raw });
  const cases: Array<[string, string, number, unknown]> = [
    ['1 MiB + 1 byte', JSON.stringify({ s: 'x'.repeat(MiB - 8 + 1) }), 413, { code: 413, error: 'Request entity too large.' }],
    ['nesting 129', `{"a":${nested(128)}}`, 400, { code: 107, error: 'JSON bodies may nest at most 128 levels.' }],
    [
      '501 keys in an object',
      JSON.stringify({ o: Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`k${i}`, 1])) }),
      400,
      { code: 107, error: 'A JSON object may hold at most 500 keys.' },
    ],
    // The top-level object, the key "a" and the array count too.
    ['50,001 keys and values', `{"a":[${'0,'.repeat(49_997)}0]}`, 413, { code: 413, error: 'A JSON body may hold at most 50000 keys and values.' }],
    ['10,001 objects and arrays', `{"a":[${'{},'.repeat(9_998)}{}]}`, 413, { code: 413, error: 'A JSON body may hold at most 10000 objects and arrays.' }],
  ];
  for (const [label, raw, status, body] of cases) {
    const res = await post(raw);
    assert.equal(res.status, status, `${label}: ${res.text.slice(0, 200)}`);
    assert.deepEqual(res.body, body, label);
  }
  // At the limits: stored.
  const ok = [
    JSON.stringify({ s: 'x'.repeat(MiB - 8) }),
    JSON.stringify({ o: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, 1])) }),
    `{"a":[${'0,'.repeat(49_996)}0]}`,
    `{"a":[${'{},'.repeat(9_997)}{}]}`,
    JSON.stringify({ s: 'a "quoted" \\ string [with {brackets}]', n: [-1.5e3, true, false, null] }),
  ];
  for (const raw of ok) assert.equal((await post(raw)).status, 201, raw.slice(0, 60));
});

/** Writes raw bytes on a fresh socket; resolves with what came back and when the server closed it. */
function rawExchange(send: string, waitMs: number): Promise<{ text: string; closedAfterMs: number | null }> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    const started = Date.now();
    let text = '';
    let closedAfterMs: number | null = null;
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closedAfterMs });
    }, waitMs);
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      closedAfterMs = Date.now() - started;
      clearTimeout(timer);
      resolve({ text, closedAfterMs });
    });
    if (send) socket.write(send);
  });
}

test('a body announced over the limit is refused from its Content-Length, before a byte of it is sent', async () => {
  const headers = `POST /1.1/classes/Body HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-LC-Id: ${server.appId}\r\nX-LC-Key: ${server.appKey}\r\nContent-Length: ${2 * MiB}\r\n\r\n`;
  const { text } = await rawExchange(headers, 1200);
  assert.match(text, /^HTTP\/1\.1 413 /);
  assert.ok(text.endsWith('{"code":413,"error":"Request entity too large."}'), text);
});

test('large bodies take turns: concurrent ones all land, a batch of large sub-requests does not wait on itself, a client that leaves frees the turn', async () => {
  const big = (tag: string) => JSON.stringify({ tag, s: 'x'.repeat(900 * 1024) });
  const answers = await Promise.all(['a', 'b', 'c', 'd'].map((tag) => server.client.request('POST', '/1.1/classes/Turns', { raw: big(tag) })));
  assert.deepEqual(answers.map((res) => res.status), [201, 201, 201, 201]);
  const batch = await server.client.post('/1.1/batch', {
    requests: [0, 1, 2].map((i) => ({ method: 'POST', path: '/1.1/classes/Turns', body: { i, s: 'y'.repeat(200 * 1024) } })),
  });
  assert.equal(batch.status, 200);
  assert.equal(batch.body.filter((r: { success?: unknown }) => r.success).length, 3);
  // Sends a large body and hangs up at once, while another large body holds the turn.
  const raw = big('gone');
  const head = `POST /1.1/classes/Turns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-LC-Id: ${server.appId}\r\nX-LC-Key: ${server.appKey}\r\nContent-Length: ${Buffer.byteLength(raw)}\r\n\r\n`;
  const holder = server.client.request('POST', '/1.1/classes/Turns', { raw: big('holder') });
  await new Promise<void>((done) => {
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1', () => socket.end(head + raw, () => socket.destroy()));
    socket.on('close', () => done());
    socket.on('error', () => {});
  });
  assert.equal((await holder).status, 201);
  const after = await server.client.request('POST', '/1.1/classes/Turns', { raw: big('after') });
  assert.equal(after.status, 201);
});

test('batch: deep nesting is 400, not 500 (Review of e2b2d15: JSON.stringify overflowed the stack)', async () => {
  const raw = `{"requests":[{"method":"POST","path":"/1.1/classes/Body","body":{"a":${nested(5000)}}}]}`;
  const res = await server.client.request('POST', '/1.1/batch', { raw });
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, { code: 107, error: 'JSON bodies may nest at most 128 levels.' });
});

test('batch: sub-request paths are judged after dot segments, encodings and slashes are resolved (Review of e2b2d15: ../ reached other routes)', async () => {
  const refused = { code: 107, error: 'requests[0]: path must be a /1.1/classes, /1.1/users, /1.1/installations or /1.1/files path without a query string.' };
  for (const path of [
    '/1.1/classes/../push',
    '/1.1/classes/%2e%2e/push',
    '/1.1/classes/.%2E/batch',
    '/1.1/users/..\\..\\health',
    '/1.1/installations/../../1.1/settings',
    '/1.1/classes/Body?where={}',
  ]) {
    const res = await server.client.post('/1.1/batch', { requests: [{ method: 'POST', path, body: { alert: 'x', data: {} } }] });
    assert.equal(res.status, 400, `${path}: ${res.text}`);
    assert.deepEqual(res.body, refused, path);
  }
  // Spellings of an allowed path still work, and reach that path.
  for (const path of ['//1.1/classes/Body', '/1.1/classes/./Body', '/1.1\\classes\\Body', '/1.1/users/../classes/Body']) {
    const res = await server.client.post('/1.1/batch', { requests: [{ method: 'POST', path, body: { via: path } }] });
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    assert.ok(res.body[0].success?.objectId, `${path}: ${res.text}`);
  }
});

test('headers over 64 KiB answer 431 {code, error}; a 50 KB URL is served', async () => {
  const res = await fetch(`${server.url}/1.1/classes/Body`, { headers: { 'X-Padding': 'x'.repeat(65 * 1024) } });
  assert.equal(res.status, 431);
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.deepEqual(await res.json(), { code: 431, error: 'Request header fields too large.' });
  const where = JSON.stringify({ objectId: { $in: Array.from({ length: 1500 }, (_, i) => `${i}`.padStart(24, '0')) } });
  assert.equal((await server.client.get('/1.1/classes/Body', { query: { where } })).status, 200);
});

test('OPTIONS: a malformed preflight is {code, error} JSON; a real one gets the CORS headers', async () => {
  for (const headers of [{}, { Origin: 'https://app.example' }] as Array<Record<string, string>>) {
    const res = await fetch(`${server.url}/1.1/classes/Body`, { method: 'OPTIONS', headers });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(await res.json(), { code: 1, error: 'A preflight request needs Origin and Access-Control-Request-Method headers.' });
  }
  const res = await fetch(`${server.url}/1.1/classes/Body`, {
    method: 'OPTIONS',
    headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'X-LC-Id' },
  });
  assert.equal(res.status, 204);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  assert.match(res.headers.get('access-control-allow-methods') ?? '', /PUT/);
});

test('sockets that send nothing, stop mid-headers, stop mid-body or idle after a response are closed in time (Review of e2b2d15: never closed)', async () => {
  const auth = `X-LC-Id: ${server.appId}\r\nX-LC-Key: ${server.appKey}\r\n`;
  const [silent, halfHeaders, halfBody, idle] = await Promise.all([
    rawExchange('', 6000),
    rawExchange('GET /1.1/date HTTP/1.1\r\nHost: x\r\n', 6000),
    rawExchange(`POST /1.1/classes/Body HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`, 6000),
    rawExchange(`GET /1.1/date HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 6000),
  ]);
  // HEADERS_TIMEOUT_MS=1000 and REQUEST_TIMEOUT_MS=1500, checked every second; KEEP_ALIVE_TIMEOUT_MS=1000
  // (with room for a busy machine; e2b2d15 kept all four open).
  for (const [label, result, within] of [
    ['silent', silent, 3500],
    ['half headers', halfHeaders, 3500],
    ['half body', halfBody, 4000],
    ['idle keep-alive', idle, 3500],
  ] as const) {
    assert.ok(result.closedAfterMs !== null && result.closedAfterMs <= within, `${label}: closed after ${result.closedAfterMs} ms`);
  }
  for (const result of [silent, halfHeaders, halfBody]) {
    assert.match(result.text, /^HTTP\/1\.1 408 /);
    assert.ok(result.text.endsWith('{"code":408,"error":"The request did not arrive in time."}'), result.text);
  }
  assert.match(idle.text, /^HTTP\/1\.1 200 /);
});
