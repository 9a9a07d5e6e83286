// A node stopped with SIGTERM (src/main.ts, src/http/drain.ts): it stops listening, finishes the
// request in flight, answers a kept-alive connection with Connection: close rather than a 503,
// closes both push channels' WebSockets with 1001, and exits 0.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import WebSocket from 'ws';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import { spawnRoost, type RoostProcess } from './helpers/processes.ts';
import { Client } from './helpers/client.ts';
import { LcDevice } from './helpers/lc-device.ts';
import { command } from '../src/push/connection/messages.ts';

let database: TestDatabase | undefined;
let node: RoostProcess | undefined;
after(async () => {
  await node?.stop('SIGKILL');
  await database?.drop();
});

/** POST /1.1/classes/Slow with its JSON body sent in pieces over `ms`: a request that stays in flight. */
function slowPost(url: string, headers: Record<string, string>, ms: number): { sent: Promise<void>; answer: Promise<{ status: number; connection: string | undefined; body: any }> } {
  const body = Buffer.from(JSON.stringify({ title: 'in flight', padding: 'x'.repeat(4000) }));
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const answer = new Promise<{ status: number; connection: string | undefined; body: any }>((resolve, reject) => {
    const request = http.request(`${url}/1.1/classes/Slow`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
      agent: new http.Agent({ keepAlive: true }),
    });
    request.on('response', (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection, body: JSON.parse(text) }));
    });
    request.on('error', reject);
    // In flight once Roost has taken the connection: one still in the kernel's backlog is reset at close.
    request.on('socket', (socket) => socket.once('connect', () => setTimeout(markSent, 200)));
    const pieces = 10;
    const size = Math.ceil(body.length / pieces);
    let k = 0;
    const next = () => {
      request.write(body.subarray(k * size, (k + 1) * size));
      k += 1;
      if (k < pieces) setTimeout(next, ms / pieces);
      else request.end();
    };
    next();
  });
  return { sent, answer };
}

function refused(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}

function exitCode(child: RoostProcess['child']): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

test('SIGTERM: the request in flight ends 200/201, new connections are refused, push sockets get 1001, exit 0', { timeout: 90_000 }, async () => {
  database = await testDatabase();
  node = await spawnRoost({ ...database.env, SHUTDOWN_GRACE_MS: '4000' });
  const keys = node.defaultKeys!;
  const port = Number(new URL(node.url).port);
  const client = new Client({ url: node.url, appId: keys.appId, appKey: keys.appKey });

  // A LeanCloud SDK device, logged in, and a device on Roost's own channel.
  assert.equal((await client.post('/1.1/installations', { installationId: 'drain-lc', deviceType: 'android' })).status, 201);
  const device = await LcDevice.open(`${node.url.replace('http', 'ws')}/v1/push/connection`);
  device.login(keys.appId, 'drain-lc');
  await device.frame(command.loggedin);
  const own = new WebSocket(`${node.url.replace('http', 'ws')}/1.1/push/channel`);
  await new Promise((resolve, reject) => own.once('open', resolve).once('error', reject));
  const ownClosed = new Promise<number>((resolve) => own.once('close', (code) => resolve(code)));

  // A kept-alive connection, idle when the stop begins.
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const live = (path: string) =>
    new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      http.get(`${node!.url}${path}`, { agent: keepAlive }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection }));
      }).on('error', reject);
    });
  assert.deepEqual(await live('/health/live'), { status: 200, connection: 'keep-alive' });

  const headers = client.authHeaders();
  const slow = slowPost(node.url, headers, 1500);
  await slow.sent;
  const stopping = new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (node!.lines.some((line) => line.includes('shutting down'))) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  node.child.kill('SIGTERM');
  await stopping;

  assert.equal(await refused(port), 'ECONNREFUSED');
  assert.equal(await device.closed(), 1001);
  assert.equal(await ownClosed, 1001);
  // The kept-alive connection is answered (not a 503) and told to close.
  assert.deepEqual(await live('/health/live'), { status: 200, connection: 'close' });
  const answered = await slow.answer;
  assert.equal(answered.status, 201, JSON.stringify(answered.body));
  assert.equal(answered.connection, 'close');
  assert.equal(await exitCode(node.child), 0);
  // This test's own fetch() kept a connection idle: closed at half the grace, not forced at its end.
  assert.ok(!node.lines.some((line) => line.includes('"forced"')), node.lines.join('\n'));
  assert.ok(node.lines.some((line) => line.includes('"msg":"stopped"')), node.lines.join('\n'));

  // What the node acknowledged is there for the next one.
  const next = await spawnRoost(database.env);
  try {
    const seen = await new Client({ url: next.url, ...keys }).get(`/1.1/classes/Slow/${answered.body.objectId}`);
    assert.equal(seen.body.title, 'in flight');
  } finally {
    await next.stop();
  }
});
