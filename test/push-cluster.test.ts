import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import type { TestDatabase } from './helpers/harness.ts';
import type { RoostProcess } from './helpers/processes.ts';
import { startNodePair, type NodePair } from './helpers/cluster.ts';
import { Client } from './helpers/client.ts';
import { fanOutProgress, mailboxRows, seedInstallations } from './helpers/seed-installations.ts';
import { ChannelClient } from '../src/push/channel/client.ts';

/**
 * Several Roost processes on one database and one Redis: a push accepted by one node reaches a
 * device held by another, two nodes share a job with each device served once, and a node killed
 * in the middle of a 20,000-device job loses nothing.
 */
let pair: NodePair;
let database: TestDatabase;
let a: RoostProcess;
let b: RoostProcess;
let keys: NodePair['keys'];
const devices: ChannelClient[] = [];
const env = { REDIS_URL: 'redis://127.0.0.1:6379', PUSH_PAGE_SIZE: '250', PUSH_LEASE_MS: '1500', LOG_LEVEL: 'warn' };

before(async () => {
  pair = await startNodePair(env);
  ({ database, a, b, keys } = pair);
});
after(async () => {
  await Promise.all(devices.map((d) => d.close()));
  await pair?.stop();
});

const master = (node: RoostProcess) => new Client({ url: node.url, ...keys });

async function connectAll(node: RoostProcess, ids: string[]): Promise<ChannelClient[]> {
  const out: ChannelClient[] = [];
  for (let i = 0; i < ids.length; i += 250) {
    const batch = ids.slice(i, i + 250).map((installationId) => new ChannelClient({ url: node.url, appId: keys.appId, appKey: keys.appKey, installationId }));
    await Promise.all(batch.map((d) => d.connect()));
    out.push(...batch);
  }
  devices.push(...out);
  return out;
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

async function record(node: RoostProcess, id: string) {
  return (await master(node).get(`/1.1/notifications/${id}`)).body;
}

function assertOnce(list: ChannelClient[], id: string) {
  const wrong = list.filter((d) => d.messages.length !== 1 || d.received.get(id) !== 1);
  assert.equal(wrong.length, 0, `${wrong.length} devices got the message not exactly once, e.g. ${wrong[0]?.options.installationId}: ${wrong[0]?.messages.length}`);
}

test('two nodes with Redis: a device on node B gets a push accepted by node A', async () => {
  const created = await new Client({ url: a.url, appId: keys.appId, appKey: keys.appKey }).post('/1.1/installations', {
    installationId: 'relay-1',
    channels: ['relay'],
  });
  assert.equal(created.status, 201, created.text);
  const [device] = await connectAll(b, ['relay-1']);
  const pushed = await master(a).post('/1.1/push', { channels: ['relay'], data: { alert: 'via redis' } });
  assert.equal(pushed.status, 201, pushed.text);
  await device.waitForMessages(1, 10_000);
  assert.deepEqual(device.messages[0].data, { alert: 'via redis' });
  await waitFor('done', async () => (await record(b, pushed.body.objectId)).status === 'done');
});

test('two processes work one job; each device gets the message exactly once', async () => {
  await seedInstallations({ env: database.env, appId: keys.appId, count: 2000, prefix: 'two-', channel: 'two' });
  const ids = Array.from({ length: 2000 }, (_, i) => `two-${i}`);
  const onA = await connectAll(a, ids.filter((_, i) => i % 2 === 0));
  const onB = await connectAll(b, ids.filter((_, i) => i % 2 === 1));
  const pushed = await master(a).post('/1.1/push', { channels: ['two'], data: { alert: 'shared job' } });
  assert.equal(pushed.status, 201);
  const id = pushed.body.objectId;
  await Promise.all([...onA, ...onB].map((d) => d.waitForMessages(1, 20_000)));
  const done = await waitFor('done', async () => {
    const r = await record(a, id);
    return r.status === 'done' && r.lcSuccesses === 2000 ? r : null;
  });
  assert.equal(done.devices, 2000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assertOnce([...onA, ...onB], id);
  // Acknowledged messages leave the mailbox; nothing is left waiting.
  assert.deepEqual(await mailboxRows(database.env, keys.appId, id), { rows: 0, devices: 0 });
});

test('a process killed mid 20,000-device job: the other completes it, every device once', async () => {
  const count = 20_000;
  await seedInstallations({ env: database.env, appId: keys.appId, count, prefix: 'big-', channel: 'big' });
  // Every tenth device is online on B (the survivor); others log in afterwards.
  const online = await connectAll(b, Array.from({ length: count / 10 }, (_, i) => `big-${i * 10}`));
  const pushed = await master(a).post('/1.1/push', { channels: ['big'], data: { alert: 'survive' } });
  assert.equal(pushed.status, 201);
  const id = pushed.body.objectId;
  // The job's progress is read from the database, not from B: B's answers queue behind its
  // deliveries, and a reply that comes late may report a job that has finished since (CI saw it).
  const before = await waitFor('the job under way', async () => {
    const progress = await fanOutProgress(database.env, keys.appId, id);
    return progress && progress.pagesDone >= 1 ? progress : null;
  }, 20_000, 2);
  a.child.kill('SIGKILL');
  await a.stop();
  assert.notEqual(before.status, 'done', 'the kill should land in the middle of the job');
  assert.ok(before.pagesOpen > 0 || before.pagesDone < count / 250, `pages left when A died: ${JSON.stringify(before)}`);

  await Promise.all(online.map((d) => d.waitForMessages(1, 30_000)));
  const done = await waitFor('done', async () => {
    const r = await record(b, id);
    return r.status === 'done' ? r : null;
  }, 30_000);
  assert.equal(done.devices, count);
  assert.equal(done.routes.lc.devices, count);
  // Once the online devices' acknowledgements are stored, exactly the offline devices' messages wait.
  await waitFor('acks stored', async () => (await record(b, id)).lcSuccesses === online.length);
  const waiting = count - online.length;
  assert.deepEqual(await mailboxRows(database.env, keys.appId, id), { rows: waiting, devices: waiting });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assertOnce(online, id);

  const late = await connectAll(b, Array.from({ length: 300 }, (_, i) => `big-${i * 10 + 1}`));
  await Promise.all(late.map((d) => d.waitForMessages(1, 10_000)));
  await new Promise((resolve) => setTimeout(resolve, 200));
  assertOnce(late, id);
});
