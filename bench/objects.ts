// Objects: get-by-id, `where` equality on an indexed field and a range with `order` on an indexed field,
// at concurrency 32, on SQLite and on PostgreSQL, at one or more class sizes, against a bare Fastify
// route answering a fixed JSON in the same run (the yardstick). Issues 2 and 14.
//
//   npm run bench:objects                 # prints the table
//   npm run bench:objects -- --record     # also rewrites the "objects" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3),
// BENCH_CONNECTIONS (32), BENCH_OBJECTS class sizes, comma-separated (100000; "10000,1000000" measures
// how cost grows with data), BENCH_PG_URL (admin URL), BENCH_PROFILE=1 runs the Roost processes with
// --cpu-prof into a folder per server under bench/profiles/ (summarise one with `node bench/profile-top.js FOLDER`),
// BENCH_STORES=sqlite or postgres runs one store only, BENCH_ONLY=get, where or range (or a list: get,where) runs only those
// scenarios (and the yardstick), `floor` the floor rows (bench/floor.ts). Classes are seeded with `roost import` (an export written to a temporary
// folder) and get their indexes through POST /1.1/indexes, as an operator would.
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  importClass,
  analyzeDatabase,
  benchDir,
  buildRoost,
  cleanup,
  cpuTime,
  createDatabase,
  createRoostApp,
  declareIndex,
  dropDatabase,
  envNumber,
  fixed,
  load,
  log,
  machine,
  median,
  percent,
  postgresCpu,
  postgresCpuSince,
  quiesce,
  recordSection,
  roostEnv,
  run,
  startBare,
  startRoost,
  table,
  warm,
  type AppKeys,
  type LoadOptions,
  type LoadResult,
  type ServerProcess,
} from './lib.ts';
import { floorLine, startFloor } from './floor.ts';

const connections = envNumber('BENCH_CONNECTIONS', 32);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const sizes = (process.env.BENCH_OBJECTS ?? '100000').split(',').map((n) => Number(n));
const groups = 100;
const scoreRange = 1_000_000;
const pageSize = 20;
const record = process.argv.includes('--record');
const profile = process.env.BENCH_PROFILE === '1';
const className = 'BenchItem';

interface Target {
  label: string;
  server: ServerProcess;
  keys: AppKeys;
  size: number;
  /** The PostgreSQL database, to count its backends' CPU. */
  database?: string;
  /** The floor over the same class (bench/floor.ts). */
  floor: ServerProcess;
}

function objectIdOf(n: number): string {
  return n.toString(16).padStart(24, '0');
}


/** Imports the class and declares the two indexes the queries use (group; score), then waits for them. */
async function seed(target: { server: ServerProcess; keys: AppKeys; size: number }, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  await importClass(env, target.keys, dir, className, target.size, (i) => ({
    objectId: objectIdOf(i),
    title: `item ${i}`,
    group: i % groups,
    score: (i * 7919) % scoreRange,
    tags: ['bench', `g${i % groups}`],
    owner: 'bench',
  }));
  for (const [name, keys] of [['byGroup', { group: 1 }], ['byScore', { score: 1 }]] as const) {
    await declareIndex(target.server.url, target.keys, className, name, keys);
  }
}

function random(n: number): number {
  return Math.floor(Math.random() * n);
}

type Kind = 'get' | 'where' | 'range' | 'floor-get' | 'floor-where';

interface Scenario {
  name: string;
  kind: Kind | 'bare';
  target?: Target;
  server: ServerProcess;
  options: LoadOptions;
}

