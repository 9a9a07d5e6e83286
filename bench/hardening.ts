// Issue 13's benchmark: what the hardening costs and what it buys, the code before (BENCH_BEFORE_DIR,
// a checkout of e2b2d15) against this checkout, on SQLite and PostgreSQL:
//   - get-by-id and a `where` query, req/s at concurrency 32 (autocannon), as bench/objects.ts;
//   - the latency of a concurrent get-by-id (a few connections, one request at a time each) while
//     attackers send hostile regular expressions (`(A+A+)+y` against a stored 60,000-character string)
//     and the largest bodies each build accepts, one attacker per kind, back to back.
//
//   npm run bench:hardening                 # prints the tables
//   npm run bench:hardening -- --record     # also rewrites the "hardening" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_BEFORE_DIR (/tmp/roost-e2b2d15: `git worktree add /tmp/roost-e2b2d15 e2b2d15`
// and `npm ci` there), BENCH_AFTER_DIR (this checkout), BENCH_DURATION seconds per measurement (10), BENCH_CONNECTIONS (32),
// BENCH_OBJECTS seeded per store (10000), BENCH_STORES=sqlite or postgres, BENCH_BUILDS=before or after,
// BENCH_PG_URL (admin URL). Run it alone: `flock -x /tmp/roost-cpu.lock npm run bench:hardening`.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import {
  analyzeDatabase,
  cleanup,
  cpuTime,
  createDatabase,
  dropDatabase,
  envNumber,
  fixed,
  freePort,
  load,
  log,
  machine,
  quiesce,
  recordSection,
  root,
  roostEnv,
  run,
  startServer,
  table,
  warm,
  type AppKeys,
  type LoadResult,
  type ServerProcess,
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 32);
const durationSec = envNumber('BENCH_DURATION', 10);
const seedCount = envNumber('BENCH_OBJECTS', 10_000);
const probeConnections = 4;
const groups = 100;
const record = process.argv.includes('--record');
const beforeDir = process.env.BENCH_BEFORE_DIR ?? '/tmp/roost-e2b2d15';
const MiB = 1024 * 1024;

interface Build {
  label: 'before' | 'after';
  dir: string;
  /** The bodies the attacker sends: the largest of each shape this build accepts. */
  bodies: Array<{ name: string; make: () => string }>;
}

const builds: Build[] = [
  {
    label: 'before',
    dir: beforeDir,
    // e2b2d15 took bodies up to 20 MiB of any shape.
    bodies: [
      { name: '19.9 MiB string', make: () => JSON.stringify({ s: 'x'.repeat(Math.floor(19.9 * MiB)) }) },
      { name: '19 MiB of numbers', make: () => `{"a":[${'0,'.repeat(Math.floor((19 * MiB) / 2))}0]}` },
    ],
  },
  {
    label: 'after',
    dir: process.env.BENCH_AFTER_DIR ?? root,
    // 1 MiB (BODY_LIMIT_BYTES), 50,000 keys and values, 10,000 objects and arrays, 500 keys an
    // object: the costliest legal shapes (src/http/body.ts).
    bodies: [
      { name: '1 MiB string', make: () => JSON.stringify({ s: 'x'.repeat(MiB - 64) }) },
      { name: '9,990 objects + 40,000 numbers', make: () => `{"a":[${'{},'.repeat(9_990)}${'0,'.repeat(39_990)}0]}` },
      {
        name: '49 objects of 500 keys',
        make: () => JSON.stringify({ a: Array.from({ length: 49 }, () => Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]))) }),
      },
    ],
  },
];

function build(dir: string): void {
  log(`building Roost in ${dir}`);
  run('npm', ['run', 'build', '--silent'], { cwd: dir });
}

function createApp(dir: string, env: NodeJS.ProcessEnv): AppKeys {
  return JSON.parse(run(process.execPath, [join(dir, 'bin', 'roost.js'), 'app', 'create', '--name', 'bench'], { env, cwd: dir })) as AppKeys;
}

async function startRoostIn(dir: string, name: string, store: { databaseUrl?: string; sqlitePath?: string }): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({ name, command: process.execPath, args: [join(dir, 'dist', 'main.js')], cwd: dir, env: roostEnv(store, port), port, healthPath: '/health' });
}

