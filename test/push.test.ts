import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { ChannelClient, ChannelError } from '../src/push/channel/client.ts';
import { Client } from './helpers/client.ts';

let server: TestServer;
const clock = new ManualClock(Date.now());
const devices: ChannelClient[] = [];

before(async () => {
  server = await startServer({ clock });
});
after(async () => {
  await Promise.all(devices.map((d) => d.close()));
  await server?.close();
});

async function install(installationId: string, fields: Record<string, unknown> = {}): Promise<string> {
  const response = await server.client.post('/1.1/installations', { installationId, deviceType: 'android', ...fields });
  assert.ok(response.status === 201 || response.status === 200, response.text);
  return response.body.objectId;
}

async function online(installationId: string, options: { autoAck?: boolean } = {}): Promise<ChannelClient> {
  const device = new ChannelClient({ url: server.url, appId: server.appId, appKey: server.appKey, installationId, ...options });
  await device.connect();
  devices.push(device);
  return device;
}

async function push(body: Record<string, unknown>) {
  const response = await server.master.post('/1.1/push', body);
  assert.equal(response.status, 201, response.text);
  assert.deepEqual(Object.keys(response.body).sort(), ['createdAt', 'objectId']);
  return response.body.objectId as string;
}

async function record(objectId: string) {
  await server.services.push.flushAcks();
  const response = await server.master.get(`/1.1/notifications/${objectId}`);
  assert.equal(response.status, 200, response.text);
  return response.body;
}