function scenarios(bare: ServerProcess, targets: Target[]): Scenario[] {
  const list: Scenario[] = [
    { name: 'bare fastify (fixed JSON)', kind: 'bare', server: bare, options: { url: bare.url, connections, durationSec, next: () => ({ path: '/bare' }) } },
  ];
  const query = (where: unknown, extra = '') => `/1.1/classes/${className}?where=${encodeURIComponent(JSON.stringify(where))}&limit=${pageSize}${extra}`;
  const paths: Record<Kind, (target: Target) => string> = {
    get: (target) => `/1.1/classes/${className}/${objectIdOf(random(target.size))}`,
    // 20 of the size/100 objects of a group, in the default order.
    where: () => query({ group: random(groups) }),
    // The first 20 scores from a random point up.
    range: () => query({ score: { $gte: random(scoreRange - 1000) } }, '&order=score'),
    'floor-get': (target) => `/floor/get/${objectIdOf(random(target.size))}`,
    'floor-where': () => `/floor/where/${random(groups)}`,
  };
  const names: Record<Kind, string> = {
    get: 'get-by-id',
    where: 'where group (indexed)',
    range: 'range score + order',
    'floor-get': 'floor: bare get-by-id',
    'floor-where': 'floor: bare where page',
  };
  for (const target of targets) {
    const headers = { 'x-lc-id': target.keys.appId, 'x-lc-key': target.keys.appKey };
    for (const kind of ['get', 'where', 'range', 'floor-get', 'floor-where'] as const) {
      const server = kind.startsWith('floor') ? target.floor : target.server;
      list.push({
        name: `${target.label} ${names[kind]}`,
        kind,
        target,
        server,
        options: { url: server.url, connections, durationSec, headers, next: () => ({ path: paths[kind](target) }) },
      });
    }
  }
  return list;
}

interface Sample extends LoadResult {
  round: number;
  /** CPU seconds the server process used per wall second during the run (1.0 = one core). */
  serverCpu: number;
  /** The same for the PostgreSQL backends of the target's database (0 on SQLite). */
  databaseCpu: number;
}

async function measure(scenario: Scenario, round: number, pids: number[]): Promise<Sample> {
  await quiesce(pids);
  const database = scenario.target?.database;
  const pgBefore = database ? postgresCpu(database) : null;
  const before = cpuTime(scenario.server.pid);
  const result = await load(scenario.options);
  const used = cpuTime(scenario.server.pid) - before;
  const databaseCpu = pgBefore ? postgresCpuSince(pgBefore, database) / result.durationSec : 0;
  const sample = { ...result, round, serverCpu: used / result.durationSec, databaseCpu };
  log(
    `round ${round} ${scenario.name}: ${fixed(sample.rps)} req/s, p50 ${sample.p50} ms, p99 ${sample.p99} ms, server CPU ${sample.serverCpu.toFixed(2)}, database CPU ${databaseCpu.toFixed(2)}` +
      (sample.non2xx || sample.errors ? `, non-2xx ${sample.non2xx}, errors ${sample.errors} ${JSON.stringify(sample.statuses)}` : ''),
  );
  return sample;
}

async function startTargets(dir: string, stack: Array<() => unknown>): Promise<Target[]> {
  const nodeArgs = (name: string) => {
    if (!profile) return [];
    // A folder per server, with Node's own file names: a fixed --cpu-prof-name was written by every thread of the
    // process (files/md5.ts runs a worker), and the worker's nearly empty profile, written last, was the one kept.
    const profiles = join(benchDir, 'profiles', `objects-${name}-${Date.now()}`);
    mkdirSync(profiles, { recursive: true });
    return ['--cpu-prof', '--cpu-prof-dir', profiles];
  };
  const targets: Target[] = [];
  const only = process.env.BENCH_STORES;
  for (const size of sizes) {
    for (const label of ['SQLite', 'PostgreSQL'] as const) {
      if (only && !label.toLowerCase().startsWith(only.toLowerCase())) continue;
      const database = label === 'PostgreSQL' ? `roost_bench_objects_${size}` : undefined;
      const store = database ? { databaseUrl: await createDatabase(database) } : { sqlitePath: join(dir, `bench-${size}.sqlite`) };
      if (database) stack.push(() => dropDatabase(database));
      const env = roostEnv(store);
      const keys = createRoostApp(env);
      const server = await startRoost(`roost ${label}`, store, nodeArgs(`${label.toLowerCase()}-${size}`));
      stack.push(() => server.stop());
      log(`${label}: Roost pid ${server.pid} at ${server.url}; importing ${size} objects and building two indexes`);
      const started = performance.now();
      await seed({ server, keys, size }, env, dir);
      if (store.databaseUrl) await analyzeDatabase(store.databaseUrl);
      log(`${label} ${size}: seeded in ${fixed((performance.now() - started) / 1000, 1)} s`);
      const floor = await startFloor(label, store, { url: server.url, appId: keys.appId, appKey: keys.appKey, className });
      stack.push(() => floor.stop());
      const suffix = sizes.length > 1 ? ` ${size.toLocaleString('en')}` : '';
      targets.push({ label: `Roost ${label}${suffix}`, server, keys, size, database, floor });
    }
  }
  return targets;
}

