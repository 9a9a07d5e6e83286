import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { startServer, type TestServer } from './helpers/harness.ts';
import { LcDevice } from './helpers/lc-device.ts';
import { command, encodeCommand } from '../src/push/connection/messages.ts';
import { simulateDevices } from '../src/push/channel/simulate.ts';

/**
 * LeanCloud's push connection (docs/push-connection.md): the router, the subprotocol, login, data,
 * ack, offline messages, IM and LiveQuery refused, malformed frames. The device is test/helpers/lc-device.ts;
 * test/push-connection-sdk.test.ts drives the npm leancloud-realtime SDK instead.
 */
let server: TestServer;
let wsUrl: string;
const devices: LcDevice[] = [];

before(async () => {
  server = await startServer();
  wsUrl = `${server.url.replace('http', 'ws')}/v1/push/connection`;
});
after(async () => {
  for (const d of devices) d.close();
  await server?.close();
});

async function install(installationId: string, fields: Record<string, unknown> = {}): Promise<void> {
  const response = await server.client.post('/1.1/installations', { installationId, deviceType: 'android', ...fields });
  assert.ok(response.status === 201 || response.status === 200, response.text);
}

async function device(protocols?: string[]): Promise<LcDevice> {
  const d = await LcDevice.open(wsUrl, protocols);
  devices.push(d);
  return d;
}

async function online(installationId: string): Promise<LcDevice> {
  const d = await device();
  d.login(server.appId, installationId);
  await d.frame(command.loggedin);
  return d;
}

async function push(body: Record<string, unknown>): Promise<string> {
  const response = await server.master.post('/1.1/push', body);
  assert.equal(response.status, 201, response.text);
  await server.services.push.drain();
  return response.body.objectId as string;
}

async function record(objectId: string) {
  await server.services.push.flushAcks();
  return (await server.master.get(`/1.1/notifications/${objectId}`)).body;
}

/** The record once its acknowledged count reaches `n` (an ack is on the wire when the push arrives). */
async function acked(objectId: string, n: number) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const r = await record(objectId);
    if ((r.lcSuccesses ?? 0) >= n || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

test('GET /v1/route needs no key and answers where to connect; an unknown appId is refused', async () => {
  const url = `${server.url}/v1/route?appId=${server.appId}&installationId=i-1&secure=1`;
  const response = await fetch(url);
  assert.equal(response.status, 200);
  const port = new URL(server.url).port;
  const expected = `ws://127.0.0.1:${port}/v1/push/connection`;
  assert.deepEqual(await response.json(), { groupId: 'g0', server: expected, secondary: expected, ttl: 3600 });

  // Behind a TLS proxy the forwarded scheme and host are what the device reaches.
  const proxied = await fetch(url, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'push.example.com' } });
  assert.equal((await proxied.json()).server, 'wss://push.example.com/v1/push/connection');

  const unknown = await fetch(`${server.url}/v1/route?appId=nosuchapp&installationId=i-1&secure=1`);
  assert.equal(unknown.status, 401);
  assert.deepEqual(await unknown.json(), { code: 401, error: 'Unauthorized.' });
  const missing = await fetch(`${server.url}/v1/route?secure=1`);
  assert.equal(missing.status, 400);
  assert.deepEqual(await missing.json(), { code: 113, error: 'appId is required.' });
});

test('PUSH_CONNECTION_URL is the address the router gives', async () => {
  const other = await startServer({ env: { PUSH_CONNECTION_URL: 'wss://rtm.example.com/v1/push/connection' } });
  try {
    const body = await (await fetch(`${other.url}/v1/route?appId=${other.appId}&secure=1`)).json();
    assert.equal(body.server, 'wss://rtm.example.com/v1/push/connection');
    assert.equal(body.secondary, body.server);
  } finally {
    await other.close();
  }
});

test('the subprotocol lc.protobuf2.3 is chosen, lc.protobuf2.1 for older clients', async () => {
  assert.equal((await device(['lc.protobuf2.3'])).socket.protocol, 'lc.protobuf2.3');
  assert.equal((await device(['lc.protobuf2.1', 'lc.protobuf2.3'])).socket.protocol, 'lc.protobuf2.3');
  assert.equal((await device(['lc.protobuf2.1'])).socket.protocol, 'lc.protobuf2.1');
  assert.equal((await device([])).socket.protocol, '');
});

