// Issue 3's benchmark: Roost against its peer, Parse Server, both on the local PostgreSQL, one
// process each, in one run: sign-up, login, users/me, get-by-id, update and a master-key query at
// concurrency 16; and the password-hash limit (argon2id checks per second with Roost's own
// parameters, on the same cores) measured between them.
//
//   npm run bench:accounts                # prints the table
//   npm run bench:accounts -- --record    # also rewrites the "accounts" section of bench/RESULTS.md
//
// The peer lives in bench/peer (own package.json and lockfile); this script installs it there with
// `npm ci` when its node_modules are missing. Knobs (environment): BENCH_DURATION seconds per
// measurement (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (16), BENCH_USERS seeded per server (200),
// BENCH_PG_URL (admin URL), BENCH_PROFILE=1 runs Roost with --cpu-prof into bench/profiles/,
// BENCH_ONLY=update,master runs only the scenarios whose names start with one of those words (no --record then).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ensurePeerInstalled, peerVersion, startBareLogin, startPeer } from './accounts-servers.ts';
import {
  analyzeDatabase,
  vacuumDatabase,
  benchDir,
  buildRoost,
  cleanup,
  cpuTime,
  createDatabase,
  createRoostApp,
  dropDatabase,
  envNumber,
  fixed,
  load,
  log,
  machine,
  mainThreadCpu,
  median,
  postgresCpu,
  postgresCpuSince,
  percent,
  quiesce,
  recordSection,
  roostDir,
  roostEnv,
  run,
  startRoost,
  table,
  warm,
  withAdmin,
  type LoadOptions,
  type LoadResult,
  type ServerProcess,
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 16);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const userCount = envNumber('BENCH_USERS', 200);
const record = process.argv.includes('--record');
const profile = process.env.BENCH_PROFILE === '1';
const password = 'bench-password-1';
const roostDb = 'roost_bench_accounts';
const peerDb = 'roost_bench_parse';

interface User {
  objectId: string;
  username: string;
  sessionToken: string;
}

/** What differs between the two servers: paths and headers. The bodies are the same. */
interface Flavour {
  label: string;
  server: ServerProcess;
  /** Its PostgreSQL database, whose backends' CPU is counted with it. */
  database: string;
  base: string;
  client: Record<string, string>;
  master: Record<string, string>;
  session: (token: string) => Record<string, string>;
  users: User[];
}

function random(n: number): number {
  return Math.floor(Math.random() * n);
}

