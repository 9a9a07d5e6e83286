// Honor's delivery receipts (SPEC §6) over HTTP: POST /push/v1/callback/honor, no app keys.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { closeMakers, sentTokens, startMakers, vendorSettings, type Makers } from './helpers/makers.ts';

let server: TestServer;
let makers: Makers;
let notificationId: string;
const ids: Record<string, string> = {};

before(async () => {
  makers = await startMakers();
  server = await startServer();
  const on = await server.master.put('/1.1/settings', { commercial: true, mixedPush: true, vendors: vendorSettings(makers) });
  assert.equal(on.status, 200, on.text);
});
after(async () => {
  await server?.close();
  await closeMakers(makers);
});

async function install(installationId: string, fields: Record<string, unknown>): Promise<string> {
  const response = await server.client.post('/1.1/installations', { installationId, deviceType: 'android', ...fields });
  assert.equal(response.status, 201, response.text);
  return response.body.objectId;
}

/** Honor posts without any X-LC header. */
function receipt(body: unknown) {
  return fetch(`${server.url}/push/v1/callback/honor`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (response) => ({ status: response.status, body: await response.json() }));
}

const record = async () => (await server.master.get(`/1.1/notifications/${notificationId}`)).body;
const valid = async (objectId: string) => (await server.master.get(`/1.1/installations/${objectId}`)).body.valid;

test('a push to Honor devices carries the notification id as biTag', async () => {
  for (const name of ['a', 'b', 'c', 'd']) ids[name] = await install(`honor-${name}`, { channels: ['r'], vendor: 'honor', registrationId: `tok-${name}` });
  // The same token at another maker: a Honor receipt must not touch it.
  ids.hms = await install('hms-b', { channels: ['other'], vendor: 'HMS', registrationId: 'tok-b' });
  const pushed = await server.master.post('/1.1/push', { channels: ['r'], data: { alert: 'receipts' } });
  assert.equal(pushed.status, 201);
  notificationId = pushed.body.objectId;
  await server.services.push.drain();
  assert.deepEqual(sentTokens(makers.honor).sort(), ['tok-a', 'tok-b', 'tok-c', 'tok-d']);
  const body = makers.honor.sends[0].body as any;
  assert.equal(body.android.biTag, notificationId);
  assert.deepEqual((await record()).routes.honor, { devices: 4, successes: 4, failures: 0, invalidTokens: 0, dropped: 0 });
});

test('receipts update the delivery counts and invalidate the tokens Honor says are dead', async () => {
  const reply = await receipt({
    statuses: [
      { biTag: notificationId, appid: '104400001', token: 'tok-a', status: 0, timestamp: Date.now(), requestId: 'r1' },
      { biTag: notificationId, appid: '104400001', token: 'tok-b', status: 2, timestamp: Date.now(), requestId: 'r1' },
      { biTag: notificationId, appid: '104400001', token: 'tok-c', status: 1, timestamp: Date.now(), requestId: 'r1' },
      { biTag: notificationId, appid: '104400001', token: 'tok-d', status: 0, timestamp: Date.now(), requestId: 'r1' },
      { biTag: 'unknownNote0001', token: 'tok-d', status: 2 },
    ],
  });
  assert.deepEqual(reply, { status: 200, body: { errno: '0', errmsg: 'success' } });
  const r = await record();
  assert.deepEqual(r.routes.honor, {
    devices: 4,
    successes: 4,
    failures: 0,
    invalidTokens: 0,
    dropped: 0,
    receipts: { delivered: 2, undelivered: 1, invalidTokens: 1 },
  });
  assert.equal(await valid(ids.b), false);
  for (const name of ['a', 'c', 'd', 'hms']) assert.equal(await valid(ids[name]), undefined, name);

  // Receipts add up: a second batch counts on top of the first.
  const again = await receipt({ statuses: [{ biTag: notificationId, token: 'tok-c', status: 0 }] });
  assert.equal(again.status, 200);
  assert.deepEqual((await record()).routes.honor.receipts, { delivered: 3, undelivered: 1, invalidTokens: 1 });
});

test('the next push skips the installation a receipt invalidated', async () => {
  const before = sentTokens(makers.honor).length;
  const pushed = await server.master.post('/1.1/push', { channels: ['r'], data: { alert: 'again' } });
  await server.services.push.drain();
  const r = (await server.master.get(`/1.1/notifications/${pushed.body.objectId}`)).body;
  assert.equal(r.devices, 3);
  assert.deepEqual(sentTokens(makers.honor).slice(before).sort(), ['tok-a', 'tok-c', 'tok-d']);
});

test('a malformed receipt is refused with 400; a receipt naming no known notification changes nothing', async () => {
  const bad = await receipt({ nothing: true });
  assert.deepEqual(bad, { status: 400, body: { code: 107, error: 'Honor receipt: expected {"statuses": [...]}.' } });
  const unknown = await receipt({ statuses: [{ biTag: 'nope', token: 'tok-a', status: 5 }] });
  assert.deepEqual(unknown, { status: 200, body: { errno: '0', errmsg: 'success' } });
  assert.equal(await valid(ids.a), undefined);
});