test('login → loggedin (service 0, pushDisabled false); a push arrives as data with _channel and _expiration_time; the ack counts', async () => {
  await install('lc-a', { channels: ['news'] });
  const d = await device();
  d.login(server.appId, 'lc-a');
  const loggedin = await d.frame(command.loggedin);
  assert.deepEqual(loggedin, { cmd: command.loggedin, service: 0, loggedinMessage: { pushDisabled: false } });

  const expires = new Date(Date.now() + 3_600_000).toISOString();
  const id = await push({ channels: ['news'], data: { alert: 'hello', title: 'T', custom: 1 }, expiration_time: expires });
  await d.until('the push', () => d.pushes.length === 1);
  const data = d.frames.find((f) => f.cmd === command.data)!;
  assert.deepEqual(data, { cmd: command.data, dataMessage: { ids: [id], msg: [{ data: data.dataMessage!.msg![0].data }] } });
  assert.deepEqual(d.pushes[0], { id, data: { alert: 'hello', title: 'T', custom: 1, _channel: 'news', _expiration_time: expires } });
  assert.equal((await acked(id, 1)).lcSuccesses, 1);

  // Without channels or expiry neither key is added.
  const plain = await push({ where: { installationId: 'lc-a' }, data: { alert: 'plain' } });
  await d.until('the second push', () => d.pushes.length === 2);
  assert.deepEqual(d.pushes[1], { id: plain, data: { alert: 'plain' } });
});

test('an offline device gets its messages after it logs in; an unacknowledged one comes again with the same id, once per connection', async () => {
  await install('lc-off');
  const first = await push({ where: { installationId: 'lc-off' }, data: { alert: 'while away' } });
  const d = await device();
  d.autoAck = false;
  d.login(server.appId, 'lc-off');
  await d.until('the waiting push', () => d.pushes.length === 1);
  assert.equal(d.pushes[0].id, first);
  // A second login frame on the same socket is confirmed but sends nothing twice.
  d.login(server.appId, 'lc-off');
  await settle();
  assert.equal(d.pushes.length, 1);
  assert.equal((await record(first)).lcSuccesses ?? 0, 0);
  d.close();

  const again = await device();
  again.login(server.appId, 'lc-off');
  await again.until('the resend', () => again.pushes.length === 1);
  assert.equal(again.pushes[0].id, first, 'a resend carries the same id');
  assert.equal((await acked(first, 1)).lcSuccesses, 1);
  again.close();

  const third = await device();
  third.login(server.appId, 'lc-off');
  await third.frame(command.loggedin);
  await settle();
  assert.equal(third.pushes.length, 0, 'an acknowledged message is not sent again');
});

test('a login naming an unknown app or installation is closed; JS clients get their serial number back', async () => {
  const badApp = await device();
  badApp.login('nosuchapp', 'lc-x');
  assert.equal(await badApp.closed(), 4100);
  const bad = await device();
  bad.send({ cmd: command.login, appId: server.appId });
  assert.equal(await bad.closed(), 4103);

  // Saved just after the login (the SDK saves its installation as it connects): the grace covers it.
  const late = await device();
  late.send({ cmd: command.login, appId: server.appId, installationId: 'lc-late', i: 7 });
  await install('lc-late');
  const loggedin = await late.frame(command.loggedin);
  assert.equal(loggedin.i, 7);
});

test('echo is echoed; IM commands and LiveQuery logins get an error for their serial; malformed frames change nothing', async () => {
  await install('lc-echo');
  const d = await online('lc-echo');
  d.send({ cmd: command.echo, i: 3 });
  assert.deepEqual(await d.frame(command.echo), { cmd: command.echo, i: 3 });
  d.send({ cmd: 0, op: 1, peerId: 'alice', i: 4 });
  d.send({ cmd: command.login, service: 1, installationId: 'sub-1', i: 5 });
  await d.until('two errors', () => d.frames.filter((f) => f.cmd === command.error).length === 2);
  const errors = d.frames.filter((f) => f.cmd === command.error);
  assert.deepEqual(errors[0], { cmd: command.error, i: 4, peerId: 'alice', errorMessage: { code: 4100, reason: 'Roost serves push only: IM and LiveQuery are not available on this connection.' } });
  assert.equal(errors[1].i, 5);
  assert.equal(errors[1].service, 1);

  // Random bytes, truncated frames, a data message missing its required field, text frames, acks of
  // ids no push has: none answers, none closes the socket, and the connection still serves.
  const frames: Array<Buffer | Uint8Array | string> = ['{"op":"login"}', Buffer.alloc(0), Buffer.from([0xff, 0xff, 0xff])];
  for (let k = 0; k < 300; k++) frames.push(randomBytes(1 + (k % 64)));
  const valid = encodeCommand({ cmd: command.ack, ackMessage: { ids: ['\u0000', 'x'.repeat(300), 'nope'] } });
  frames.push(valid, valid.subarray(0, valid.length - 2), Buffer.from([0x8a, 0x06, 0x02, 0x12, 0x00]));
  for (const f of frames) d.socket.send(f);
  const before = d.frames.length;
  d.send({ cmd: command.echo, i: 9 });
  await d.until('the echo after the noise', () => d.frames.some((f) => f.cmd === command.echo && f.i === 9), 10_000);
  assert.equal(d.closeCode, null);
  assert.ok(d.frames.slice(before).every((f) => f.cmd === command.echo || f.cmd === command.error), JSON.stringify(d.frames.slice(before)));
  await server.services.push.flushAcks();
  const health = await fetch(`${server.url}/health`);
  assert.equal(health.status, 200);
});

