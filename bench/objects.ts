// Issue 2's benchmark: get-by-id and a `where` query at concurrency 32, on SQLite and on
// PostgreSQL, against a bare Fastify route answering a fixed JSON in the same run (the yardstick).
//
//   npm run bench:objects                 # prints the table
//   npm run bench:objects -- --record     # also rewrites the "objects" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3),
// BENCH_CONNECTIONS (32), BENCH_OBJECTS seeded per store (10000), BENCH_PG_URL (admin URL),
// BENCH_PROFILE=1 runs the Roost processes with --cpu-prof into bench/profiles/ (summarise them with
// `node bench/profile-top.js FILE`), BENCH_STORES=sqlite or postgres runs one store only,
// BENCH_ONLY=get or where runs only those scenarios (and the yardstick).
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  analyzeDatabase,
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
  median,
  percent,
  quiesce,
  recordSection,
  roostEnv,
  startBare,
  startRoost,
  table,
  warm,
  type AppKeys,
  type LoadOptions,
  type LoadResult,
  type ServerProcess,
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 32);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const seedCount = envNumber('BENCH_OBJECTS', 10_000);
const groups = 100;
const whereLimit = 20;
const record = process.argv.includes('--record');
const profile = process.env.BENCH_PROFILE === '1';
const className = 'BenchItem';
const dbName = 'roost_bench_objects';

interface Target {
  label: string;
  server: ServerProcess;
  keys: AppKeys;
  ids: string[];
}

