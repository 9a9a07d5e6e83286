// /health/live, /health/ready and the older /health (src/http/routes/health.ts), on either store.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer, type TestServer } from './helpers/harness.ts';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startServer({ env });
  servers.push(server);
  return server;
}

async function get(server: TestServer, path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, body: await response.json() };
}

test('live answers with the version; ready checks the database; /health still answers', async () => {
  const server = await start();
  assert.deepEqual(await get(server, '/health/live'), { status: 200, body: { status: 'ok', version } });
  assert.deepEqual(await get(server, '/health/ready'), { status: 200, body: { status: 'ok', database: 'ok' } });
  assert.deepEqual(await get(server, '/health'), { status: 200, body: { status: 'ok', store: server.store.kind } });
});

test('ready checks Redis when REDIS_URL is set', async () => {
  const server = await start({ REDIS_URL: 'redis://127.0.0.1:6379' });
  assert.deepEqual(await get(server, '/health/ready'), { status: 200, body: { status: 'ok', database: 'ok', redis: 'ok' } });
});

test('ready answers 503 naming the database when the store is closed', async () => {
  const server = await start();
  await server.store.close();
  assert.deepEqual(await get(server, '/health/ready'), {
    status: 503,
    body: { status: 'unavailable', failing: ['database'], database: 'unavailable' },
  });
});

// Redis away: a port where nothing listens (found by binding one and closing it). The check has its
// own time limit (2 s), so the probe answers 503 naming redis instead of waiting on ioredis retries.
test('ready answers 503 naming redis when Redis does not answer', async () => {
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const server = await start({ REDIS_URL: `redis://127.0.0.1:${port}` });
  const started = Date.now();
  assert.deepEqual(await get(server, '/health/ready'), {
    status: 503,
    body: { status: 'unavailable', failing: ['redis'], database: 'ok', redis: 'unavailable' },
  });
  assert.ok(Date.now() - started < 5000);
});