async function post(url: string, keys: AppKeys, path: string, body: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey },
    body,
  });
  return { status: response.status, text: await response.text() };
}

/** 10,000 BenchItems through /1.1/batch, 100 a request, and one Hostile object with a 60,000-character string. */
async function seed(url: string, keys: AppKeys): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < seedCount; start += 100) {
    const requests = [];
    for (let i = start; i < Math.min(seedCount, start + 100); i++) {
      requests.push({ method: 'POST', path: '/1.1/classes/BenchItem', body: { title: `item ${i}`, group: i % groups, score: (i * 7919) % 10_000, tags: ['bench', `g${i % groups}`] } });
    }
    const res = await post(url, keys, '/1.1/batch', JSON.stringify({ requests }));
    const results = JSON.parse(res.text) as Array<{ success?: { objectId: string } }>;
    if (res.status !== 200 || !results.every((r) => r.success)) throw new Error(`seeding failed: ${res.status} ${res.text.slice(0, 300)}`);
    ids.push(...results.map((r) => r.success!.objectId));
  }
  const hostile = await post(url, keys, '/1.1/classes/Hostile', JSON.stringify({ s: 'A'.repeat(60_000) }));
  if (hostile.status !== 201) throw new Error(`seeding the hostile string failed: ${hostile.status} ${hostile.text}`);
  return ids;
}

function random(n: number): number {
  return Math.floor(Math.random() * n);
}

interface ProbeResult {
  requests: number;
  p50: number;
  p99: number;
  max: number;
  /** Requests still unanswered when the window closed (counted with their time so far). */
  unanswered: number;
}