/** Seeds `seedCount` objects through /1.1/batch, 100 to a request; returns their ids. */
async function seed(target: { server: ServerProcess; keys: AppKeys }): Promise<string[]> {
  const ids: string[] = [];
  const perBatch = 100;
  for (let start = 0; start < seedCount; start += perBatch) {
    const requests = [];
    for (let i = start; i < Math.min(seedCount, start + perBatch); i++) {
      requests.push({
        method: 'POST',
        path: `/1.1/classes/${className}`,
        body: { title: `item ${i}`, group: i % groups, score: (i * 7919) % 10_000, tags: ['bench', `g${i % groups}`], owner: 'bench' },
      });
    }
    const response = await fetch(`${target.server.url}/1.1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-lc-id': target.keys.appId, 'x-lc-key': target.keys.appKey },
      body: JSON.stringify({ requests }),
    });
    const results = (await response.json()) as Array<{ success?: { objectId: string }; error?: unknown }>;
    if (!response.ok || !Array.isArray(results)) throw new Error(`seeding failed: ${response.status} ${JSON.stringify(results)}`);
    for (const result of results) {
      if (!result.success) throw new Error(`seeding failed: ${JSON.stringify(result)}`);
      ids.push(result.success.objectId);
    }
  }
  return ids;
}

function random(n: number): number {
  return Math.floor(Math.random() * n);
}

interface Scenario {
  name: string;
  server: ServerProcess;
  options: LoadOptions;
}

function scenarios(bare: ServerProcess, targets: Target[]): Scenario[] {
  const list: Scenario[] = [
    {
      name: 'bare fastify (fixed JSON)',
      server: bare,
      options: { url: bare.url, connections, durationSec, next: () => ({ path: '/bare' }) },
    },
  ];
  for (const target of targets) {
    const headers = { 'x-lc-id': target.keys.appId, 'x-lc-key': target.keys.appKey };
    list.push({
      name: `${target.label} get-by-id`,
      server: target.server,
      options: {
        url: target.server.url,
        connections,
        durationSec,
        headers,
        next: () => ({ path: `/1.1/classes/${className}/${target.ids[random(target.ids.length)]}` }),
      },
    });
    list.push({
      name: `${target.label} where query`,
      server: target.server,
      options: {
        url: target.server.url,
        connections,
        durationSec,
        headers,
        next: () => ({
          path: `/1.1/classes/${className}?where=${encodeURIComponent(JSON.stringify({ group: random(groups) }))}&limit=${whereLimit}`,
        }),
      },
    });
  }
  return list;
}

interface Sample extends LoadResult {
  round: number;
  /** CPU seconds the server process used per wall second during the run (1.0 = one core). */
  serverCpu: number;
}

async function measure(scenario: Scenario, round: number, pids: number[]): Promise<Sample> {
  await quiesce(pids);
  const before = cpuTime(scenario.server.pid);
  const result = await load(scenario.options);
  const used = cpuTime(scenario.server.pid) - before;
  const sample = { ...result, round, serverCpu: used / result.durationSec };
  log(
    `round ${round} ${scenario.name}: ${fixed(sample.rps)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms, server CPU ${sample.serverCpu.toFixed(2)}` +
      (sample.non2xx || sample.errors ? `, non-2xx ${sample.non2xx}, errors ${sample.errors} ${JSON.stringify(sample.statuses)}` : ''),
  );
  return sample;
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const nodeArgs = (name: string) => {
      if (!profile) return [];
      const dir = join(benchDir, 'profiles');
      mkdirSync(dir, { recursive: true });
      return ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', `objects-${name}-${Date.now()}.cpuprofile`];
    };

    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const sqlite = { sqlitePath: join(dir, 'bench.sqlite') };
    const postgres = { databaseUrl: await createDatabase(dbName) };
    stack.push(() => dropDatabase(dbName));

    const targets: Target[] = [];
    const only = process.env.BENCH_STORES;
    for (const [label, store] of [
      ['SQLite', sqlite],
      ['PostgreSQL', postgres],
    ] as const) {
      if (only && !label.toLowerCase().startsWith(only.toLowerCase())) continue;
      const keys = createRoostApp(roostEnv(store));
      const server = await startRoost(`roost ${label}`, store, nodeArgs(label.toLowerCase()));
      stack.push(() => server.stop());
      log(`${label}: Roost pid ${server.pid} at ${server.url}; seeding ${seedCount} objects`);
      const ids = await seed({ server, keys });
      if ('databaseUrl' in store) await analyzeDatabase(store.databaseUrl);
      targets.push({ label: `Roost ${label}`, server, keys, ids });
    }
    const bare = await startBare();
    stack.push(() => bare.stop());
    log(`bare fastify pid ${bare.pid} at ${bare.url}`);

    // BENCH_ONLY=get (or where) keeps the scenarios whose name has it, and the yardstick.
    const list = scenarios(bare, targets).filter(
      (s, i) => i === 0 || !process.env.BENCH_ONLY || s.name.includes(process.env.BENCH_ONLY),
    );
    log(`warming up (3 s each), then ${rounds} rounds × ${list.length} scenarios × ${durationSec} s at ${connections} connections`);
    for (const scenario of list) await warm(scenario.options);

    const samples = new Map<string, Sample[]>(list.map((s) => [s.name, []]));
    for (let round = 1; round <= rounds; round++) {
      const pids = [bare.pid, ...targets.map((t) => t.server.pid)];
      for (const scenario of list) samples.get(scenario.name)!.push(await measure(scenario, round, pids));
    }
    await stopAll();

    // Ratios are taken within a round (each against the yardstick of that round), then the median.
    const bareSamples = samples.get(list[0].name)!;
    const rows = list.map((scenario) => {
      const runs = samples.get(scenario.name)!;
      const ratio = median(runs.map((run, i) => run.rps / bareSamples[i].rps));
      return {
        name: scenario.name,
        rps: median(runs.map((run) => run.rps)),
        ratio,
        p50: median(runs.map((run) => run.p50)),
        p99: median(runs.map((run) => run.p99)),
        worstP99: Math.max(...runs.map((run) => run.p99)),
        cpu: median(runs.map((run) => run.serverCpu)),
        cpuPerRequest: median(runs.map((run) => (run.serverCpu / run.rps) * 1e6)),
        bad: runs.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
      };
    });
    const headers = ['scenario', 'req/s (median)', 'vs bare', 'p50 ms', 'p99 ms (median / worst)', 'server CPU', 'CPU µs/req', 'non-2xx + errors'];
    const body = rows.map((row) => [
      row.name,
      fixed(row.rps),
      percent(row.ratio),
      fixed(row.p50, 1),
      `${fixed(row.p99, 1)} / ${fixed(row.worstP99, 1)}`,
      row.cpu.toFixed(2),
      fixed(row.cpuPerRequest),
      row.bad,
    ]);
    const sqliteGet = rows.find((row) => row.name === 'Roost SQLite get-by-id') ?? { ratio: NaN, p99: NaN };
    const ratioOk = sqliteGet.ratio >= 0.4;
    const p99Ok = sqliteGet.p99 < 20;
    const verdict = [
      `- get-by-id on SQLite: ${percent(sqliteGet.ratio)} of the bare route's requests/s (target ≥ 40%): ${ratioOk ? 'met' : 'MISSED'}`,
      `- get-by-id on SQLite p99: ${fixed(sqliteGet.p99, 1)} ms (target < 20 ms): ${p99Ok ? 'met' : 'MISSED'}`,
    ].join('\n');
    const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const settings = `${connections} connections, ${rounds} rounds × ${durationSec} s per scenario (after 3 s warm-up), ${seedCount} objects per store; where = \`{"group":<random of ${groups}>}\`, limit ${whereLimit}`;
    process.stdout.write(`\n${table(headers, body)}\n\n${verdict}\n\n${settings}\nmachine: ${machine()}\n`);

    if (record) {
      recordSection(
        'objects',
        `## Objects (issue 2): get-by-id and \`where\` query, SQLite and PostgreSQL

Run ${when} on ${machine()}.
${settings}. Each server runs alone in its own process (built \`dist/\`, \`LOG_LEVEL=warn\`); autocannon runs in the bench process on the same two cores, so absolute figures are bounded by the machine — read the ratios. "vs bare" is the median over rounds of (scenario req/s ÷ bare route req/s in the same round); "server CPU" is CPU-seconds per second of the server process (1.00 = one core busy), "CPU µs/req" the server's CPU time per request.

${table(headers, body)}

${verdict}

Reproduce: \`npm install && npm run bench:objects\` (needs PostgreSQL on 127.0.0.1:5432, user postgres, trust; set \`BENCH_PG_URL\` otherwise). \`-- --record\` rewrites this section.`,
      );
    }
    if (!ratioOk || !p99Ok) process.exitCode = 1;
  } finally {
    await stopAll();
  }
}

await main();
