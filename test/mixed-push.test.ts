// Mixed push end to end (issue 7): HTTP push → fan-out → the real senders → the six fake makers
// on loopback (their addresses set through PUT /1.1/settings), and the record over HTTP.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, startServer, type TestServer } from './helpers/harness.ts';
import { closeMakers, sentTokens, startMakers, vendorSettings, type Makers } from './helpers/makers.ts';
import { Client } from './helpers/client.ts';
import { nextQuotaDay } from '../src/push/vendors/pauses.ts';
import { vendors } from '../src/push/vendors/types.ts';

const clock = new ManualClock(Date.UTC(2026, 10, 22, 3, 0, 0));
let server: TestServer;
let makers: Makers;
let client: Client;
let master: Client;

/** Signs with the server's manual clock, which moves a day ahead for the quota test. */
class ClockedClient extends Client {
  override signature(): string {
    return super.signature(clock.now());
  }
}

before(async () => {
  makers = await startMakers(() => clock.now());
  server = await startServer({ clock, env: { PUSH_PAGE_SIZE: '10' } });
  client = new ClockedClient({ url: server.url, appId: server.appId, appKey: server.appKey });
  master = new ClockedClient({ url: server.url, appId: server.appId, appKey: server.appKey, masterKey: server.masterKey });
});
after(async () => {
  await server?.close();
  await closeMakers(makers);
});

async function install(installationId: string, fields: Record<string, unknown>): Promise<string> {
  const response = await client.post('/1.1/installations', { installationId, deviceType: 'android', ...fields });
  assert.equal(response.status, 201, response.text);
  return response.body.objectId;
}

async function push(body: Record<string, unknown>) {
  const response = await master.post('/1.1/push', body);
  assert.equal(response.status, 201, response.text);
  await server.services.push.drain();
  const record = await master.get(`/1.1/notifications/${response.body.objectId}`);
  assert.equal(record.status, 200);
  return record.body;
}

const sendCounts = () => Object.fromEntries(vendors.map((v) => [v, makers[v].sends.length]));
const silentMakers = new Set(['HMS', 'mi', 'honor']);

test('switch off: every device uses the own channel and no maker is called', async () => {
  for (const vendor of vendors) await install(`all-${vendor}`, { channels: ['all'], vendor, registrationId: `tok-${vendor}-1` });
  await install('all-plain', { channels: ['all'] });
  await install('all-faulty', { channels: ['all'], registrationId: 'tok-orphan' });
  const r = await push({ channels: ['all'], data: { alert: 'off' } });
  assert.equal(r.devices, 8);
  assert.deepEqual(r.routes, { lc: { devices: 8, successes: 0, pending: 8 } });
  assert.equal(r.faultyIntegrations, 0);
  assert.deepEqual(sendCounts(), { HMS: 0, mi: 0, mz: 0, oppo: 0, vivo: 0, honor: 0 });
});

test('mixed push needs a commercial application', async () => {
  const refused = await master.put('/1.1/settings', { mixedPush: true });
  assert.equal(refused.status, 403);
  assert.deepEqual(refused.body, {
    code: 403,
    error: 'Mixed push is available to commercial applications only: set commercial to true before turning mixedPush on.',
  });
});

test('switch on: each maker gets its devices through its real API; a registrationId without vendor is faulty', async () => {
  const on = await master.put('/1.1/settings', { commercial: true, mixedPush: true, vendors: vendorSettings(makers) });
  assert.equal(on.status, 200, on.text);
  const r = await push({
    channels: ['all'],
    data: { alert: 'Hello', title: 'Roost', orderId: 7 },
    hms: { message: { android: { notification: { foreground_show: false } } } },
  });
  assert.equal(r.status, 'done');
  assert.equal(r.devices, 8);
  assert.deepEqual(r.routes.lc, { devices: 2, successes: 0, pending: 2 });
  for (const vendor of vendors) {
    assert.deepEqual(r.routes[vendor], { devices: 1, successes: 1, failures: 0, invalidTokens: 0, dropped: 0 }, vendor);
    assert.deepEqual(sentTokens(makers[vendor]), [`tok-${vendor}-1`], vendor);
    assert.deepEqual(makers[vendor].violations, [], vendor);
  }
  assert.equal(r.successes, 6);
  assert.equal(r.hmsSuccesses, 1);
  assert.equal(r.meizuSuccesses, 1);
  assert.equal(r.honorSuccesses, 1);
  assert.equal(r.faultyIntegrations, 1);
  assert.equal(r.errors, 1);
  assert.deepEqual(r.errorDetails, { 'registrationId without vendor (faulty client integration)': 1 });
  // The request's hms object reaches HMS (rule 9); the title and body reach every maker.
  const hms = makers.HMS.sends[0].body as any;
  assert.equal(hms.message.android.notification.foreground_show, false);
  assert.equal(hms.message.android.notification.title, 'Roost');
  assert.equal(hms.message.android.notification.body, 'Hello');
});