test('an oversized frame closes only that socket', async () => {
  const d = await device();
  d.socket.send(Buffer.alloc(70 * 1024));
  assert.equal(await d.closed(), 1009);
  const other = await device();
  other.send({ cmd: command.echo, i: 1 });
  await other.frame(command.echo);
});

test('a second connection of the same device replaces the first', async () => {
  await install('lc-twice');
  const first = await online('lc-twice');
  const second = await online('lc-twice');
  assert.equal(await first.closed(), 4002);
  const id = await push({ where: { installationId: 'lc-twice' }, data: { alert: 'latest wins' } });
  await second.until('the push', () => second.pushes.length === 1);
  assert.equal(second.pushes[0].id, id);
});

test('WebSocket upgrades to other paths are refused', async () => {
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/v1/nothing`, ['lc.protobuf2.3']);
  const status = await new Promise<number>((resolve) => socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)).on('error', () => resolve(-1)));
  assert.equal(status, 404);
});

test('a request offering another upgrade (Java HttpClient: h2c) is answered as plain HTTP; with a body it is refused in words', async () => {
  const { connect } = await import('node:net');
  const port = Number(new URL(server.url).port);
  const raw = (request: string) =>
    new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let out = '';
      socket.on('data', (chunk) => (out += chunk));
      socket.on('close', () => resolve(out));
    });
  const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQBAAAAAAIAAAAA\r\n';
  const route = await raw(`GET /v1/route?appId=${server.appId} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${h2c}\r\n`);
  assert.match(route, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(route, /"server":"ws:\/\/127\.0\.0\.1:\d+\/v1\/push\/connection"/);
  const posted = await raw(`POST /1.1/push HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n${h2c}\r\n{}`);
  assert.match(posted, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.ok(posted.includes('{"code":1,"error":"Upgrade to h2c is not supported: send the request without an Upgrade header."}'), posted);
});

test('roost devices simulate --protocol lc: simulated devices log in, receive and acknowledge', async () => {
  for (let k = 0; k < 3; k++) await install(`sim-lc-${k}`, { channels: ['sim'] });
  const events: Array<Record<string, unknown>> = [];
  const simulation = await simulateDevices({ url: server.url, appId: server.appId, appKey: server.appKey, count: 3, prefix: 'sim-lc-', start: 0, concurrency: 2, protocol: 'lc', emit: (e) => events.push(e) });
  try {
    assert.equal(events[0].event, 'connected');
    assert.equal(events[0].devices, 3);
    const id = await push({ channels: ['sim'], data: { alert: 'simulated' } });
    const deadline = Date.now() + 5000;
    while (!events.some((e) => e.event === 'received' && e.id === id) && Date.now() < deadline) await settle();
    assert.ok(events.some((e) => e.event === 'received' && e.id === id && e.devices === 3), JSON.stringify(events));
    assert.equal((await acked(id, 3)).lcSuccesses, 3);
  } finally {
    await simulation.close();
  }
});

test('SPEC §4.3 rule 1 holds: with mixed push on, a device with a maker token is not sent over this connection; without one it is', async () => {
  await install('lc-maker', { channels: ['rule1'], vendor: 'mi', registrationId: 'token-1' });
  await install('lc-plain', { channels: ['rule1'] });
  const maker = await online('lc-maker');
  const plain = await online('lc-plain');
  const on = await server.master.put('/1.1/settings', { commercial: true, mixedPush: true });
  assert.equal(on.status, 200, on.text);
  try {
    const id = await push({ channels: ['rule1'], data: { alert: 'rule 1' } });
    await plain.until('the push', () => plain.pushes.length === 1);
    assert.equal(plain.pushes[0].id, id);
    await settle();
    assert.equal(maker.pushes.length, 0);
    const r = await record(id);
    assert.equal(r.routes.mi.devices, 1);
    assert.equal(r.routes.lc.devices, 1);
  } finally {
    const off = await server.master.put('/1.1/settings', { mixedPush: false });
    assert.equal(off.status, 200, off.text);
  }
  const id = await push({ channels: ['rule1'], data: { alert: 'mixed push off' } });
  await maker.until('the push once mixed push is off', () => maker.pushes.some((p) => p.id === id));
});

test('a socket silent past the limit is dropped; one that answers pings stays', async () => {
  const { default: Fastify } = await import('fastify');
  const { registerPushConnection } = await import('../src/http/routes/push-connection.ts');
  const app = Fastify();
  registerPushConnection(app, { protocol: server.services.push.lcConnection, appExists: async () => true, url: null, silentLimitMs: 600 });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/push/connection`;
  const open = (autoPong: boolean) =>
    new Promise<WebSocket>((resolve, reject) => {
      const socket = new WebSocket(url, ['lc.protobuf2.3'], { autoPong });
      socket.once('open', () => resolve(socket)).once('error', reject);
    });
  try {
    const silent = await open(false);
    const answering = await open(true);
    const closed = await new Promise<number>((resolve) => silent.once('close', resolve));
    assert.equal(closed, 1006, 'terminated');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.equal(answering.readyState, WebSocket.OPEN, 'pongs keep it');
    answering.terminate();
  } finally {
    await app.close();
  }
});
