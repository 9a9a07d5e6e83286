// The console's installations and push pages over HTTP (docs/console.md): search and counts per
// vendor and state; compose → the devices it will reach → send to fake makers → the history's
// per-route counts; a scheduled push cancelled; a viewer sends nothing; CSRF; audit entries.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { adminAndViewer, type ConsoleClient } from './helpers/console.ts';
import { closeMakers, startMakers, vendorSettings, type Makers } from './helpers/makers.ts';

let t: TestServer;
let makers: Makers;
let ada: ConsoleClient;
let vic: ConsoleClient;

before(async () => {
  makers = await startMakers();
  t = await startServer({ env: { PUSH_PAGE_SIZE: '10' } });
  ({ ada, vic } = await adminAndViewer(t.url, t.services.operators));
  const on = await t.master.put('/1.1/settings', { commercial: true, mixedPush: true, vendors: vendorSettings(makers) });
  assert.equal(on.status, 200, on.text);
  const user = await t.master.post('/1.1/users', { username: 'nina', password: 'a long password' });
  assert.equal(user.status, 201, user.text);
  const devices = [
    { installationId: 'mi-1', vendor: 'mi', registrationId: 'tok-mi-1', channels: ['news'] },
    { installationId: 'mi-2', vendor: 'mi', registrationId: 'tok-mi-dead', channels: ['news'] },
    { installationId: 'oppo-1', vendor: 'oppo', registrationId: 'tok-oppo-1', channels: ['sport'] },
    { installationId: 'own-1', channels: ['news'], user: { __type: 'Pointer', className: '_User', objectId: user.body.objectId } },
    { installationId: 'gone-1', vendor: 'mi', registrationId: 'tok-gone', valid: false },
  ];
  for (const device of devices) {
    const res = await t.master.post('/1.1/installations', { deviceType: 'android', ...device });
    assert.equal(res.status, 201, res.text);
  }
  makers.mi.invalidTokens.add('tok-mi-dead');
});
after(async () => {
  await t?.close();
  await closeMakers(makers);
});

const base = () => `/console/apps/${t.appId}`;
const form = (c: ConsoleClient, path: string, fields: Record<string, string>) =>
  c.request('POST', path, { form: { _csrf: c.csrf, ...fields }, headers: { origin: t.url } });

test('installations: counts per vendor and state, search by id, token, vendor, channel and user', async () => {
  const all = await vic.request('GET', `${base()}/installations`);
  assert.equal(all.status, 200);
  assert.deepEqual(all.body.vendors, [{ name: 'own channel', count: 1 }, { name: 'mi', count: 3 }, { name: 'oppo', count: 1 }]);
  assert.deepEqual([all.body.valid, all.body.invalid], [4, 1]);
  const ids = async (by: string, q: string) =>
    (await vic.request('GET', `${base()}/installations?${new URLSearchParams({ by, q })}`)).body.results.map((i: { installationId: string }) => i.installationId).sort();
  assert.deepEqual(await ids('installationId', 'mi-1'), ['mi-1']);
  assert.deepEqual(await ids('deviceToken', 'tok-oppo-1'), ['oppo-1']);
  assert.deepEqual(await ids('vendor', 'mi'), ['gone-1', 'mi-1', 'mi-2']);
  assert.deepEqual(await ids('channel', 'news'), ['mi-1', 'mi-2', 'own-1']);
  assert.deepEqual(await ids('user', 'nina'), ['own-1']);
  const page = await vic.request('GET', `${base()}/installations`, { headers: { accept: 'text/html' } });
  assert.match(page.text, /<li><strong>1<\/strong>invalid tokens<\/li>/);
});