test('token caching: one auth call per maker for many sends, across pushes and pages', async () => {
  // Interleaved, so each page (in creation order) holds devices of every maker.
  for (let i = 0; i < 25; i++) {
    for (const vendor of vendors) await install(`many-${vendor}-${i}`, { channels: ['many'], vendor, registrationId: `tok-many-${vendor}-${i}` });
  }
  const before = sendCounts();
  for (let run = 0; run < 3; run++) {
    const r = await push({ channels: ['many'], data: { alert: `run ${run}` } });
    assert.equal(r.devices, 150);
    assert.equal(r.successes, 150);
  }
  for (const vendor of vendors) {
    // 150 devices in pages of 10: at least 3 × 150 / 10 maker requests, one token request in all.
    assert.ok(makers[vendor].sends.length - before[vendor] >= 15, `${vendor} sends`);
    assert.equal(makers[vendor].authCalls, ['mi', 'mz'].includes(vendor) ? 0 : 1, `${vendor} auth calls`);
    assert.equal(makers[vendor].rejectedTokens, 0);
  }
});

test('silent: sent to the makers with pass-through (HMS, mi, honor); not sent to OPPO, vivo, mz, error recorded', async () => {
  const before = sendCounts();
  const r = await push({ channels: ['all'], data: { alert: 'quiet', silent: true } });
  for (const vendor of vendors) {
    if (silentMakers.has(vendor)) {
      assert.deepEqual(r.routes[vendor], { devices: 1, successes: 1, failures: 0, invalidTokens: 0, dropped: 0 }, vendor);
      assert.equal(makers[vendor].sends.length, before[vendor] + 1, vendor);
    } else {
      assert.deepEqual(r.routes[vendor], { devices: 1, successes: 0, failures: 0, invalidTokens: 0, dropped: 1 }, vendor);
      assert.equal(makers[vendor].sends.length, before[vendor], vendor);
      assert.equal(r.errorDetails[`${vendor} does not support pass-through (silent) messages; not sent`], 1);
    }
  }
  assert.equal(r.successes, 3);
  assert.equal(r.errors, 4); // three dropped and the faulty integration
});

test('OPPO: notification-bar messages only, sent as a notification with the default click behaviour', async () => {
  const r = await push({ channels: ['all'], data: { alert: 'bar', title: 'OPPO' } });
  assert.equal(r.routes.oppo.successes, 1);
  const body = makers.oppo.sends.at(-1)!.body as any;
  assert.deepEqual(body.messages, [
    {
      target_type: 2,
      target_value: 'tok-oppo-1',
      notification: { title: 'OPPO', content: 'bar', click_action_type: 0, action_parameters: '{}', off_line: true },
    },
  ]);
});

test('invalid tokens: the installation gets valid false and the next push skips it', async () => {
  const bad = { HMS: await install('inv-hms', { channels: ['inv'], vendor: 'HMS', registrationId: 'tok-hms-dead' }),
    oppo: await install('inv-oppo', { channels: ['inv'], vendor: 'oppo', registrationId: 'tok-oppo-dead' }) };
  await install('inv-hms-ok', { channels: ['inv'], vendor: 'HMS', registrationId: 'tok-hms-alive' });
  makers.HMS.invalidTokens.add('tok-hms-dead');
  makers.oppo.invalidTokens.add('tok-oppo-dead');
  const r = await push({ channels: ['inv'], data: { alert: 'inv' } });
  assert.deepEqual(r.routes.HMS, { devices: 2, successes: 1, failures: 0, invalidTokens: 1, dropped: 0 });
  assert.deepEqual(r.routes.oppo, { devices: 1, successes: 0, failures: 0, invalidTokens: 1, dropped: 0 });
  assert.equal(r.invalidTokens, 2);
  for (const objectId of Object.values(bad)) {
    const installation = await master.get(`/1.1/installations/${objectId}`);
    assert.equal(installation.body.valid, false);
  }
  const hmsBefore = sentTokens(makers.HMS).length;
  const next = await push({ channels: ['inv'], data: { alert: 'again' } });
  assert.equal(next.devices, 1);
  assert.deepEqual(next.routes.HMS, { devices: 1, successes: 1, failures: 0, invalidTokens: 0, dropped: 0 });
  assert.equal(next.routes.oppo, undefined);
  assert.deepEqual(sentTokens(makers.HMS).slice(hmsBefore), ['tok-hms-alive']);
});

