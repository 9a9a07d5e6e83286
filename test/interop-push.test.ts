// Unchanged clients (issue #15, point 7): the official JavaScript SDK's AV.Push.send with an
// AV.Query over _Installation as `where` (the SDK sends the query's where object as it builds it for
// a find) reaches exactly the devices the query selects, for the operators the SDK's query methods
// produce, immediately and with push_time.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { initSdk } from './helpers/sdk.ts';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { ChannelClient } from '../src/push/channel/client.ts';

const clock = new ManualClock(Date.now());
let server: TestServer;
let userId = '';
const devices = new Map<string, ChannelClient>();

before(async () => {
  server = await startServer({ clock });
  initSdk(server);
  const signup = await server.master.post('/1.1/users', { username: 'ip-ann', password: 'secret-1' });
  assert.equal(signup.status, 201, signup.text);
  userId = signup.body.objectId;
  const installs: Array<[string, Record<string, unknown>]> = [
    ['ip-1', { deviceType: 'ios', channels: ['a'], city: 'Oslo', age: 30, user: { __type: 'Pointer', className: '_User', objectId: userId } }],
    ['ip-2', { deviceType: 'android', channels: ['a', 'b'], city: 'Bergen', age: 20 }],
    ['ip-3', { deviceType: 'android', channels: ['b'], age: 40 }],
  ];
  for (const [installationId, fields] of installs) {
    const response = await server.master.post('/1.1/installations', { installationId, ...fields });
    assert.equal(response.status, 201, response.text);
    const device = new ChannelClient({ url: server.url, appId: server.appId, appKey: server.appKey, installationId });
    await device.connect();
    devices.set(installationId, device);
  }
});
after(async () => {
  await Promise.all([...devices.values()].map((d) => d.close()));
  await server?.close();
});

const installations = () => new AV.Query('_Installation');

/** Runs the fan-out; answers the installationIds whose device got the push. */
async function reached(notificationId: string): Promise<string[]> {
  await server.services.push.drain();
  const record = await server.master.get(`/1.1/notifications/${notificationId}`);
  assert.equal(record.status, 200, record.text);
  const receivers = () => [...devices].filter(([, d]) => d.received.has(notificationId)).map(([name]) => name);
  const until = Date.now() + 5000;
  while (receivers().length < record.body.routes.lc.devices && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await new Promise((resolve) => setTimeout(resolve, 100));
  return receivers().sort();
}

async function send(data: Record<string, unknown>): Promise<string> {
  const answer = (await AV.Push.send({ data: { alert: 'hi' }, ...data } as never, { useMasterKey: true })) as { objectId: string };
  assert.match(answer.objectId, /^[0-9a-zA-Z]+$/);
  return answer.objectId;
}

test('AV.Push.send with an AV.Query: the operators the SDK builds select the devices', async () => {
  const user = AV.Object.createWithoutData('_User', userId);
  const cases: Array<[ReturnType<typeof installations>, string[]]> = [
    [installations().containedIn('channels', ['b']), ['ip-2', 'ip-3']],
    [installations().notEqualTo('deviceType', 'ios'), ['ip-2', 'ip-3']],
    [installations().notContainedIn('city', ['Oslo']), ['ip-2', 'ip-3']],
    [installations().exists('city'), ['ip-1', 'ip-2']],
    [installations().doesNotExist('city'), ['ip-3']],
    [AV.Query.or(installations().equalTo('city', 'Oslo'), installations().greaterThanOrEqualTo('age', 40)), ['ip-1', 'ip-3']],
    [AV.Query.and(installations().containedIn('deviceType', ['android']), installations().lessThan('age', 30)), ['ip-2']],
    [installations().equalTo('user', user), ['ip-1']],
    [installations().matches('city', /^ber/i), ['ip-2']],
    [installations().containsAll('channels', ['a', 'b']), ['ip-2']],
  ];
  for (const [query, expected] of cases) {
    const where = JSON.stringify((query as unknown as { _where: unknown })._where);
    assert.deepEqual(await reached(await send({ where: query })), expected, where);
  }
});

test('AV.Push.send with channels, a query and push_time: sent when the time comes', async () => {
  const id = await send({ channels: ['a'], where: installations().notEqualTo('city', 'Oslo'), push_time: new Date(clock.now() + 3 * 60_000) });
  await server.services.push.drain();
  assert.equal(devices.get('ip-2')!.received.has(id), false);
  clock.advance(4 * 60_000);
  assert.deepEqual(await reached(id), ['ip-2']);
});
