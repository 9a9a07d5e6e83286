// GET /metrics: the Prometheus text format with requests, latencies, logins, lockouts, pushes
// per route and the push queue read from the database at scrape time.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer({ env: { METRICS_TOKEN: 'scrape-token-123' } });
});
after(async () => {
  await server?.close();
});

async function scrape(): Promise<string> {
  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer scrape-token-123' } });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one series, e.g. `roost_logins_total{outcome="success"}`; 0 when absent. */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

test('without the bearer token /metrics answers 401', async () => {
  const response = await fetch(`${server.url}/metrics`);
  assert.equal(response.status, 401);
  assert.deepEqual(await response.json(), { code: 401, error: 'Unauthorized.' });
  const wrong = await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer nope' } });
  assert.equal(wrong.status, 401);
});

test('requests, latencies, logins and lockouts', async () => {
  const user = await signUp(server.client);
  const ok = await server.client.post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(ok.status, 200);
  for (let i = 0; i < 7; i++) {
    const wrong = await server.client.post('/1.1/login', { username: user.username, password: 'wrong-password' });
    assert.equal(wrong.body.code, 210);
  }
  const locked = await server.client.post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(locked.body.code, 219);
  await server.client.get('/1.1/no-such-route');

  const text = await scrape();
  assert.equal(value(text, 'roost_logins_total{outcome="success"}'), 1);
  assert.equal(value(text, 'roost_logins_total{outcome="failure"}'), 7);
  assert.equal(value(text, 'roost_logins_total{outcome="locked"}'), 1);
  assert.equal(value(text, 'roost_lockouts_total'), 1);
  const app = server.appId;
  assert.equal(value(text, `roost_http_requests_total{app="${app}",method="POST",route="/1.1/login",status="200",code="none"}`), 1);
  assert.equal(value(text, `roost_http_requests_total{app="${app}",method="POST",route="/1.1/login",status="400",code="210"}`), 7);
  assert.equal(value(text, `roost_http_requests_total{app="${app}",method="POST",route="/1.1/login",status="400",code="219"}`), 1);
  assert.equal(value(text, 'roost_http_requests_total{app="none",method="GET",route="unmatched",status="404",code="404"}'), 1);
  assert.equal(value(text, `roost_http_request_duration_seconds_count{app="${app}",method="POST",route="/1.1/login"}`), 9);
  assert.match(text, new RegExp(`roost_http_request_duration_seconds_bucket\\{le="0\\.005",app="${app}",method="POST",route="/1\\.1/login"\\} \\d+`));
  // Default process series are there too.
  assert.match(text, /^process_cpu_seconds_total \d/m);
});

test('push queue depth and devices sent per route', async () => {
  const device = await server.client.post('/1.1/installations', { installationId: 'metrics-device-1', deviceType: 'android', channels: ['m'] });
  assert.equal(device.status, 201, device.text);
  const later = new Date(Date.now() + 3600_000).toISOString();
  const scheduled = await server.master.post('/1.1/push', { data: { alert: 'later' }, channels: ['m'], push_time: later });
  assert.equal(scheduled.status, 201, scheduled.text);
  const now = await server.master.post('/1.1/push', { data: { alert: 'now' }, channels: ['m'] });
  assert.equal(now.status, 201, now.text);

  const before = await scrape();
  assert.equal(value(before, 'roost_push_queue_jobs{state="scheduled"}'), 1);
  assert.ok(value(before, 'roost_push_queue_jobs{state="due"}') <= 1);

  await server.services.push.drain();
  const afterDrain = await scrape();
  assert.equal(value(afterDrain, 'roost_push_queue_jobs{state="due"}'), 0);
  assert.equal(value(afterDrain, 'roost_push_queue_jobs{state="scheduled"}'), 1);
  assert.equal(value(afterDrain, 'roost_push_queue_pages_pending'), 0);
  assert.equal(value(afterDrain, 'roost_push_sent_total{route="channel",status="published"}'), 1);
});

// Requests are tallied and handed to prom-client in batches of 256 per series, and at each scrape
// (src/http/routes/metrics.ts): every request is counted once, whether its batch was full or not.
test('request series count every request across batches and scrapes', async () => {
  const series = (text: string) => ({
    requests: value(text, 'roost_http_requests_total{app="none",method="GET",route="/health",status="200",code="none"}'),
    durations: value(text, 'roost_http_request_duration_seconds_count{app="none",method="GET",route="/health"}'),
    slowest: value(text, 'roost_http_request_duration_seconds_bucket{le="+Inf",app="none",method="GET",route="/health"}'),
  });
  let seen = series(await scrape());
  for (const batch of [300, 1, 256]) {
    for (let i = 0; i < batch; i++) assert.equal((await fetch(`${server.url}/health`)).status, 200);
    const now = series(await scrape());
    assert.deepEqual(now, { requests: seen.requests + batch, durations: seen.durations + batch, slowest: seen.slowest + batch });
    seen = now;
  }
});

// Labels stay bounded: ids never become label values (route patterns, not URLs), an unknown app or
// a wrong key counts as app="none", every path the router does not know as route="unmatched" (app
// "none" too: the router answers before keys are read).
test('request series by app, route pattern, method, status and code, exactly', async () => {
  const fresh = await startServer({ env: { METRICS_TOKEN: 'scrape-token-123' } });
  try {
    const app = fresh.appId;
    const created = await fresh.client.post('/1.1/classes/Thing', { n: 1 });
    assert.equal(created.status, 201);
    assert.equal((await fresh.client.get(`/1.1/classes/Thing/${created.body.objectId}`)).status, 200);
    // A missing class answers 404 code 101 (a missing object in an existing class is 200 {}).
    for (const id of ['000000000000000000000001', '000000000000000000000002']) {
      assert.equal((await fresh.client.get(`/1.1/classes/Nothing/${id}`)).body.code, 101);
    }
    for (const appId of ['no-such-app-1', 'no-such-app-2']) {
      const unknown = await fetch(`${fresh.url}/1.1/classes/Thing`, { headers: { 'X-LC-Id': appId, 'X-LC-Key': 'k' } });
      assert.equal(unknown.status, 401);
    }
    const wrongKey = await fetch(`${fresh.url}/1.1/classes/Thing`, { headers: { 'X-LC-Id': app, 'X-LC-Key': 'wrong' } });
    assert.equal(wrongKey.status, 401);
    for (const path of ['/1.1/nothing/here', '/1.1/nothing/else']) assert.equal((await fresh.client.get(path)).status, 404);

    const response = await fetch(`${fresh.url}/metrics`, { headers: { authorization: 'Bearer scrape-token-123' } });
    const text = await response.text();
    const requests = text.split('\n').filter((line) => line.startsWith('roost_http_requests_total{')).sort();
    assert.deepEqual(requests, [
      `roost_http_requests_total{app="${app}",method="GET",route="/1.1/classes/:className/:objectId",status="200",code="none"} 1`,
      `roost_http_requests_total{app="${app}",method="GET",route="/1.1/classes/:className/:objectId",status="404",code="101"} 2`,
      `roost_http_requests_total{app="${app}",method="POST",route="/1.1/classes/:className",status="201",code="none"} 1`,
      'roost_http_requests_total{app="none",method="GET",route="/1.1/classes/:className",status="401",code="401"} 3',
      // The router's 404 answers before the keys are checked: no app.
      'roost_http_requests_total{app="none",method="GET",route="unmatched",status="404",code="404"} 2',
    ].sort()); // the app id is random: where it sorts against "none" varies
    const durations = text.split('\n').filter((line) => line.startsWith('roost_http_request_duration_seconds_count{')).sort();
    assert.deepEqual(durations, [
      `roost_http_request_duration_seconds_count{app="${app}",method="GET",route="/1.1/classes/:className/:objectId"} 3`,
      `roost_http_request_duration_seconds_count{app="${app}",method="POST",route="/1.1/classes/:className"} 1`,
      'roost_http_request_duration_seconds_count{app="none",method="GET",route="/1.1/classes/:className"} 3',
      'roost_http_request_duration_seconds_count{app="none",method="GET",route="unmatched"} 2',
    ].sort());
  } finally {
    await fresh.close();
  }
});

// Without METRICS_TOKEN /metrics answers a scraper on the node's host, never one behind a proxy.
test('without METRICS_TOKEN /metrics answers a loopback scraper only, and never through a proxy', async () => {
  const open = await startServer();
  try {
    assert.equal((await fetch(`${open.url}/metrics`)).status, 200);
    for (const header of ['x-forwarded-for', 'x-real-ip', 'forwarded']) {
      const proxied = await fetch(`${open.url}/metrics`, { headers: { [header]: '203.0.113.9' } });
      assert.equal(proxied.status, 401);
      assert.deepEqual(await proxied.json(), { code: 401, error: 'Unauthorized.' });
    }
  } finally {
    await open.close();
  }
});