test('compose shows the devices a push will reach; sending reaches the makers; the history has per-route counts', async () => {
  const review = await form(ada, `${base()}/push/review`, { target: 'channels', channels: 'news', alert: 'Hello', title: 'Hi', badge: '3', custom: '{"url": "app://x"}' });
  assert.equal(review.status, 200, review.text);
  assert.match(review.text, /This push will reach <strong>3<\/strong> devices\./);
  const body = /name="body" value="([^"]+)"/.exec(review.text)![1].replace(/&#34;/g, '"');
  assert.deepEqual(JSON.parse(body), { data: { url: 'app://x', alert: 'Hello', title: 'Hi', badge: 3 }, prod: 'prod', channels: ['news'] });
  assert.equal(makers.mi.sends.length, 0, 'nothing sent by the review');

  const users = await ada.change('POST', `${base()}/push/review`, { target: 'users', users: 'nina', alert: 'x' });
  assert.equal(users.body.devices, 1);
  const everyone = await ada.change('POST', `${base()}/push/review`, { target: 'all', alert: 'x' });
  assert.equal(everyone.body.devices, 4, 'an invalid token is not counted');
  const bad = await form(ada, `${base()}/push/review`, { target: 'where', where: '{"deviceType": ', alert: 'x' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /role="alert">The where is not valid JSON/);
  const empty = await ada.change('POST', `${base()}/push/review`, { target: 'all' });
  assert.deepEqual([empty.status, empty.body], [400, { code: 113, error: 'A push needs an alert, a title, a badge or custom data.' }]);

  const sent = await form(ada, `${base()}/push/send`, { body });
  assert.equal(sent.status, 303, sent.text);
  const objectId = new URL(sent.headers.get('location')!, t.url).searchParams.get('sent')!;
  await t.services.push.drain();
  const record = await vic.request('GET', `${base()}/push/${objectId}`);
  assert.equal(record.body.devices, 3);
  assert.deepEqual(record.body.routes.mi, { devices: 2, successes: 1, failures: 0, invalidTokens: 1, dropped: 0 });
  assert.deepEqual(record.body.routes.lc, { devices: 1, successes: 0, pending: 1 });
  const history = await vic.request('GET', `${base()}/push`, { headers: { accept: 'text/html' } });
  assert.match(history.text, /<td data-label="Devices" class="count">3<\/td><td data-label="Sent" class="count">1<\/td><td data-label="Failed" class="count">\d+<\/td><td data-label="Invalid tokens" class="count">1<\/td>/);
  assert.match(history.text, /mi 1 sent, 0 failed, 1 invalid/);
  assert.ok(!history.text.includes('Check reach'), 'a viewer is offered no compose form');
  const entry = (await ada.request('GET', '/console/api/audit')).body.results.find((e: { action: string }) => e.action === 'push.send');
  assert.deepEqual([entry.actor, entry.target, entry.detail], ['ada', `${t.appId}/${objectId}`, { target: 'channels', scheduled: false }]);
});

test('a scheduled push is listed and cancelled', async () => {
  const at = new Date(t.clock.now() + 3 * 86400_000).toISOString().slice(0, 16);
  const review = await ada.change('POST', `${base()}/push/review`, { target: 'all', alert: 'later', pushTime: at, expiresIn: '3600' });
  assert.equal(review.status, 200, review.text);
  assert.equal(review.body.body.push_time, `${at}:00.000Z`);
  const sent = await ada.change('POST', `${base()}/push/send`, { body: JSON.stringify(review.body.body) });
  assert.equal(sent.status, 201, sent.text);
  const listed = await vic.request('GET', `${base()}/push`);
  assert.equal(listed.body.scheduled.length, 1);
  const id = listed.body.scheduled[0].id;
  assert.equal((await form(vic, `${base()}/push/scheduled/${id}/cancel`, {})).status, 403, 'a viewer cancels nothing');
  const cancelled = await form(ada, `${base()}/push/scheduled/${id}/cancel`, {});
  assert.equal(cancelled.status, 303);
  assert.deepEqual((await vic.request('GET', `${base()}/push`)).body.scheduled, []);
  const actions = (await ada.request('GET', '/console/api/audit')).body.results.map((e: { action: string }) => e.action);
  assert.ok(actions.includes('push.cancel'));
});

test('a viewer sends nothing; every change needs the CSRF token', async () => {
  const body = JSON.stringify({ data: { alert: 'no' } });
  const viewer = await form(vic, `${base()}/push/send`, { body });
  assert.equal(viewer.status, 403);
  assert.match(viewer.text, /A viewer cannot change anything/);
  assert.equal((await form(vic, `${base()}/push/review`, { target: 'all', alert: 'x' })).status, 403);
  const noToken = await ada.request('POST', `${base()}/push/send`, { form: { body }, headers: { origin: t.url } });
  assert.equal(noToken.status, 403);
  assert.match(noToken.text, /The CSRF token is missing or wrong/);
  const records = (await t.master.get('/1.1/notifications')).body.results;
  assert.ok(!records.some((r: { data: { alert: string } }) => r.data.alert === 'no'));
});