/** Lets frames already on the wire arrive (nothing is expected: this only gives a wrong delivery its chance). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

test('push needs the master key unless clientPushAllowed, and validates its fields', async () => {
  const denied = await server.client.post('/1.1/push', { data: { alert: 'hi' } });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.code, 403);

  const cases: Array<[unknown, number, number]> = [
    [{}, 400, 113],
    [{ data: 'text' }, 400, 111],
    [{ data: { alert: 'x'.repeat(4100) } }, 413, 413],
    [{ data: { alert: 'hi', mi: { restricted_package_name: 'p'.repeat(129) } } }, 400, 111],
    [{ data: { alert: 'hi' }, channels: ['bad channel'] }, 400, 112],
    [{ data: { alert: 'hi' }, channels: 'news' }, 400, 112],
    [{ data: { alert: 'hi' }, req_id: 'has-dash' }, 400, 111],
    [{ data: { alert: 'hi' }, notification_id: 'x'.repeat(17) }, 400, 111],
    [{ data: { alert: 'hi' }, push_time: 'tomorrow' }, 400, 111],
    [{ data: { alert: 'hi' }, expiration_time: new Date(clock.now() + 60_000).toISOString(), expiration_interval: 60 }, 400, 111],
    [{ data: { alert: 'hi' }, expiration_interval: -5 }, 400, 111],
    [{ data: { alert: 'hi' }, expiration_interval: 1e308 }, 400, 111],
    [{ data: { alert: 'hi' }, where: { n: { $nope: 1 } } }, 400, 102],
    [{ data: { alert: 'hi' }, cql: 'select * from _Installation' }, 400, 102],
    [{ data: { alert: 'hi', silent: 'yes' } }, 400, 111],
  ];
  for (const [body, status, code] of cases) {
    const response = await server.master.post('/1.1/push', body);
    assert.equal(response.status, status, `${JSON.stringify(body).slice(0, 80)} → ${response.text}`);
    assert.equal(response.body.code, code, JSON.stringify(body).slice(0, 80));
  }
  // Exactly 4096 bytes of content is allowed.
  const filler = 'y'.repeat(4096 - JSON.stringify({ alert: '' }).length);
  const atLimit = await server.master.post('/1.1/push', { data: { alert: filler }, where: { installationId: 'nobody' } });
  assert.equal(atLimit.status, 201, atLimit.text);

  await server.master.put('/1.1/settings', { clientPushAllowed: true });
  const allowed = await server.client.post('/1.1/push', { data: { alert: 'hi' }, where: { installationId: 'nobody' } });
  assert.equal(allowed.status, 201, allowed.text);
  await server.master.put('/1.1/settings', { clientPushAllowed: false });
  await server.services.push.drain();
});

test('where and channels select installations; online devices get the message and ack it', async () => {
  await install('sel-1', { channels: ['news', 'sport'] });
  await install('sel-2', { channels: ['sport'] });
  await install('sel-3', { channels: ['news'], city: 'Oslo' });
  const d1 = await online('sel-1');
  const d2 = await online('sel-2');
  const d3 = await online('sel-3');

  const id = await push({ channels: ['news'], data: { alert: 'Hello news', title: 'T', custom: { a: 1 } } });
  await server.services.push.drain();
  await d1.waitForMessages(1);
  await d3.waitForMessages(1);
  await settle();
  assert.equal(d2.messages.length, 0);
  assert.deepEqual(d1.messages[0].data, { alert: 'Hello news', title: 'T', custom: { a: 1 } });
  assert.equal(d1.messages[0].id, id);
  assert.match(d1.messages[0].createdAt, /^\d{4}-\d\d-\d\dT.*Z$/);

  clock.advance(1);
  const byWhere = await push({ where: { city: 'Oslo' }, channels: ['news', 'sport'], data: { alert: 'Oslo only' } });
  await server.services.push.drain();
  await d3.waitForMessages(2);
  await settle();
  assert.equal(d1.messages.length, 1);
  assert.equal(d3.messages[1].id, byWhere);

  const r = await record(id);
  assert.equal(r.status, 'done');
  assert.equal(r.devices, 2);
  assert.equal(r.lcSuccesses, 2);
  assert.equal(r.successes, 2);
  assert.deepEqual(r.routes.lc, { devices: 2, successes: 2, pending: 0 });
  assert.deepEqual(r.channels, ['news']);
  assert.deepEqual(r.data, { alert: 'Hello news', title: 'T', custom: { a: 1 } });

  const list = await server.master.get('/1.1/notifications', { query: { limit: 2 } });
  assert.equal(list.status, 200);
  assert.equal(list.body.results.length, 2);
  assert.equal(list.body.results[0].objectId, byWhere);
  assert.equal((await server.client.get('/1.1/notifications')).status, 403);
  const missing = await server.master.get('/1.1/notifications/doesnotexist');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.code, 101);
});

test('an offline device gets its message on its next login, once', async () => {
  await install('off-1', { channels: ['later'] });
  const id = await push({ channels: ['later'], data: { alert: 'while you were away' } });
  await server.services.push.drain();
  let r = await record(id);
  assert.equal(r.status, 'done');
  assert.deepEqual(r.routes.lc, { devices: 1, successes: 0, pending: 1 });

  const first = await online('off-1', { autoAck: false });
  await first.waitForMessages(1);
  assert.equal(first.messages[0].id, id);
  await first.close();
  // Not acknowledged: it comes again.
  const second = await online('off-1');
  await second.waitForMessages(1);
  await second.close();
  await server.services.push.flushAcks();
  // Acknowledged: it never comes again.
  const third = await online('off-1');
  await settle();
  assert.equal(third.messages.length, 0);
  r = await record(id);
  assert.equal(r.lcSuccesses, 1);
});

// Fuzz finding #7 (issue #13, point 7): on PostgreSQL an ack id with U+0000 failed the batched ack
// write, and every other device's acks of that flush were lost (their messages came again).
test("an ack holding an id no push could have does not lose another device's ack", async () => {
  await install('nul-1', { channels: ['nul'] });
  await install('nul-2', { channels: ['nul'] });
  const bad = await online('nul-1', { autoAck: false });
  const good = await online('nul-2', { autoAck: false });
  const id = await push({ channels: ['nul'], data: { alert: 'once' } });
  await server.services.push.drain();
  await bad.waitForMessages(1);
  await good.waitForMessages(1);
  bad.ack(['a\u0000b', id]);
  good.ack([id]);
  await settle();
  await server.services.push.flushAcks();
  await bad.close();
  await good.close();
  const again = [await online('nul-1'), await online('nul-2')];
  await settle();
  assert.deepEqual(again.map((device) => device.messages.length), [0, 0]);
  assert.equal((await record(id)).lcSuccesses, 2);
});

test('a scheduled push waits for push_time; an expired message is never delivered', async () => {
  await install('sch-1', { channels: ['sched'] });
  const d = await online('sch-1');
  const at = new Date(clock.now() + 3 * 60_000).toISOString();
  const id = await push({ channels: ['sched'], push_time: at, data: { alert: 'later' } });
  assert.equal((await record(id)).status, 'scheduled');
  await server.services.push.drain();
  await settle();
  assert.equal(d.messages.length, 0);
  clock.advance(3 * 60_000 + 1);
  await server.services.push.drain();
  await d.waitForMessages(1);
  assert.equal((await record(id)).status, 'done');

  await install('exp-1', { channels: ['exp'] });
  const expiring = await push({ channels: ['exp'], expiration_interval: 60, data: { alert: 'soon stale' } });
  await server.services.push.drain();
  clock.advance(61_000);
  const late = await online('exp-1');
  await settle();
  assert.equal(late.messages.length, 0);
  const expired = await record(expiring);
  assert.equal(Date.parse(expired.expiration_time) - Date.parse(expired.createdAt), 60_000);

  // A scheduled push whose expiry passes before its time comes is closed as expired.
  const never = await push({
    channels: ['exp'],
    push_time: new Date(clock.now() + 2 * 60_000).toISOString(),
    expiration_interval: 30,
    data: { alert: 'never' },
  });
  clock.advance(3 * 60_000);
  await server.services.push.drain();
  assert.equal((await record(never)).status, 'expired');
  await settle();
  assert.equal(late.messages.length, 0);
});

test('a req_id repeated within 5 minutes is not sent again', async () => {
  await install('dup-1', { channels: ['dup'] });
  const d = await online('dup-1');
  const first = await server.master.post('/1.1/push', { channels: ['dup'], req_id: 'abc123', data: { alert: 'once' } });
  assert.equal(first.status, 201);
  const repeat = await server.master.post('/1.1/push', { channels: ['dup'], req_id: 'abc123', data: { alert: 'once' } });
  assert.equal(repeat.status, 200);
  assert.deepEqual(repeat.body, first.body);
  await server.services.push.drain();
  await d.waitForMessages(1);
  clock.advance(5 * 60_000 + 1);
  const later = await server.master.post('/1.1/push', { channels: ['dup'], req_id: 'abc123', data: { alert: 'again' } });
  assert.equal(later.status, 201);
  assert.notEqual(later.body.objectId, first.body.objectId);
  await server.services.push.drain();
  await d.waitForMessages(2);
  await settle();
  assert.equal(d.messages.length, 2);
  clock.set(Date.now());
});

test('channel login errors', async () => {
  const bad = new ChannelClient({ url: server.url, appId: server.appId, appKey: 'wrong-key', installationId: 'x' });
  await assert.rejects(bad.connect(), (error: ChannelError) => error.code === 401);
  const unknown = new ChannelClient({ url: server.url, appId: 'no-such-app', appKey: server.appKey, installationId: 'x' });
  await assert.rejects(unknown.connect(), (error: ChannelError) => error.code === 401);
  const empty = new ChannelClient({ url: server.url, appId: server.appId, appKey: server.appKey, installationId: '' });
  await assert.rejects(empty.connect(), (error: ChannelError) => error.code === 113);

  // A bad frame after login is answered with an error and the connection stays usable.
  await install('frames-1', { channels: ['frames'] });
  const device = await online('frames-1');
  device.send('not json');
  device.send({ op: 'dance' });
  device.send({ op: 'ack', ids: 'x' });
  await settle();
  assert.deepEqual(device.errors.map((e) => e.code), [107, 107, 107]);
  assert.ok(device.open);
  await push({ channels: ['frames'], data: { alert: 'still here' } });
  await server.services.push.drain();
  await device.waitForMessages(1);
});

test('a second login of the same installation replaces the first connection', async () => {
  await install('twice-1', { channels: ['twice'] });
  const first = await online('twice-1');
  const second = await online('twice-1');
  await settle();
  assert.equal(first.open, false);
  await push({ channels: ['twice'], data: { alert: 'latest only' } });
  await server.services.push.drain();
  await second.waitForMessages(1);
  assert.equal(first.messages.length, 0);
});

test('a page whose worker died after claiming it, before routing it, is routed and delivered by another after its lease', async () => {
  await install('lost-1', { channels: ['lost'] });
  await install('lost-2', { channels: ['lost'] });
  const device = await online('lost-1');
  const id = await push({ channels: ['lost'], data: { alert: 'after the lease' } });
  // A worker claims the job's one page (every installation of the app) and dies before routing it.
  const claimed = await server.store.push.claimPage({ now: clock.now(), pageSize: 5000, leaseMs: 30_000 });
  assert.equal(claimed?.kind, 'page');
  await server.services.push.drain();
  await settle();
  assert.equal(device.messages.length, 0);
  assert.equal((await record(id)).status, 'sending');

  clock.advance(30_001);
  await server.services.push.drain();
  await device.waitForMessages(1);
  await settle();
  const r = await record(id);
  assert.equal(r.status, 'done');
  assert.deepEqual(r.routes.lc, { devices: 2, successes: 1, pending: 1 });
  assert.deepEqual(device.messages.map((m) => m.id), [id]);
});

test('pushes skip installations not updated for more than 90 days; saving the installation again brings it back', async () => {
  const day = 24 * 3600 * 1000;
  // Requests are signed with the server's clock, which moves three months ahead here.
  class Clocked extends Client {
    override signature(): string {
      return super.signature(clock.now());
    }
  }
  const keys = { url: server.url, appId: server.appId, appKey: server.appKey };
  const client = new Clocked(keys);
  const master = new Clocked({ ...keys, masterKey: server.masterKey });
  const save = async (installationId: string, objectId = '') => {
    const saved = objectId
      ? await client.put(`/1.1/installations/${objectId}`, { badge: 0 })
      : await client.post('/1.1/installations', { installationId, deviceType: 'android', channels: ['idle'] });
    assert.equal(saved.status, objectId ? 200 : 201, saved.text);
    return saved.body.objectId as string;
  };
  const pushed = async (alert: string) => {
    const response = await master.post('/1.1/push', { channels: ['idle'], data: { alert } });
    assert.equal(response.status, 201, response.text);
    await server.services.push.drain();
    const found = await master.get(`/1.1/notifications/${response.body.objectId}`);
    assert.equal(found.status, 200, found.text);
    return found.body;
  };

  const idle = await save('idle-1');
  clock.advance(60 * day);
  await save('idle-2');
  clock.advance(30 * day + 1); // idle-1 was last saved 90 days and 1 ms ago, idle-2 30 days ago
  const first = await pushed('recent devices only');
  assert.equal(first.devices, 1);
  assert.deepEqual(first.routes.lc, { devices: 1, successes: 0, pending: 1 });

  // The SDK saves the installation when the app opens: that makes it a push target again.
  await save('idle-1', idle);
  const second = await pushed('both');
  assert.equal(second.devices, 2);

  // Back to real time so the devices' login signatures are accepted: each mailbox holds what it was sent.
  clock.set(Date.now());
  const [d1, d2] = [await online('idle-1'), await online('idle-2')];
  await d1.waitForMessages(1);
  await d2.waitForMessages(2);
  await settle();
  assert.deepEqual(d1.messages.map((m) => m.id), [second.objectId]);
  assert.deepEqual(d2.messages.map((m) => m.id).sort(), [first.objectId, second.objectId].sort());
});