async function call(
  flavour: Flavour,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<any> {
  const response = await fetch(flavour.server.url + flavour.base + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${flavour.label} ${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** Signs up `userCount` users (8 at a time) whose sessions the read and update scenarios use. */
async function seedUsers(flavour: Flavour, tag: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < userCount) {
      const i = next++;
      const username = `seed_${tag}_${i}`;
      const created = await call(flavour, 'POST', '/users', flavour.client, { username, password, nickname: `n${i}` });
      flavour.users.push({ objectId: created.objectId, username, sessionToken: created.sessionToken });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

interface Scenario {
  name: string;
  options: (flavour: Flavour, round: number) => LoadOptions;
}

const runTag = randomBytes(3).toString('hex');

const allScenarios: Scenario[] = [
  {
    name: 'sign-up',
    options: (f, round) => ({
      url: f.server.url,
      method: 'POST',
      connections,
      durationSec,
      headers: f.client,
      next: (i) => ({ path: `${f.base}/users`, body: { username: `u_${runTag}_${round}_${i}`, password } }),
    }),
  },
  {
    name: 'login',
    options: (f) => ({
      url: f.server.url,
      method: 'POST',
      connections,
      durationSec,
      headers: f.client,
      next: () => ({ path: `${f.base}/login`, body: { username: f.users[random(f.users.length)].username, password } }),
    }),
  },
  {
    name: 'users/me',
    options: (f) => ({
      url: f.server.url,
      connections,
      durationSec,
      headers: f.client,
      next: () => ({ path: `${f.base}/users/me`, headers: f.session(f.users[random(f.users.length)].sessionToken) }),
    }),
  },
  {
    name: 'get-by-id (own session)',
    options: (f) => ({
      url: f.server.url,
      connections,
      durationSec,
      headers: f.client,
      next: () => {
        const user = f.users[random(f.users.length)];
        return { path: `${f.base}/users/${user.objectId}`, headers: f.session(user.sessionToken) };
      },
    }),
  },
  {
    name: 'update (own session)',
    options: (f) => ({
      url: f.server.url,
      method: 'PUT',
      connections,
      durationSec,
      headers: f.client,
      next: (i) => {
        const user = f.users[random(f.users.length)];
        return {
          path: `${f.base}/users/${user.objectId}`,
          headers: f.session(user.sessionToken),
          body: { nickname: `n${i}`, score: i },
        };
      },
    }),
  },
  {
    name: 'master query (username =)',
    options: (f) => ({
      url: f.server.url,
      connections,
      durationSec,
      headers: f.master,
      next: () => ({
        path: `${f.base}/users?where=${encodeURIComponent(JSON.stringify({ username: f.users[random(f.users.length)].username }))}`,
      }),
    }),
  },
];

const only = process.env.BENCH_ONLY?.split(',').filter((word) => word !== '');
const scenarioList = only ? allScenarios.filter((scenario) => only.some((word) => scenario.name.startsWith(word))) : allScenarios;

interface Sample extends LoadResult {
  serverCpu: number;
  /** CPU-seconds per second of the server's main thread (the event loop); the rest of serverCpu is its other threads. */
  mainCpu: number;
  /** CPU-seconds per second of the server's own database's backends (and PostgreSQL's shared processes). */
  databaseCpu: number;
  /** CPU-seconds per second of this process (autocannon, the client), on the same cores. */
  clientCpu: number;
}

async function measure(flavour: Flavour, scenario: Scenario, round: number, all: Flavour[]): Promise<Sample> {
  await quiesce(all.map((f) => f.server.pid));
  const before = cpuTime(flavour.server.pid);
  const mainBefore = mainThreadCpu(flavour.server.pid);
  const databaseBefore = postgresCpu(flavour.database);
  const clientBefore = process.cpuUsage();
  const result = await load(scenario.options(flavour, round));
  const client = process.cpuUsage(clientBefore);
  const sample = {
    ...result,
    serverCpu: (cpuTime(flavour.server.pid) - before) / result.durationSec,
    mainCpu: (mainThreadCpu(flavour.server.pid) - mainBefore) / result.durationSec,
    databaseCpu: postgresCpuSince(databaseBefore, flavour.database) / result.durationSec,
    clientCpu: (client.user + client.system) / 1e6 / result.durationSec,
  };
  log(
    `round ${round} ${flavour.label} ${scenario.name}: ${fixed(sample.rps, 1)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms, CPU ${sample.serverCpu.toFixed(2)} (main thread ${sample.mainCpu.toFixed(2)}), PostgreSQL ${sample.databaseCpu.toFixed(2)}` +
      (sample.non2xx || sample.errors ? `, non-2xx ${sample.non2xx}, errors ${sample.errors} ${JSON.stringify(sample.statuses)}` : ''),
  );
  return sample;
}

interface HashLimit {
  rate: number;
  /** Each way it was measured (checks in flight, rate); `rate` is the better. */
  ways?: Array<{ workers: number; rate: number }>;
  params: Record<string, number>;
  threads: number;
  cpu: number;
}

function measureHashLimit(): HashLimit {
  const out = run(process.execPath, [join(benchDir, 'hash-limit.js'), roostDir, String(connections), String(durationSec)]);
  const result = JSON.parse(out) as HashLimit;
  log(`hash limit: ${fixed(result.rate, 1)} argon2id checks/s (CPU ${result.cpu.toFixed(2)}; ${JSON.stringify(result.ways)}) with ${JSON.stringify(result.params)}`);
  return result;
}

function meVerdict(ratio: number): string {
  return `- users/me: Roost ${ratio.toFixed(2)}× Parse Server's requests/s (target ≥ 10×, issue 14): ${ratio >= 10 ? 'met' : 'MISSED'}`;
}

/** Milliseconds of CPU a login: the server's main thread, its other threads (the hashes), its PostgreSQL backends, the client. */
function loginCpu(runs: Sample[]): string {
  const ms = (pick: (run: Sample) => number) => median(runs.map((run) => (pick(run) / run.rps) * 1000)).toFixed(2);
  return `${ms((run) => run.mainCpu)} / ${ms((run) => run.serverCpu - run.mainCpu)} / ${ms((run) => run.databaseCpu)} / ${ms((run) => run.clientCpu)}`;
}

/**
 * Each round's login against the hash limit measured around it, and against the floor (the bare login run in
 * the same bracket); what a login costs in checks, and where its CPU goes.
 */
function loginVerdict(runs: Sample[], floor: Sample[], hashLimits: HashLimit[]): string {
  const hashRate = median(hashLimits.map((h) => h.rate));
  const loginShare = median(runs.map((run, i) => run.rps / hashLimits[i].rate));
  const floorShare = median(floor.map((run, i) => run.rps / hashLimits[i].rate));
  const ofFloor = median(runs.map((run, i) => run.rps / floor[i].rps));
  const loginCpuMs = median(runs.map((run) => (run.serverCpu / run.rps) * 1000));
  const hashCpuMs = median(hashLimits.map((h) => (h.cpu / h.rate) * 1000));
  const params = hashLimits[0].params;
  return [
    `- login: ${percent(loginShare)} of the password-hash limit (target ≥ 90%): ${loginShare >= 0.9 ? 'met' : 'MISSED'} — ${fixed(median(runs.map((run) => run.rps)), 1)} logins/s against ${fixed(hashRate, 1)} argon2id checks/s (memoryCost ${params.memoryCost} KiB, timeCost ${params.timeCost}, parallelism ${params.parallelism}; ${hashLimits[0].threads} libuv threads, the better of ${(hashLimits[0].ways ?? [{ workers: connections }]).map((w) => w.workers).join(' and ')} checks at a time)`,
    `- the floor: a bare login (bench/bare-login.js: the same user read with its attempt counted, hash and clear, nothing else) ${fixed(median(floor.map((run) => run.rps)), 1)} logins/s, ${percent(floorShare)} of the limit; Roost ${percent(ofFloor)} of the floor`,
    `- CPU time: ${hashCpuMs.toFixed(1)} ms per bare argon2id check, ${loginCpuMs.toFixed(1)} ms per Roost login (everything a login costs the server, hash included): a login costs ${(loginCpuMs / hashCpuMs).toFixed(2)} checks' worth of CPU`,
    `- CPU a login, main thread / other threads (hash) / PostgreSQL / the client (autocannon), ms: Roost ${loginCpu(runs)}, the floor ${loginCpu(floor)}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    ensurePeerInstalled();

    const roostUrl = await createDatabase(roostDb);
    stack.push(() => dropDatabase(roostDb));
    const peerUrl = await createDatabase(peerDb);
    stack.push(() => dropDatabase(peerDb));

    const store = { databaseUrl: roostUrl };
    const keys = createRoostApp(roostEnv(store));
    const nodeArgs: string[] = [];
    if (profile) {
      const dir = join(benchDir, 'profiles');
      mkdirSync(dir, { recursive: true });
      nodeArgs.push('--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', `accounts-roost-${Date.now()}.cpuprofile`);
    }
    const roostServer = await startRoost('roost PostgreSQL', store, nodeArgs);
    stack.push(() => roostServer.stop());
    const peer = await startPeer(peerUrl);
    stack.push(() => peer.server.stop());
    log(`Roost pid ${roostServer.pid} at ${roostServer.url}; Parse Server pid ${peer.server.pid} at ${peer.server.url}`);

    const roost: Flavour = {
      label: 'Roost',
      server: roostServer,
      database: roostDb,
      base: '/1.1',
      client: { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey },
      master: { 'x-lc-id': keys.appId, 'x-lc-key': `${keys.masterKey},master` },
      session: (token) => ({ 'x-lc-session': token }),
      users: [],
    };
    const parse: Flavour = {
      label: 'Parse Server',
      server: peer.server,
      database: peerDb,
      base: '/parse',
      client: { 'x-parse-application-id': peer.keys.appId, 'x-parse-rest-api-key': peer.keys.restKey },
      master: { 'x-parse-application-id': peer.keys.appId, 'x-parse-master-key': peer.keys.masterKey },
      session: (token) => ({ 'x-parse-session-token': token }),
      users: [],
    };
    const flavours = [roost, parse];
    // The floor of a login: Roost's database, users and client, only a login's unavoidable work (bench/bare-login.js).
    const bareServer = await startBareLogin(roostUrl, keys.appId);
    stack.push(() => bareServer.stop());
    const bare: Flavour = { ...roost, label: 'bare login', server: bareServer, base: '', client: {}, master: {} };
    const all = [...flavours, bare];
    const login = scenarioList.find((scenario) => scenario.name === 'login');

    log(`seeding ${userCount} users on each`);
    for (const flavour of flavours) await seedUsers(flavour, flavour === roost ? 'r' : 'p');
    // Planner statistics for both, as autovacuum would gather them (it is off on this machine).
    await analyzeDatabase(roostUrl);
    await analyzeDatabase(peerUrl);

    log(`warming up (2 s per scenario and server), then ${rounds} rounds × ${scenarioList.length} scenarios × 2 servers × ${durationSec} s at ${connections} connections`);
    for (const scenario of scenarioList) {
      for (const flavour of flavours) await warm(scenario.options(flavour, 0), 2);
    }
    if (login) await warm(login.options(bare, 0), 2);

    const samples = new Map<string, Sample[]>();
    // The hash limit of a round is measured right before and right after Roost's login run and the bare
    // login's (one after the other) and averaged, so login is read against the machine as it was then.
    const hashLimits: HashLimit[] = [];
    const pids = all.map((f) => f.server.pid);
    for (let round = 1; round <= rounds; round++) {
      for (const scenario of scenarioList) {
        // Both databases as autovacuum (off on this machine) would leave them between two runs.
        await vacuumDatabase(roostUrl);
        await vacuumDatabase(peerUrl);
        // Alternate which server goes first, so neither always runs on the warmer machine.
        const contenders = scenario === login ? [roost, bare, parse] : flavours;
        const order = round % 2 ? contenders : [...contenders].reverse();
        const hashed = (flavour?: Flavour) => scenario === login && (flavour === roost || flavour === bare);
        let before: HashLimit | null = null;
        for (const [i, flavour] of order.entries()) {
          const key = `${flavour.label}/${scenario.name}`;
          if (!samples.has(key)) samples.set(key, []);
          if (hashed(flavour) && !hashed(order[i - 1])) {
            await quiesce(pids);
            before = measureHashLimit();
          }
          samples.get(key)!.push(await measure(flavour, scenario, round, all));
          if (before && !hashed(order[i + 1])) {
            await quiesce(pids);
            const after = measureHashLimit();
            hashLimits.push({
              ...before,
              rate: (before.rate + after.rate) / 2,
              cpu: (before.cpu + after.cpu) / 2,
            });
            before = null;
          }
        }
      }
    }
    await stopAll();

    const rows = scenarioList.map((scenario) => {
      const r = samples.get(`Roost/${scenario.name}`)!;
      const p = samples.get(`Parse Server/${scenario.name}`)!;
      const ratios = r.map((run, i) => run.rps / p[i].rps);
      return {
        name: scenario.name,
        roost: median(r.map((run) => run.rps)),
        parse: median(p.map((run) => run.rps)),
        ratio: median(ratios),
        roostP99: median(r.map((run) => run.p99)),
        parseP99: median(p.map((run) => run.p99)),
        roostCpu: median(r.map((run) => run.serverCpu)),
        roostMicros: median(r.map((run) => (run.serverCpu / run.rps) * 1e6)),
        roostDatabaseMicros: median(r.map((run) => (run.databaseCpu / run.rps) * 1e6)),
        parseCpu: median(p.map((run) => run.serverCpu)),
        bad: `${r.reduce((s, run) => s + run.non2xx + run.errors, 0)} / ${p.reduce((s, run) => s + run.non2xx + run.errors, 0)}`,
        roostRuns: r,
      };
    });
    const headers = [
      'scenario',
      'Roost req/s',
      'Parse req/s',
      'Roost ÷ Parse',
      'p99 ms Roost / Parse',
      'CPU Roost / Parse',
      'Roost CPU µs/req (+ PostgreSQL)',
      'non-2xx Roost / Parse',
    ];
    const body = rows.map((row) => [
      row.name,
      fixed(row.roost, 1),
      fixed(row.parse, 1),
      `${row.ratio.toFixed(2)}×`,
      `${fixed(row.roostP99)} / ${fixed(row.parseP99)}`,
      `${row.roostCpu.toFixed(2)} / ${row.parseCpu.toFixed(2)}`,
      `${fixed(row.roostMicros)} + ${fixed(row.roostDatabaseMicros)}`,
      row.bad,
    ]);
    const me = rows.find((row) => row.name === 'users/me');
    const loginRow = rows.find((row) => row.name === 'login');
    const verdict = [me && meVerdict(me.ratio), loginRow && loginVerdict(loginRow.roostRuns, samples.get('bare login/login')!, hashLimits)].filter((line) => line).join('\n');
    const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const settings = `${connections} connections, ${rounds} rounds × ${durationSec} s per scenario and server (after 2 s warm-up), ${userCount} seeded users per server; Parse Server ${peerVersion()} (bcrypt cost 10 via @node-rs/bcrypt) and Roost both on PostgreSQL ${await pgVersion()}`;
    process.stdout.write(`\n${table(headers, body)}\n\n${verdict}\n\n${settings}\nmachine: ${machine()}\n`);

    if (record && !only) {
      recordSection(
        'accounts',
        `## Accounts (issue 3): Roost against Parse Server, and the password-hash limit

Run ${when} on ${machine()}.
${settings}. Each server runs in its own process (Roost: built \`dist/\`, \`LOG_LEVEL=warn\`; Parse Server: \`bench/peer/server.js\`, log level error); autocannon runs in the bench process on the same cores. Servers alternate within each round; "Roost ÷ Parse" is the median over rounds of the per-round ratio. The hash limit is measured in its own process right before and right after Roost's login run of every round (\`bench/hash-limit.js\`: argon2id \`verify\` with Roost's exported \`passwordParams\`, the better of ${connections} at a time on libuv's default pool and one per core as Roost's PasswordHasher runs them), and login is read against the mean of the two. Between the two, in the same bracket, runs the floor: a bare login server (\`bench/bare-login.js\`, its own process: Fastify, pg, the same binding one check per core, on Roost's database and users, the same two statements a Roost login makes, a small JSON answer) under the same client. Sign-up and login differ in cost on purpose: Roost hashes with argon2id (19 MiB, 2 passes), Parse Server with bcrypt (cost 10).

${table(headers, body)}

${verdict}

Reproduce: \`npm install && npm run bench:accounts\` (installs bench/peer with \`npm ci\` on first use; needs PostgreSQL on 127.0.0.1:5432, user postgres, trust, or \`BENCH_PG_URL\`). \`-- --record\` rewrites this section.`,
      );
    }
    if (verdict.includes('MISSED')) process.exitCode = 1;
  } finally {
    await stopAll();
  }
}

async function pgVersion(): Promise<string> {
  try {
    return await withAdmin(async (client) => {
      const { rows } = await client.query('SHOW server_version');
      return String(rows[0].server_version).split(' ')[0];
    });
  } catch {
    return '?';
  }
}

await main();
