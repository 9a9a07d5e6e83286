import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { ChannelClient } from '../src/push/channel/client.ts';
import { unconfiguredDispatch, type VendorDispatch, type VendorSendInput } from '../src/push/vendor-dispatch.ts';

/** A stand-in for the makers' senders: records every call; answers as `answer` says. */
const calls: VendorSendInput[] = [];
let answer: 'default' | 'fake' = 'default';
const invalidRegistrations = new Set(['reg-bad']);
const dispatch: VendorDispatch = {
  async send(input) {
    calls.push(input);
    if (answer === 'default') return unconfiguredDispatch.send(input);
    return input.devices.map((d) => ({
      installationObjectId: d.installationObjectId,
      status: invalidRegistrations.has(d.registrationId) ? ('invalidToken' as const) : ('sent' as const),
    }));
  },
};

let server: TestServer;
const devices: ChannelClient[] = [];
before(async () => {
  server = await startServer({ vendorDispatch: dispatch });
});
after(async () => {
  await Promise.all(devices.map((d) => d.close()));
  await server?.close();
});

async function install(installationId: string, fields: Record<string, unknown>): Promise<string> {
  const response = await server.client.post('/1.1/installations', { installationId, ...fields });
  assert.equal(response.status, 201, response.text);
  return response.body.objectId;
}

async function pushAndDrain(channel: string) {
  const response = await server.master.post('/1.1/push', { channels: [channel], data: { alert: 'hi', title: 'T' }, hms: { message: { android: { notification: { foreground_show: false } } } } });
  assert.equal(response.status, 201, response.text);
  await server.services.push.drain();
  await server.services.push.flushAcks();
  const record = await server.master.get(`/1.1/notifications/${response.body.objectId}`);
  return record.body;
}

test('mixed push off: every Android device uses the own channel', async () => {
  await install('m-hms', { channels: ['mix'], vendor: 'HMS', registrationId: 'reg-hms' });
  await install('m-noreg', { channels: ['mix'], vendor: 'mi' });
  await install('m-novendor', { channels: ['mix'], registrationId: 'reg-orphan' });
  await install('m-plain', { channels: ['mix'] });
  const r = await pushAndDrain('mix');
  assert.equal(calls.length, 0);
  assert.equal(r.devices, 4);
  assert.equal(r.routes.lc.devices, 4);
  assert.equal(r.faultyIntegrations, 0);
});

test('mixed push on: vendor + registrationId go to the maker; the default dispatcher records failures', async () => {
  const on = await server.master.put('/1.1/settings', { commercial: true, mixedPush: true });
  assert.equal(on.status, 200, on.text);
  const r = await pushAndDrain('mix');
  assert.equal(calls.length, 1);
  assert.equal(calls[0].vendor, 'HMS');
  assert.equal(calls[0].deviceProfile, '_default');
  assert.deepEqual(calls[0].devices.map((d) => d.registrationId), ['reg-hms']);
  assert.deepEqual(calls[0].data, { alert: 'hi', title: 'T' });
  assert.deepEqual(calls[0].hms, { message: { android: { notification: { foreground_show: false } } } });
  assert.equal(r.devices, 4);
  assert.equal(r.routes.lc.devices, 3);
  assert.deepEqual(r.routes.HMS, { devices: 1, successes: 0, failures: 1, invalidTokens: 0, dropped: 0 });
  assert.equal(r.faultyIntegrations, 1);
  assert.equal(r.errorDetails['vendor sender not configured'], 1);
  assert.equal(r.errorDetails['registrationId without vendor (faulty client integration)'], 1);
  assert.equal(r.status, 'done');
});

test('devices are grouped by (vendor, deviceProfile); invalid tokens mark the installation invalid and are skipped after', async () => {
  answer = 'fake';
  calls.length = 0;
  await install('g-1', { channels: ['grp'], vendor: 'mi', registrationId: 'reg-mi-1' });
  await install('g-2', { channels: ['grp'], vendor: 'mi', registrationId: 'reg-mi-2' });
  await install('g-3', { channels: ['grp'], vendor: 'mi', registrationId: 'reg-mi-3', deviceProfile: 'other' });
  const bad = await install('g-4', { channels: ['grp'], vendor: 'oppo', registrationId: 'reg-bad' });
  const r = await pushAndDrain('grp');
  const groups = calls.map((c) => `${c.vendor}/${c.deviceProfile}/${c.devices.length}`).sort();
  assert.deepEqual(groups, ['mi/_default/2', 'mi/other/1', 'oppo/_default/1']);
  assert.equal(r.miSuccesses, 3);
  assert.equal(r.successes, 3);
  assert.equal(r.invalidTokens, 1);
  assert.deepEqual(r.routes.oppo, { devices: 1, successes: 0, failures: 0, invalidTokens: 1, dropped: 0 });
  const installation = await server.master.get(`/1.1/installations/${bad}`);
  assert.equal(installation.body.valid, false);

  const next = await pushAndDrain('grp');
  assert.equal(next.devices, 3);
  assert.equal(next.routes.oppo, undefined);
});

test('the switch is read at send time: after it is turned off the next push uses the own channel', async () => {
  const device = new ChannelClient({ url: server.url, appId: server.appId, appKey: server.appKey, installationId: 'g-1' });
  await device.connect();
  devices.push(device);
  calls.length = 0;
  const off = await server.master.put('/1.1/settings', { mixedPush: false });
  assert.equal(off.status, 200);
  const r = await pushAndDrain('grp');
  assert.equal(calls.length, 0);
  assert.equal(r.routes.lc.devices, 3);
  await device.waitForMessages(1);
});