/** `probeConnections` keep-alive connections, each sending one get-by-id after another, for `ms`. */
async function probe(url: string, keys: AppKeys, ids: string[], ms: number): Promise<ProbeResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: probeConnections });
  const latencies: number[] = [];
  let unanswered = 0;
  const until = performance.now() + ms;
  const one = (): Promise<number> =>
    new Promise((resolve) => {
      const started = performance.now();
      const target = new URL(`${url}/1.1/classes/BenchItem/${ids[random(ids.length)]}`);
      let settled = false;
      const finish = (pending: boolean) => {
        if (settled) return;
        settled = true;
        if (pending) unanswered++;
        resolve(performance.now() - started);
      };
      const req = http.get(target, { agent, headers: { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey } }, (res) => {
        res.resume();
        res.on('end', () => finish(false));
      });
      req.on('error', () => finish(false));
      // A request the server has not answered a second after the window closed counts with its time so far.
      setTimeout(() => finish(true), Math.max(0, until - started) + 1000).unref();
    });
  await Promise.all(
    Array.from({ length: probeConnections }, async () => {
      while (performance.now() < until) latencies.push(await one());
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { requests: latencies.length, p50: at(0.5), p99: at(0.99), max: latencies[latencies.length - 1] ?? NaN, unanswered };
}

interface AttackTally {
  sent: number;
  answered: Record<string, number>;
}

/** One attacker: sends `request` back to back until `stop`; tallies the answers by status. */
async function attack(request: () => Promise<Response>, stop: { now: boolean }, tally: AttackTally): Promise<void> {
  while (!stop.now) {
    tally.sent++;
    try {
      const response = await request();
      await response.arrayBuffer();
      tally.answered[response.status] = (tally.answered[response.status] ?? 0) + 1;
    } catch {
      tally.answered.error = (tally.answered.error ?? 0) + 1;
    }
  }
}

interface HostileRow {
  store: string;
  build: string;
  attack: string;
  probe: ProbeResult;
  attacks: string;
}

async function underAttack(
  build: Build,
  storeLabel: string,
  server: ServerProcess,
  keys: AppKeys,
  ids: string[],
  kinds: Array<'regex' | 'bodies'>,
): Promise<HostileRow> {
  const headers = { 'content-type': 'application/json', 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey };
  const stop = { now: false };
  const tallies: Array<[string, AttackTally]> = [];
  const running: Array<Promise<void>> = [];
  // Whatever an attacker still waits for is given up 2 s after the window.
  const deadlineAt = Date.now() + durationSec * 1000 + 2000;
  const deadline = () => AbortSignal.timeout(Math.max(1, deadlineAt - Date.now()));
  if (kinds.includes('regex')) {
    const where = encodeURIComponent(JSON.stringify({ s: { $regex: '(A+A+)+y' } }));
    const tally = { sent: 0, answered: {} };
    tallies.push(['regex', tally]);
    running.push(attack(() => fetch(`${server.url}/1.1/classes/Hostile?where=${where}`, { headers, signal: deadline() }), stop, tally));
  }
  if (kinds.includes('bodies')) {
    for (const body of build.bodies) {
      const text = body.make();
      const tally = { sent: 0, answered: {} };
      tallies.push([body.name, tally]);
      running.push(attack(() => fetch(`${server.url}/1.1/classes/Big`, { method: 'POST', headers, body: text, signal: deadline() }), stop, tally));
    }
  }
  // The attackers get going (a body is on the wire) before the probe starts.
  await new Promise((done) => setTimeout(done, 300));
  const result = await probe(server.url, keys, ids, durationSec * 1000);
  stop.now = true;
  await Promise.race([Promise.all(running), new Promise((done) => setTimeout(done, 2500))]);
  const attacks = tallies.map(([name, t]) => `${name}: ${t.sent} sent, ${JSON.stringify(t.answered)}`).join('; ');
  const name = kinds.map((k) => (k === 'regex' ? 'hostile regex' : 'maximal bodies')).join(' + ');
  log(`${storeLabel} ${build.label} under ${name}: get-by-id p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, max ${fixed(result.max)} ms, ${result.requests} requests (${result.unanswered} unanswered); ${attacks}`);
  return { store: storeLabel, build: build.label, attack: name, probe: result, attacks };
}

interface LoadRow {
  store: string;
  build: string;
  scenario: string;
  result: LoadResult;
  cpu: number;
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  const loadBefore = loadavg();
  const started = new Date();
  const loadRows: LoadRow[] = [];
  const hostileRows: HostileRow[] = [];
  try {
    const chosen = builds.filter((b) => !process.env.BENCH_BUILDS || process.env.BENCH_BUILDS === b.label);
    for (const b of chosen) build(b.dir);
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-hardening-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    for (const storeLabel of ['SQLite', 'PostgreSQL']) {
      if (process.env.BENCH_STORES && !storeLabel.toLowerCase().startsWith(process.env.BENCH_STORES.toLowerCase())) continue;
      for (const b of chosen) {
        const dbName = `roost_bench_hardening_${b.label}`;
        const store = storeLabel === 'SQLite' ? { sqlitePath: join(dir, `${b.label}.sqlite`) } : { databaseUrl: await createDatabase(dbName) };
        if (store.databaseUrl) stack.push(() => dropDatabase(dbName));
        const keys = createApp(b.dir, roostEnv(store));
        let server = await startRoostIn(b.dir, `roost ${b.label} ${storeLabel}`, store);
        log(`${storeLabel} ${b.label}: seeding ${seedCount} objects`);
        const ids = await seed(server.url, keys);
        if (store.databaseUrl) await analyzeDatabase(store.databaseUrl);
        const headers = { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey };
        const scenarios = [
          { scenario: 'get-by-id', next: () => ({ path: `/1.1/classes/BenchItem/${ids[random(ids.length)]}` }) },
          {
            scenario: 'where',
            next: () => ({ path: `/1.1/classes/BenchItem?where=${encodeURIComponent(JSON.stringify({ group: random(groups) }))}&limit=20` }),
          },
        ];
        for (const s of scenarios) {
          const options = { url: server.url, connections, durationSec, headers, next: s.next };
          await warm(options);
          await quiesce([server.pid]);
          const cpuBefore = cpuTime(server.pid);
          const result = await load(options);
          const cpu = (cpuTime(server.pid) - cpuBefore) / result.durationSec;
          log(`${storeLabel} ${b.label} ${s.scenario}: ${fixed(result.rps)} req/s, p99 ${result.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`);
          loadRows.push({ store: storeLabel, build: b.label, scenario: s.scenario, result, cpu });
        }
        // Each attack on a fresh process: e2b2d15 never comes back from the hostile regex on SQLite.
        for (const kinds of [['bodies'], ['regex'], ['regex', 'bodies']] as Array<Array<'regex' | 'bodies'>>) {
          await quiesce([server.pid]);
          hostileRows.push(await underAttack(b, storeLabel, server, keys, ids, kinds));
          await server.stop();
          server = await startRoostIn(b.dir, `roost ${b.label} ${storeLabel}`, store);
        }
        await server.stop();
        if (store.databaseUrl) await dropDatabase(dbName);
      }
    }
  } finally {
    await stopAll();
  }
  const loadAfter = loadavg();

  const loadTable = table(
    ['store', 'scenario', 'before req/s', 'after req/s', 'after ÷ before', 'before p99 ms', 'after p99 ms', 'CPU µs/req before → after'],
    ['SQLite', 'PostgreSQL'].flatMap((store) =>
      ['get-by-id', 'where'].flatMap((scenario) => {
        const find = (build: string) => loadRows.find((r) => r.store === store && r.scenario === scenario && r.build === build);
        const before = find('before');
        const after = find('after');
        if (!before && !after) return [];
        const perReq = (r?: LoadRow) => (r ? fixed((r.cpu / r.result.rps) * 1e6) : '–');
        return [
          [
            store,
            scenario,
            before ? fixed(before.result.rps) : '–',
            after ? fixed(after.result.rps) : '–',
            before && after ? `${(after.result.rps / before.result.rps).toFixed(2)}` : '–',
            before ? before.result.p99 : '–',
            after ? after.result.p99 : '–',
            `${perReq(before)} → ${perReq(after)}`,
          ],
        ];
      }),
    ),
  );
  const hostileTable = table(
    ['store', 'build', 'attack', 'get-by-id p50 ms', 'p99 ms', 'max ms', 'probe requests (unanswered)', 'attackers'],
    hostileRows.map((r) => [
      r.store,
      r.build,
      r.attack,
      fixed(r.probe.p50, 1),
      fixed(r.probe.p99, 1),
      fixed(r.probe.max),
      `${r.probe.requests} (${r.probe.unanswered})`,
      r.attacks,
    ]),
  );
  const worstAfter = Math.max(...hostileRows.filter((r) => r.build === 'after').map((r) => r.probe.p99));
  const verdict = `- get-by-id p99 under attack, after: worst ${fixed(worstAfter, 1)} ms over stores and attacks (target < 100 ms): ${worstAfter < 100 ? 'met' : 'MISSED'}`;
  const machineState = `load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(1)).join(' ')} after`;
  const settings = `${connections} connections × ${durationSec} s per load run (after 3 s warm-up), ${seedCount} objects per store; where = \`{"group":<random of ${groups}>}\`, limit 20. Under attack: ${probeConnections} probe connections sending get-by-ids one after another for ${durationSec} s, one attacker per kind sending back to back (hostile regex: \`{"s":{"$regex":"(A+A+)+y"}}\` on a class holding one 60,000-character string of A; bodies: the largest each build accepts, of the shapes named in the attackers column, one attacker per shape)`;
  process.stdout.write(`\n${loadTable}\n\n${hostileTable}\n\n${verdict}\n\n${settings}\nmachine: ${machine()}, ${machineState}\n`);
  if (record) {
    recordSection(
      'hardening',
      `## Hardening (issue 13): what the limits cost, and get-by-id under attack

Run ${started.toISOString().replace(/\.\d+Z$/, 'Z')} on ${machine()}; ${machineState}.
"before" is e2b2d15 (before issue 13), "after" this checkout, each built into its own \`dist/\` and run as its own process (\`LOG_LEVEL=warn\`) on a database of its own. ${settings}.

${loadTable}

${hostileTable}

${verdict}

Reproduce: \`git worktree add /tmp/roost-e2b2d15 e2b2d15 && (cd /tmp/roost-e2b2d15 && npm ci)\`, then \`flock -x /tmp/roost-cpu.lock npm run bench:hardening\` (PostgreSQL on 127.0.0.1:5432, or \`BENCH_PG_URL\`). \`-- --record\` rewrites this section.`,
    );
  }
}

await main();
