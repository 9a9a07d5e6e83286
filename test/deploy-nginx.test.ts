// docs/deploy/nginx.conf, the file we ship, run by Debian's nginx in front of two Roost processes on
// one database: TLS, signed requests, accounts, the LeanCloud push connection through the WebSocket
// upgrade, the client IP, and a zero-downtime upgrade (start a third node, drain the first) under load.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import { spawnRoost, type RoostProcess } from './helpers/processes.ts';
import { Client } from './helpers/client.ts';
import { LcDevice } from './helpers/lc-device.ts';
import { command } from '../src/push/connection/messages.ts';

const nginxBinary = '/usr/sbin/nginx';
const shipped = readFileSync('docs/deploy/nginx.conf', 'utf8');
const skip = existsSync(nginxBinary) ? false : 'nginx is not installed (apt-get install nginx-light)';

let database: TestDatabase | undefined;
const nodes: RoostProcess[] = [];
let nginx: ChildProcess | undefined;
after(async () => {
  nginx?.kill('SIGQUIT');
  for (const node of nodes) await node.stop('SIGKILL');
  await database?.drop();
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Replaces what must be replaced in the shipped file, and fails when the file no longer has it. */
function substitute(text: string, pattern: RegExp, by: string): string {
  assert.match(text, pattern, `docs/deploy/nginx.conf has no ${pattern}`);
  return text.replace(pattern, by);
}

/** docs/deploy/nginx.conf with this test's ports, upstream nodes and certificate. */
function siteConfig(ports: { https: number; http: number }, upstreams: number[], dir: string): string {
  const serverLine = /^(\s*)server 127\.0\.0\.1:3000( [^;]*);\n\s*server 127\.0\.0\.1:3001[^;]*;\n/m;
  const [, indent, params] = serverLine.exec(shipped) ?? assert.fail('the upstream block changed');
  let text = substitute(shipped, serverLine, upstreams.map((port) => `${indent}server 127.0.0.1:${port}${params};\n`).join(''));
  text = substitute(text, /listen 443 ssl http2;/, `listen 127.0.0.1:${ports.https} ssl http2;`);
  text = substitute(text, /listen 80;/, `listen 127.0.0.1:${ports.http};`);
  text = substitute(text, /ssl_certificate\s+\S+;/, `ssl_certificate ${dir}/cert.pem;`);
  text = substitute(text, /ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${dir}/key.pem;`);
  return text;
}

/** The nginx.conf around the site: a process of the test's own, its files in `dir`. */
function mainConfig(dir: string): string {
  return `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log notice;
events { worker_connections 1024; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  include ${dir}/roost.conf;
}
`;
}

async function waitFor(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Answer {
  status: number;
  body: any;
}

test('nginx with docs/deploy/nginx.conf in front of two Roost nodes', { skip, timeout: 120_000 }, async () => {
  database = await testDatabase();
  const env = { ...database.env, REDIS_URL: 'redis://127.0.0.1:6379', SHUTDOWN_GRACE_MS: '10000' };
  nodes.push(await spawnRoost(env));
  nodes.push(await spawnRoost(env));
  const keys = nodes[0].defaultKeys!;
  const portOf = (node: RoostProcess) => Number(new URL(node.url).port);

  const dir = mkdtempSync(join(tmpdir(), 'roost-nginx-'));
  // nginx's workers run as nobody when the test is root: they write request bodies under tmp/.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'tmp'), { mode: 0o777 });
  chmodSync(join(dir, 'tmp'), 0o777);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=api.example.com', '-addext', 'subjectAltName=DNS:api.example.com,IP:127.0.0.1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
  ], { stdio: 'ignore' });
  const ca = readFileSync(join(dir, 'cert.pem'));
  const ports = { https: await freePort(), http: await freePort() };
  const writeSite = (upstreams: RoostProcess[]) => writeFileSync(join(dir, 'roost.conf'), siteConfig(ports, upstreams.map(portOf), dir));
  writeSite(nodes);
  writeFileSync(join(dir, 'nginx.conf'), mainConfig(dir));
  execFileSync(nginxBinary, ['-t', '-q', '-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')]);
  nginx = spawn(nginxBinary, ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
  const errorLog = () => (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '');
  await waitFor('nginx to listen', () => existsSync(join(dir, 'nginx.pid')) && errorLog().includes('start worker process'));
  const reload = async (upstreams: RoostProcess[]) => {
    const before = errorLog().split('reconfiguring').length;
    writeSite(upstreams);
    nginx!.kill('SIGHUP');
    await waitFor('nginx to reload', () => errorLog().split('reconfiguring').length > before && errorLog().split('\n').slice(-4).some((l) => l.includes('start worker process')));
  };

  // The client comes from 127.0.0.2: nginx reaches Roost from 127.0.0.1, so seeing .2 in Roost's
  // log shows X-Forwarded-For believed (TRUST_PROXY defaults to loopback).
  const agent = new https.Agent({ keepAlive: true, ca, localAddress: '127.0.0.2', servername: 'api.example.com' });
  const signer = new Client({ url: '', ...keys });
  const appSigner = new Client({ url: '', appId: keys.appId, appKey: keys.appKey });
  // A reload makes nginx's old workers close their idle client connections: a request sent on one
  // just then finds it closed, before nginx read it. Clients retry exactly that case (OkHttp does;
  // Node documents request.reusedSocket for it), and so does this one, counting the retries.
  let staleRetries = 0;
  type CallOptions = { body?: unknown; headers?: Record<string, string>; master?: boolean };
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Answer> => {
    try {
      return await callOnce(method, path, options);
    } catch (error) {
      if (!(error as { reused?: boolean }).reused) throw error;
      staleRetries += 1;
      return callOnce(method, path, options);
    }
  };
  const callOnce = (method: string, path: string, options: CallOptions) =>
    new Promise<Answer>((resolve, reject) => {
      const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
      const request = https.request(
        { host: '127.0.0.1', port: ports.https, method, path, agent, headers: {
          ...(options.master ? signer : appSigner).authHeaders(),
          host: 'api.example.com',
          ...(payload ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        } },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => (text += chunk));
          // nginx's own answers (a 502) are HTML: kept as text, so the assertion shows them.
          response.on('end', () => resolve({ status: response.statusCode!, body: /^[{[]/.test(text) ? JSON.parse(text) : text }));
          response.on('error', reject);
        },
      );
      request.on('error', (error: NodeJS.ErrnoException) =>
        reject(Object.assign(error, { reused: request.reusedSocket && error.code === 'ECONNRESET' })),
      );
      request.end(payload);
    });

  // Plain http answers with a redirect to https.
  const plain = await new Promise<{ status: number; location?: string }>((resolve, reject) => {
    net.connect(ports.http, '127.0.0.1').on('error', reject).once('connect', function (this: net.Socket) {
      this.end('GET /1.1/date HTTP/1.0\r\nHost: api.example.com\r\n\r\n');
      let text = '';
      this.on('data', (chunk) => (text += chunk)).on('end', () =>
        resolve({ status: Number(text.split(' ')[1]), location: /location: (\S+)/i.exec(text)?.[1] }),
      );
    });
  });
  assert.deepEqual(plain, { status: 301, location: 'https://api.example.com/1.1/date' });

  // Signed requests and an account, through TLS.
  const note = await call('POST', '/1.1/classes/Note', { body: { text: 'through nginx' } });
  assert.equal(note.status, 201, JSON.stringify(note.body));
  assert.equal((await call('GET', `/1.1/classes/Note/${note.body.objectId}`)).body.text, 'through nginx');
  assert.equal((await call('GET', '/1.1/classes/Note', { headers: { 'x-lc-sign': 'wrong,1' } })).status, 401);
  assert.equal((await call('POST', '/1.1/users', { body: { username: 'nginx-user', password: 'secret words' } })).status, 201);
  const login = await call('POST', '/1.1/login', { body: { username: 'nginx-user', password: 'secret words' } });
  assert.equal(login.status, 200);
  const me = await call('GET', '/1.1/users/me', { headers: { 'x-lc-session': login.body.sessionToken } });
  assert.deepEqual([me.status, me.body.username], [200, 'nginx-user']);
  assert.equal((await call('GET', '/metrics')).status, 404);

  // The client's address reaches Roost.
  await call('GET', '/1.1/classes/IpProbe');
  const probeLines = () => nodes.flatMap((node) => node.lines).filter((line) => line.includes('"url":"/1.1/classes/IpProbe"'));
  await waitFor('the request log line', () => probeLines().length > 0);
  assert.equal(probeLines().length, 1);
  assert.equal(JSON.parse(probeLines()[0]).ip, '127.0.0.2');

  // The LeanCloud push connection: the router names the public wss:// address; the WebSocket goes
  // through nginx's upgrade; a push sent through nginx (to either node) reaches the device.
  const route = await call('GET', `/v1/route?appId=${keys.appId}&installationId=nginx-device&secure=1`);
  assert.equal(route.body.server, 'wss://api.example.com/v1/push/connection');
  assert.equal((await call('POST', '/1.1/installations', { body: { installationId: 'nginx-device', deviceType: 'android' } })).status, 201);
  const device = await LcDevice.open(`wss://127.0.0.1:${ports.https}/v1/push/connection`, ['lc.protobuf2.3'], { ca, headers: { host: 'api.example.com' } });
  device.login(keys.appId, 'nginx-device');
  await device.frame(command.loggedin);
  const pushed = await call('POST', '/1.1/push', { master: true, body: { where: { installationId: 'nginx-device' }, data: { alert: 'through nginx' } } });
  assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
  await device.until('the push', () => device.pushes.find((p) => p.data.alert === 'through nginx'), 10_000);

  // Zero-downtime upgrade: clients keep sending the whole time; a third node starts and joins the
  // upstream, the first drains (SIGTERM) and leaves it. No request may fail.
  const outcomes: string[] = [];
  let sending = true;
  const loop = async (k: number) => {
    for (let i = 0; sending; i++) {
      try {
        const made = await call('POST', '/1.1/classes/Tick', { body: { loop: k, i } });
        const read = await call('GET', `/1.1/classes/Tick/${made.body.objectId}`);
        outcomes.push(`${made.status} ${read.status}`);
      } catch (error) {
        outcomes.push(String(error));
      }
    }
  };
  const loops = [loop(0), loop(1), loop(2)];
  nodes.push(await spawnRoost(env));
  await reload([nodes[0], nodes[1], nodes[2]]);
  const exited = new Promise<number | null>((resolve) => nodes[0].child.once('exit', (code) => resolve(code)));
  nodes[0].child.kill('SIGTERM');
  // The device was on the first node or the second: on the first it is closed with 1001, to reconnect elsewhere.
  assert.equal(await exited, 0, nodes[0].lines.slice(-5).join('\n'));
  await reload([nodes[1], nodes[2]]);
  const afterUpgrade = outcomes.length;
  await waitFor('requests after the upgrade', () => outcomes.length > afterUpgrade + 10);
  sending = false;
  await Promise.all(loops);
  const failed = outcomes.filter((outcome) => outcome !== '201 200');
  assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} failed`);
  assert.ok(outcomes.length > 30, `only ${outcomes.length} rounds`);
  assert.ok(staleRetries <= 6, `${staleRetries} requests sent on connections nginx had closed`);
  // Every node took part: the third answered after the first left.
  assert.ok(nodes[2].lines.some((line) => line.includes('"route":"/1.1/classes/:className"')));
  agent.destroy();
  device.close();
});
