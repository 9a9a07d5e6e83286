// The console's overview (docs/console.md, "Overview"): requests and errors by route, logins and
// lockouts, devices pushed by route, counted in memory and added to shared per-minute and per-hour
// buckets, so two nodes on one database show one picture; buckets are pruned; nothing without a session.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { adminAndViewer, ConsoleClient } from './helpers/console.ts';
import { Client } from './helpers/client.ts';
import { TrafficStats, retentionMs } from '../src/console/traffic.ts';

let database: TestDatabase;
let a: TestServer;
let b: TestServer;
let ada: ConsoleClient;
let vic: ConsoleClient;

before(async () => {
  database = await testDatabase();
  a = await startServer({ database });
  // A second node on the same database, with an application of its own.
  b = await startServer({ database });
  ({ ada, vic } = await adminAndViewer(a.url, a.services.operators));
});
after(async () => {
  await b?.close();
  await a?.close();
  await database?.drop();
});

type Line = { label: string; values: number[]; total: number };
const overview = async (range = '1h') => {
  const res = await vic.request('GET', `/console/api/overview?range=${range}`);
  assert.equal(res.status, 200, res.text);
  return res.body as { range: string; bars: number; stepMs: number; start: string; series: Record<string, Line[]> };
};
const totalOf = (lines: Line[], label: string) => lines.find((l) => l.label === label)?.total ?? 0;

test('nothing without an operator session: the page redirects, the API answers 401', async () => {
  const stranger = new ConsoleClient(a.url);
  const page = await stranger.request('GET', '/console/overview', { headers: { accept: 'text/html' } });
  assert.equal(page.status, 303);
  assert.equal(page.headers.get('location'), '/console/sign-in');
  const api = await stranger.request('GET', '/console/api/overview');
  assert.deepEqual([api.status, api.body], [401, { code: 401, error: 'Sign in to the console first.' }]);
  const forged = new ConsoleClient(a.url);
  forged.cookie = 'roost_console=not-a-session';
  assert.equal((await forged.request('GET', '/console/api/overview?range=7d')).status, 401);
});

test('requests and errors by route, logins and lockouts, pushes by route: from both nodes', async () => {
  const before = await overview();
  for (let i = 0; i < 3; i++) assert.equal((await a.master.get('/1.1/classes/Thing')).status, 200);
  assert.equal((await a.master.get('/1.1/classes/Thing/000000000000000000000000')).status, 404);
  // Node B serves A's application too: both nodes add to the same buckets.
  const viaB = new Client({ url: b.url, appId: a.appId, appKey: a.appKey, masterKey: a.masterKey });
  for (let i = 0; i < 2; i++) assert.equal((await viaB.get('/1.1/classes/Thing')).status, 200);
  assert.equal((await b.client.post('/1.1/users', { username: 'lou', password: 'a long password' })).status, 201);
  assert.equal((await b.client.post('/1.1/login', { username: 'lou', password: 'a long password' })).status, 200);
  let lockedAt = 0;
  for (let i = 1; i <= 8 && !lockedAt; i++) {
    const res = await b.client.post('/1.1/login', { username: 'lou', password: 'wrong password' });
    if (res.body.code === 219) lockedAt = i;
  }
  assert.ok(lockedAt > 0, 'the account locks');
  const device = await a.master.post('/1.1/installations', { deviceType: 'android', installationId: 'own-1' });
  assert.equal(device.status, 201, device.text);
  assert.equal((await a.master.post('/1.1/push', { data: { alert: 'hi' } })).status, 201);
  await a.services.push.drain();
  // Node B's counts reach the buckets at its next flush (every 10 s); node A's page flushes its own first.
  await b.services.traffic.flush();

  const now = await overview();
  const added = (kind: string, label: string) => totalOf(now.series[kind], label) - totalOf(before.series[kind], label);
  assert.equal(added('request', 'GET /1.1/classes/:className'), 5, 'three on A, two on B');
  assert.equal(added('request', 'GET /1.1/classes/:className/:objectId'), 1);
  assert.equal(added('error', 'GET /1.1/classes/:className/:objectId'), 1);
  assert.equal(added('error', 'GET /1.1/classes/:className'), 0);
  assert.equal(added('login', 'success'), 1);
  assert.equal(added('login', 'failure'), lockedAt - 1);
  assert.equal(added('login', 'locked'), 1);
  assert.equal(added('lockout', 'lockout'), 1);
  assert.equal(added('push', 'channel'), 1);
  assert.equal(now.bars, 60);
  assert.equal(now.stepMs, 60_000);
  assert.ok(!now.series.request.some((l) => l.label.includes('/console')), 'the console\'s own pages are not counted');
  const requests = now.series.request.find((l) => l.label === 'GET /1.1/classes/:className')!;
  assert.equal(requests.values.reduce((x, y) => x + y, 0), requests.total);
  // The requests above may straddle a minute's end: they are in the last two bars, whichever minute it is now.
  assert.ok(requests.values[58] + requests.values[59] >= 5, 'in the last two minutes\' bars');

  // The same counts in the hour buckets the longer windows read.
  const week = await overview('7d');
  assert.deepEqual([week.bars, week.stepMs], [84, 2 * 3_600_000]);
  assert.ok(totalOf(week.series.request, 'GET /1.1/classes/:className') >= 5);
  assert.equal(totalOf(week.series.lockout, 'lockout'), totalOf(now.series.lockout, 'lockout'));
});

