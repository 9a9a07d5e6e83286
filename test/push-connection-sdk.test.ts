import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { RoostProcess } from './helpers/processes.ts';
import { startNodePair, type NodePair } from './helpers/cluster.ts';
import { Client } from './helpers/client.ts';
import { realtimeDevice, type RealtimeDevice } from './helpers/lc-realtime-device.ts';

/**
 * LeanCloud's push connection end to end with the npm leancloud-realtime SDK as the device, two Roost
 * processes on one database and one Redis: the device asks node B's router, connects to B and logs
 * in; pushes are accepted by node A and relayed; acks are counted; an offline device gets its message
 * after reconnecting; an unacknowledged message comes again with its id and is not duplicated.
 */
let pair: NodePair;
let a: RoostProcess;
let b: RoostProcess;
let keys: NodePair['keys'];
const devices: RealtimeDevice[] = [];
const env = { REDIS_URL: 'redis://127.0.0.1:6379', LOG_LEVEL: 'warn' };

before(async () => {
  pair = await startNodePair(env);
  ({ a, b, keys } = pair);
});
after(async () => {
  await Promise.all(devices.map((d) => d.close()));
  await pair?.stop();
});

const master = (node: RoostProcess) => new Client({ url: node.url, ...keys });

async function install(installationId: string, channels: string[] = []): Promise<void> {
  const created = await new Client({ url: a.url, appId: keys.appId, appKey: keys.appKey }).post('/1.1/installations', { installationId, deviceType: 'android', channels });
  assert.equal(created.status, 201, created.text);
}

async function connect(installationId: string, ack = true): Promise<RealtimeDevice> {
  const device = await realtimeDevice({ server: b.url, appId: keys.appId, appKey: keys.appKey, installationId, ack });
  devices.push(device);
  return device;
}

async function push(body: Record<string, unknown>): Promise<string> {
  const pushed = await master(a).post('/1.1/push', body);
  assert.equal(pushed.status, 201, pushed.text);
  return pushed.body.objectId;
}

/** The record's lcSuccesses once it reaches n, or as it is after waitMs. */
async function successes(id: string, n: number, waitMs = 10_000): Promise<number> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const r = (await master(a).get(`/1.1/notifications/${id}`)).body;
    if ((r.lcSuccesses ?? 0) >= n || Date.now() > deadline) return r.lcSuccesses ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

test('the SDK routes to node B, speaks lc.protobuf2.3, logs in; a push accepted by node A arrives and its ack is counted', async () => {
  await install('sdk-1', ['news']);
  const device = await connect('sdk-1');
  const wsB = `${b.url.replace('http', 'ws')}/v1/push/connection`;
  assert.deepEqual(device.route, { groupId: 'g0', server: wsB, secondary: wsB, ttl: 3600 });
  assert.equal(device.protocol, 'lc.protobuf2.3');

  const id = await push({ channels: ['news'], data: { alert: 'from node A', action: 'com.example.UPDATE' } });
  await device.waitFor(1);
  assert.deepEqual(device.received, [{ id, data: { alert: 'from node A', action: 'com.example.UPDATE', _channel: 'news' } }]);
  assert.equal(await successes(id, 1), 1);
});

test('an offline device gets its message after it reconnects; an unacknowledged one comes again with its id, once', async () => {
  await install('sdk-2');
  const first = await connect('sdk-2');
  await first.close();
  const id = await push({ where: { installationId: 'sdk-2' }, data: { alert: 'while offline' } });
  await settle();

  const noAck = await connect('sdk-2', false);
  await noAck.waitFor(1);
  assert.equal(noAck.received[0].id, id);
  await noAck.close();
  assert.equal(await successes(id, 1, 500), 0);

  const again = await connect('sdk-2');
  await again.waitFor(1);
  assert.deepEqual(again.received.map((m) => m.id), [id], 'the resend carries the same id');
  assert.equal(await successes(id, 1), 1);
  await again.close();

  const later = await connect('sdk-2');
  await settle();
  assert.deepEqual(later.received, [], 'an acknowledged message is not sent again');
  assert.equal(await successes(id, 2, 500), 1, 'counted once');
});