interface Row {
  name: string;
  kind: Scenario['kind'];
  target?: Target;
  rps: number;
  ratio: number;
  p50: number;
  p99: number;
  worstP99: number;
  cpu: number;
  cpuPerRequest: number;
  databasePerRequest: number;
  bad: number;
}

/** Target lines: each ratio against what the issue asks, from the rows of one run. */
function verdicts(rows: Row[]): string[] {
  const lines: string[] = [];
  const get = (target: Target | undefined) => rows.find((r) => r.target === target && r.kind === 'get');
  for (const row of rows) {
    if (!row.target) continue;
    const store = row.target.database ? 'PostgreSQL' : 'SQLite';
    if (row.kind === 'get') {
      const wanted = store === 'PostgreSQL' ? 0.4 : 0.5;
      lines.push(`- ${row.name}: ${percent(row.ratio)} of the bare route (target ≥ ${percent(wanted)}): ${row.ratio >= wanted ? 'met' : 'MISSED'}`);
    } else if (row.kind === 'floor-where') {
      const of = (kind: Kind) => rows.find((r) => r.target === row.target && r.kind === kind);
      const [get, where, floorGet] = [of('get'), of('where'), of('floor-get')].map((r) => r && { rps: r.rps, cpu: r.cpuPerRequest });
      if (get && where && floorGet) lines.push(floorLine(row.target.label, { get, where, floorGet, floorWhere: { rps: row.rps, cpu: row.cpuPerRequest } }));
    } else if (row.kind !== 'floor-get') {
      const base = get(row.target);
      if (!base) continue; // BENCH_ONLY without get: no yardstick for this row
      const share = row.rps / base.rps;
      const wanted = row.kind === 'where' ? 0.5 : 0.3;
      lines.push(`- ${row.name}: ${percent(share)} of get-by-id on the same class (target ≥ ${percent(wanted)}): ${share >= wanted ? 'met' : 'MISSED'}`);
    }
  }
  if (sizes.length > 1) {
    const [small, large] = [Math.min(...sizes), Math.max(...sizes)];
    for (const row of rows.filter((r) => r.target?.size === large && (r.kind === 'get' || r.kind === 'where'))) {
      const twin = rows.find((r) => r.kind === row.kind && r.target?.size === small && !!r.target.database === !!row.target!.database)!;
      const change = row.rps / twin.rps;
      lines.push(`- ${row.name} at ${large.toLocaleString('en')} ÷ at ${small.toLocaleString('en')}: ${percent(change)} (target ≥ 80%): ${change >= 0.8 ? 'met' : 'MISSED'}`);
    }
  }
  return lines;
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const targets = await startTargets(dir, stack);
    const bare = await startBare();
    stack.push(() => bare.stop());
    log(`bare fastify pid ${bare.pid} at ${bare.url}`);

    const list = scenarios(bare, targets).filter((s) => s.kind === 'bare' || !process.env.BENCH_ONLY || process.env.BENCH_ONLY.split(',').includes(s.kind.startsWith('floor') ? 'floor' : s.kind));
    log(`warming up (3 s each), then ${rounds} rounds × ${list.length} scenarios × ${durationSec} s at ${connections} connections`);
    for (const scenario of list) await warm(scenario.options);

    const samples = new Map<string, Sample[]>(list.map((s) => [s.name, []]));
    for (let round = 1; round <= rounds; round++) {
      const pids = [bare.pid, ...targets.flatMap((t) => [t.server.pid, t.floor.pid])];
      for (const scenario of list) samples.get(scenario.name)!.push(await measure(scenario, round, pids));
    }
    await stopAll();

    // Ratios are taken within a round (each against the yardstick of that round), then the median.
    const bareSamples = samples.get(list[0].name)!;
    const rows: Row[] = list.map((scenario) => {
      const runs = samples.get(scenario.name)!;
      return {
        name: scenario.name,
        kind: scenario.kind,
        target: scenario.target,
        rps: median(runs.map((r) => r.rps)),
        ratio: median(runs.map((r, i) => r.rps / bareSamples[i].rps)),
        p50: median(runs.map((r) => r.p50)),
        p99: median(runs.map((r) => r.p99)),
        worstP99: Math.max(...runs.map((r) => r.p99)),
        cpu: median(runs.map((r) => r.serverCpu)),
        cpuPerRequest: median(runs.map((r) => (r.serverCpu / r.rps) * 1e6)),
        databasePerRequest: median(runs.map((r) => (r.databaseCpu / r.rps) * 1e6)),
        bad: runs.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
      };
    });
    const headers = ['scenario', 'req/s (median)', 'vs bare', 'p50 ms', 'p99 ms (median / worst)', 'server CPU', 'CPU µs/req', 'PostgreSQL CPU µs/req', 'non-2xx + errors'];
    const body = rows.map((row) => [
      row.name,
      fixed(row.rps),
      percent(row.ratio),
      fixed(row.p50, 1),
      `${fixed(row.p99, 1)} / ${fixed(row.worstP99, 1)}`,
      row.cpu.toFixed(2),
      fixed(row.cpuPerRequest),
      row.target?.database ? fixed(row.databasePerRequest) : '–',
      row.bad,
    ]);
    const verdict = verdicts(rows).join('\n');
    const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const settings = `${connections} connections, ${rounds} rounds × ${durationSec} s per scenario (after 3 s warm-up); classes of ${sizes.map((n) => n.toLocaleString('en')).join(' and ')} objects imported with \`roost import\`, indexes on \`group\` and \`score\` declared with POST /1.1/indexes; where = \`{"group":<random of ${groups}>}\`, range = \`{"score":{"$gte":<random>}}&order=score\`, limit ${pageSize}`;
    process.stdout.write(`\n${table(headers, body)}\n\n${verdict}\n\n${settings}\nmachine: ${machine()}\n`);

    if (record) {
      recordSection(
        'objects',
        `## Objects (issues 2 and 14): get-by-id, indexed \`where\` and range queries, SQLite and PostgreSQL

Run ${when} on ${machine()}.
${settings}. Each server runs alone in its own process (built \`dist/\`, \`LOG_LEVEL=warn\`); autocannon runs in the bench process on the same two cores as the servers and PostgreSQL, so absolute figures are bounded by the machine — read the ratios. "vs bare" is the median over rounds of (scenario req/s ÷ bare route req/s in the same round); "server CPU" is CPU-seconds per second of the server process (1.00 = one core busy), "CPU µs/req" the server's CPU time per request, "PostgreSQL CPU µs/req" that of the database's backends. The floor rows are bench/floor-server.js over the same class: a bare Fastify route with the same driver running one prepared primary-key lookup (get-by-id) or the SQL Roost sends for the \`where\` page (20 rows), its rows' stored JSON spliced with the id and dates, and nothing else of Roost: what any server must do, so the floor's own where ÷ get-by-id is what this host allows the target.

${table(headers, body)}

${verdict}

Reproduce: \`npm install && npm run bench:objects\` (needs PostgreSQL on 127.0.0.1:5432, user postgres, trust; set \`BENCH_PG_URL\` otherwise); \`BENCH_OBJECTS=10000,1000000\` for the scaling rows. \`-- --record\` rewrites this section.`,
      );
    }
  } finally {
    await stopAll();
  }
}

await main();
