// Runs Waline's server and Valine's widget against a running Roost and prints one PASS/FAIL line per flow.
// Started by scripts/apps-check.sh, which installs the apps and starts Roost; see that script for the settings.
//
// Every request to Roost, from Waline's server and from the browser, goes through a recording proxy, so a run
// ends with the list of Roost's answers of status 400 or more: the requests an app sent that Roost refused.
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { once } from 'node:events';
import { appendFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { join } from 'node:path';
import { walineFlows } from './waline.mjs';
import { browserFlows } from './browser.mjs';

const env = (name) => process.env[name] ?? (() => { throw new Error(`${name} is not set`); })();
const roost = new URL(env('ROOST_URL'));
const appsDir = env('APPS_DIR');
const work = env('WORK');
const keys = { appId: env('APP_ID'), appKey: env('APP_KEY'), masterKey: env('MASTER_KEY') };

/** Roost's answers of status >= 400: `METHOD path -> status body`. */
const refusals = [];

async function listen(server) {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${server.address().port}`;
}

const decoders = { gzip: gunzipSync, br: brotliDecompressSync, deflate: inflateSync };
function readable(body, encoding) {
  try { return (decoders[encoding] ?? ((b) => b))(body).toString(); } catch { return `(${encoding} body)`; }
}

// Pipes to Roost unchanged (CORS preflights included) and records what Roost refused.
const proxy = createServer((req, res) => {
  const upstream = request({ host: roost.hostname, port: roost.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    const chunks = [];
    answer.on('data', (chunk) => chunks.push(chunk));
    answer.on('end', () => {
      const body = Buffer.concat(chunks);
      const line = `${req.method} ${decodeURIComponent(req.url)} -> ${answer.statusCode}`;
      const text = readable(body, answer.headers['content-encoding']).slice(0, 400);
      appendFileSync(join(work, 'roost-requests.log'), `${line}\n  ${text}\n`);
      if (answer.statusCode >= 400) refusals.push(`${line} ${text}`);
      res.writeHead(answer.statusCode, answer.headers);
      res.end(body);
    });
  });
  upstream.on('error', (err) => { res.writeHead(502); res.end(String(err)); });
  req.pipe(upstream);
});
const roostURL = await listen(proxy);

// Waline asks OAUTH_URL for its login providers on every request; the public service is not needed here.
const oauth = createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end('{"services":[]}'); });
const oauthURL = await listen(oauth);

async function startWaline() {
  const probe = createServer();
  const port = new URL(await listen(probe)).port;
  probe.close();
  const child = spawn(process.execPath, ['vanilla.js', port], {
    cwd: join(appsDir, 'node_modules/@waline/vercel'),
    env: {
      ...process.env,
      LEAN_ID: keys.appId, LEAN_KEY: keys.appKey, LEAN_MASTER_KEY: keys.masterKey, LEAN_SERVER: roostURL,
      OAUTH_URL: oauthURL, AKISMET_KEY: 'false', IPQPS: '0', JWT_TOKEN: 'apps-check',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = (chunk) => appendFileSync(join(work, 'waline.log'), chunk);
  child.stdout.on('data', log);
  child.stderr.on('data', log);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`Waline exited (${child.exitCode}), see waline.log`);
    try { await fetch(`${url}/api/comment?path=/&page=1&pageSize=1`); return { child, url }; } catch { await new Promise((r) => setTimeout(r, 100)); }
  }
  throw new Error('Waline did not start');
}

let failed = 0;
async function flow(name, body) {
  try {
    await body();
    console.log(`PASS ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name} :: ${String(err?.message ?? err).split('\n')[0]}`);
  }
}

const waline = await startWaline();
try {
  await walineFlows({ flow, serverURL: waline.url, appsDir });
  await browserFlows({ flow, roostURL, walineURL: waline.url, keys, appsDir, work });
} finally {
  waline.child.kill();
  proxy.close();
  oauth.close();
}

// 101 (no such class or object) is an answer the apps expect: Waline reads classes before their first write.
const unexpected = refusals.filter((line) => !/ -> 404 \{"code":101,/.test(line));
await flow('Roost refused no request of the apps', () => {
  if (unexpected.length) throw new Error(`${unexpected.length} refused: ${unexpected[0]}`);
});
for (const line of unexpected) console.log(`  refused: ${line}`);
process.exit(failed ? 1 : 0);