test('the page draws each chart as inline SVG, to a viewer too', async () => {
  const page = await vic.request('GET', '/console/overview?range=6h', { headers: { accept: 'text/html' } });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/);
  for (const id of ['requests', 'errors', 'logins', 'pushes']) assert.match(page.text, new RegExp(`<figure class="chart" id="${id}">`));
  assert.equal(page.text.match(/<svg viewBox="0 0 72 100" preserveAspectRatio="none" role="img" aria-label="[^"]+"/g)?.length, 4);
  assert.match(page.text, /aria-label="Requests by route: \d+ requests in all, at most \d+ at \d\d:\d\d\."/);
  assert.match(page.text, /<span class="label">GET \/1\.1\/classes\/:className<\/span>/);
  assert.match(page.text, /<a href="\/console\/overview\?range=6h" aria-current="page">Last 6 hours<\/a>/);
  assert.match(page.text, /<a href="\/console\/overview" aria-current="page">Overview<\/a>/);
  assert.ok(!/<script/i.test(page.text));
  const bad = await vic.request('GET', '/console/api/overview?range=forever');
  assert.deepEqual([bad.status, bad.body], [400, { code: 1, error: 'range is one of 1h, 6h, 24h, 7d, 30d.' }]);
});

test('counts are written in batches, not per request, and old buckets are pruned', async () => {
  const clock = { now: () => Date.UTC(2026, 0, 10, 12, 30) };
  const stats = new TrafficStats({ store: a.store.stats, clock, flushMs: 3_600_000 });
  for (let i = 0; i < 100; i++) stats.request('x', 'GET /batched', 200);
  const read = async (grain: 'minute' | 'hour') => (await a.store.stats.read(grain, 0, Number.MAX_SAFE_INTEGER)).filter((c) => c.label === 'GET /batched');
  assert.deepEqual(await read('minute'), [], 'nothing written before the flush');
  await stats.flush();
  assert.deepEqual((await read('minute')).map((c) => [c.at, c.n]), [[Date.UTC(2026, 0, 10, 12, 30), 100]]);
  assert.deepEqual((await read('hour')).map((c) => [c.at, c.n]), [[Date.UTC(2026, 0, 10, 12), 100]]);
  await stats.flush();
  assert.equal((await read('minute'))[0].n, 100, 'a flush with nothing new adds nothing');

  // A day later the minute bucket goes, the hour bucket stays; a month later that goes too.
  const later = new TrafficStats({ store: a.store.stats, clock: { now: () => clock.now() + retentionMs.minute + 60_000 } });
  await later.flush();
  assert.deepEqual(await read('minute'), []);
  assert.equal((await read('hour')).length, 1);
  const month = new TrafficStats({ store: a.store.stats, clock: { now: () => clock.now() + retentionMs.hour + 3_600_000 } });
  await month.flush();
  assert.deepEqual(await read('hour'), []);
});
