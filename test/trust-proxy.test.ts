// TRUST_PROXY (src/config.ts): X-Forwarded-For/-Proto/-Host count only from the proxies it names.
// The tests connect from 127.0.0.1, so "not trusted" is shown with a setting that leaves loopback out.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError } from '../src/config.ts';
import { startServer, type TestServer } from './helpers/harness.ts';
import { ConsoleClient, makeOperator, operatorPassword } from './helpers/console.ts';

const servers: TestServer[] = [];
after(async () => {
  for (const server of servers) await server.close();
});

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startServer({ env });
  servers.push(server);
  return server;
}

const forwarded = { 'x-forwarded-for': '203.0.113.7, 198.51.100.2', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' };

/** GET /v1/route with the forwarding headers: the address it names, and the client IP of its log line. */
async function routed(server: TestServer): Promise<{ status: number; server: string; ip: unknown }> {
  const response = await fetch(`${server.url}/v1/route?appId=${server.appId}`, { headers: forwarded });
  const body = (await response.json()) as { server: string };
  const lines = server.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
  const line = lines.filter((entry) => entry.msg === 'request' && entry.route === '/v1/route').at(-1);
  return { status: response.status, server: body.server, ip: line?.ip };
}

test('by default a proxy on loopback is trusted: the forwarded client IP, scheme and host are used', async () => {
  const server = await start();
  // The client IP is the nearest address not trusted: 198.51.100.2 is what the loopback proxy saw;
  // 203.0.113.7 is only what that client claimed.
  assert.deepEqual(await routed(server), { status: 200, server: 'wss://api.example.com/v1/push/connection', ip: '198.51.100.2' });
});

test('from an address TRUST_PROXY leaves out, X-Forwarded-For/-Proto/-Host are ignored', async () => {
  const server = await start({ TRUST_PROXY: '10.0.0.0/8, fd00::/8' });
  const port = new URL(server.url).port;
  assert.deepEqual(await routed(server), { status: 200, server: `ws://127.0.0.1:${port}/v1/push/connection`, ip: '127.0.0.1' });
});

test('TRUST_PROXY=false trusts no one; TRUST_PROXY=true anyone, so the first address forwarded counts', async () => {
  const none = await start({ TRUST_PROXY: 'false' });
  assert.equal((await routed(none)).ip, '127.0.0.1');
  const anyone = await start({ TRUST_PROXY: 'true' });
  assert.equal((await routed(anyone)).ip, '203.0.113.7');
});

test('the console session cookie is Secure only when https came from a trusted proxy', async () => {
  const cookieFor = async (server: TestServer) => {
    await makeOperator(server.services.operators, 'ops', 'admin');
    const client = new ConsoleClient(server.url);
    const response = await client.request('POST', '/console/api/sign-in', { json: { name: 'ops', password: operatorPassword }, headers: forwarded });
    assert.equal(response.status, 200);
    return /; Secure/.test(client.setCookie);
  };
  assert.equal(await cookieFor(await start()), true);
  assert.equal(await cookieFor(await start({ TRUST_PROXY: '10.0.0.0/8' })), false);
});

test('TRUST_PROXY values: names, addresses and ranges, true/false; anything else stops the start', () => {
  assert.deepEqual(loadConfig({}).trustProxy, ['loopback']);
  assert.deepEqual(loadConfig({ TRUST_PROXY: 'loopback,10.1.2.3, 192.168.0.0/16,::1,fd00::/8,10.0.0.0/255.0.0.0' }).trustProxy, [
    'loopback',
    '10.1.2.3',
    '192.168.0.0/16',
    '::1',
    'fd00::/8',
    '10.0.0.0/255.0.0.0',
  ]);
  assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
  assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
  for (const wrong of ['yes', '10.0.0.0/33', '300.1.1.1', 'loopback,', '10.0.0.0/8/1', '1']) {
    assert.throws(() => loadConfig({ TRUST_PROXY: wrong }), ConfigError, wrong);
  }
});