test('daily quota: that maker is stopped for the app until the next quota day, and it is recorded', async () => {
  makers.mi.failNext('quota');
  const first = await push({ channels: ['all'], data: { alert: 'quota' } });
  assert.equal(first.routes.mi.failures, 1);
  assert.equal(first.routes.mi.paused, 1);
  assert.equal(first.routes.oppo.successes, 1);
  const until = new Date(nextQuotaDay(clock.now())).toISOString();
  const pauseKey = Object.keys(first.errorDetails).find((key) => key.startsWith('mi paused for profile _default until '));
  assert.ok(pauseKey?.startsWith(`mi paused for profile _default until ${until}: mi daily quota reached`), JSON.stringify(first.errorDetails));
  assert.ok(server.logs.some((line) => line.includes('maker paused for this application until the next quota day')));

  const miSends = makers.mi.sends.length;
  clock.advance(3600_000);
  const second = await push({ channels: ['all'], data: { alert: 'still paused' } });
  assert.equal(makers.mi.sends.length, miSends, 'mi not called while paused');
  assert.deepEqual(second.routes.mi, { devices: 1, successes: 0, failures: 1, invalidTokens: 0, dropped: 0 });
  assert.equal(Object.keys(second.errorDetails).some((key) => key.startsWith(`mi paused until ${until}`)), true, JSON.stringify(second.errorDetails));
  assert.equal(second.routes.HMS.successes, 1);

  clock.set(nextQuotaDay(clock.now()));
  const third = await push({ channels: ['all'], data: { alert: 'next day' } });
  assert.deepEqual(third.routes.mi, { devices: 1, successes: 1, failures: 0, invalidTokens: 0, dropped: 0 });
  assert.equal(makers.mi.sends.length, miSends + 1);
});

test('the 4 KB content limit and the 128-byte package name limit at the push endpoint', async () => {
  const exactly = await master.post('/1.1/push', { channels: ['none'], data: { alert: 'x'.repeat(4084) } });
  assert.equal(exactly.status, 201, exactly.text);
  const over = await master.post('/1.1/push', { channels: ['none'], data: { alert: 'x'.repeat(4085) } });
  assert.equal(over.status, 413);
  assert.deepEqual(over.body, { code: 413, error: 'The push message content is 4097 bytes; the limit is 4096 bytes.' });

  const fits = await master.post('/1.1/push', { channels: ['none'], data: { alert: 'p', oppo: { packageName: 'p'.repeat(128) } } });
  assert.equal(fits.status, 201, fits.text);
  const long = await master.post('/1.1/push', { channels: ['none'], data: { alert: 'p', oppo: { packageName: 'p'.repeat(129) } } });
  assert.equal(long.status, 400);
  assert.deepEqual(long.body, { code: 111, error: 'request.data.oppo.packageName: a package name is at most 128 bytes.' });

  // A maker's package name in settings over 128 bytes: that maker's devices fail, nothing is sent to it.
  const set = await master.put('/1.1/settings', { vendors: { _default: { mi: { packageName: 'c'.repeat(129) } } } });
  assert.equal(set.status, 200, set.text);
  const miSends = makers.mi.sends.length;
  const r = await push({ channels: ['all'], data: { alert: 'pkg' } });
  assert.equal(makers.mi.sends.length, miSends);
  assert.deepEqual(r.routes.mi, { devices: 1, successes: 0, failures: 1, invalidTokens: 0, dropped: 0 });
  assert.equal(
    r.errorDetails['vendors._default.mi: packageName is 129 bytes; phone makers accept an application package name of at most 128 bytes.'],
    1,
  );
  await master.put('/1.1/settings', { vendors: { _default: { mi: { packageName: makers.mi.credentials.packageName } } } });
});

test('the switch is read at send time: turned off, the next push goes to the own channel only', async () => {
  const off = await master.put('/1.1/settings', { mixedPush: false });
  assert.equal(off.status, 200);
  const before = sendCounts();
  const r = await push({ channels: ['all'], data: { alert: 'off again' } });
  assert.deepEqual(r.routes, { lc: { devices: 8, successes: 0, pending: 8 } });
  assert.deepEqual(sendCounts(), before);
});
