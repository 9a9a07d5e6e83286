// Geo queries (issue #16 point 5): `$nearSphere` with `$maxDistanceInKilometers` on a class of 100,000
// GeoPoints, a page of 20 nearest first, side by side with get-by-id and an indexed equality on the same
// class in the same run, on SQLite and on PostgreSQL; read as ratios to get-by-id (target: near ≥ 25%).
//
//   npm run bench:geo                 # prints the table
//   npm run bench:geo -- --record     # also rewrites the "geo" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS
// (32), BENCH_OBJECTS (100000), BENCH_STORES=sqlite or postgres, BENCH_PG_URL (admin URL). The class is
// seeded with `roost import` (an export written to a temporary folder); the equality's index is declared
// with POST /1.1/indexes. Points lie uniformly over about 200 × 200 km (around Shanghai), so a 2 km
// circle holds about 30 of them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  importClass,
  analyzeDatabase,
  buildRoost,
  cleanup,
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
  profileArgs,
  cpuTime,
  quiesce,
  recordSection,
  roostEnv,
  run,
  startRoost,
  table,
  warm,
  type AppKeys,
  type LoadOptions,
  type ServerProcess,
  declareIndex,
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 32);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const size = envNumber('BENCH_OBJECTS', 100_000);
const record = process.argv.includes('--record');
const className = 'BenchPlace';
const pageSize = 20;
const groups = 100;
const radiusKm = 2;
const region = { south: 30.3, north: 32.1, west: 120.4, east: 122.5 };

interface Target {
  label: string;
  server: ServerProcess;
  keys: AppKeys;
}

const objectIdOf = (n: number) => n.toString(16).padStart(24, '0');
const between = (low: number, high: number) => low + Math.random() * (high - low);


async function seed(target: Target, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  await importClass(env, target.keys, dir, className, size, (i) => {
    const location = { __type: 'GeoPoint', latitude: between(region.south, region.north), longitude: between(region.west, region.east) };
    return { objectId: objectIdOf(i), title: `place ${i}`, group: i % groups, location };
  });
  await declareIndex(target.server.url, target.keys, className, 'byGroup', { group: 1 });
}

type Kind = 'get' | 'where' | 'near' | 'nearest';
const kindNames: Record<Kind, string> = {
  get: 'get-by-id',
  where: 'where group (indexed)',
  near: `$nearSphere within ${radiusKm} km`,
  nearest: '$nearSphere, no bound',
};

function pathOf(kind: Kind): string {
  const query = (where: unknown) => `/1.1/classes/${className}?where=${encodeURIComponent(JSON.stringify(where))}&limit=${pageSize}`;
  const here = () => ({ __type: 'GeoPoint', latitude: between(region.south + 0.1, region.north - 0.1), longitude: between(region.west + 0.1, region.east - 0.1) });
  switch (kind) {
    case 'get':
      return `/1.1/classes/${className}/${objectIdOf(Math.floor(Math.random() * size))}`;
    case 'where':
      return query({ group: Math.floor(Math.random() * groups) });
    case 'near':
      return query({ location: { $nearSphere: here(), $maxDistanceInKilometers: radiusKm } });
    case 'nearest':
      return query({ location: { $nearSphere: here() } });
  }
}

async function startTargets(dir: string, stack: Array<() => unknown>): Promise<Target[]> {
  const targets: Target[] = [];
  for (const label of ['SQLite', 'PostgreSQL'] as const) {
    const only = process.env.BENCH_STORES;
    if (only && !label.toLowerCase().startsWith(only.toLowerCase())) continue;
    const database = label === 'PostgreSQL' ? 'roost_bench_geo' : undefined;
    const store = database ? { databaseUrl: await createDatabase(database) } : { sqlitePath: join(dir, 'bench-geo.sqlite') };
    if (database) stack.push(() => dropDatabase(database));
    const env = roostEnv(store);
    const keys = createRoostApp(env);
    const server = await startRoost(`roost ${label}`, store, profileArgs());
    stack.push(() => server.stop());
    const started = performance.now();
    const target = { label: `Roost ${label}`, server, keys };
    await seed(target, env, dir);
    if (store.databaseUrl) await analyzeDatabase(store.databaseUrl);
    log(`${label}: ${size} places seeded in ${fixed((performance.now() - started) / 1000, 1)} s`);
    targets.push(target);
  }
  return targets;
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-geo-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const targets = await startTargets(dir, stack);
    const list = targets.flatMap((target) =>
      (['get', 'where', 'near', 'nearest'] as const).map((kind) => {
        const headers = { 'x-lc-id': target.keys.appId, 'x-lc-key': target.keys.appKey };
        const options: LoadOptions = { url: target.server.url, connections, durationSec, headers, next: () => ({ path: pathOf(kind) }) };
        return { name: `${target.label} ${kindNames[kind]}`, kind, target, options };
      }),
    );
    for (const scenario of list) await warm(scenario.options);
    const samples = new Map(list.map((s) => [s.name, [] as Array<{ rps: number; p50: number; p99: number; bad: number }>]));
    for (let round = 1; round <= rounds; round++) {
      for (const scenario of list) {
        await quiesce(targets.map((t) => t.server.pid));
        const before = cpuTime(scenario.target.server.pid);
        const result = await load(scenario.options);
        const cpuMicros = ((cpuTime(scenario.target.server.pid) - before) / (result.rps * result.durationSec)) * 1e6;
        log(`round ${round} ${scenario.name}: ${fixed(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, server CPU ${fixed(cpuMicros)} µs a request`);
        samples.get(scenario.name)!.push({ rps: result.rps, p50: result.p50, p99: result.p99, bad: result.non2xx + result.errors });
      }
    }
    await stopAll();

    // Each ratio within a round (against that round's get-by-id on the same store), then the median.
    const rows = list.map((scenario) => {
      const runs = samples.get(scenario.name)!;
      const gets = samples.get(`${scenario.target.label} ${kindNames.get}`)!;
      return {
        scenario,
        rps: median(runs.map((r) => r.rps)),
        ratio: median(runs.map((r, i) => r.rps / gets[i].rps)),
        p50: median(runs.map((r) => r.p50)),
        p99: median(runs.map((r) => r.p99)),
        bad: runs.reduce((sum, r) => sum + r.bad, 0),
      };
    });
    const headers = ['scenario', 'req/s (median)', 'vs get-by-id', 'p50 ms', 'p99 ms', 'non-2xx + errors'];
    const body = rows.map((r) => [r.scenario.name, fixed(r.rps), percent(r.ratio), fixed(r.p50, 1), fixed(r.p99, 1), r.bad]);
    const verdict = rows
      .filter((r) => r.scenario.kind === 'near')
      .map((r) => `- ${r.scenario.name}: ${percent(r.ratio)} of get-by-id on the same class (target ≥ 25%): ${r.ratio >= 0.25 ? 'met' : 'MISSED'}`)
      .join('\n');
    const settings = `${connections} connections, ${rounds} rounds × ${durationSec} s per scenario (after 3 s warm-up); a class of ${size.toLocaleString('en')} GeoPoints uniform over ${region.south}–${region.north}° N, ${region.west}–${region.east}° E, imported with \`roost import\`, an index on \`group\` declared; near = \`{"location":{"$nearSphere":<random point>,"$maxDistanceInKilometers":${radiusKm}}}\` (about 30 within), limit ${pageSize}`;
    process.stdout.write(`\n${table(headers, body)}\n\n${verdict}\n\n${settings}\nmachine: ${machine()}\n`);
    if (record) {
      const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      recordSection(
        'geo',
        `## Geo queries (issue 16 point 5): \`$nearSphere\` on 100,000 points against get-by-id, SQLite and PostgreSQL

Run ${when} on ${machine()}.
${settings}. "vs get-by-id" is the median over rounds of (scenario req/s ÷ get-by-id req/s on the same store in the same round).

${table(headers, body)}

${verdict}

Reproduce: \`npm install && npm run bench:geo\` (PostgreSQL on 127.0.0.1:5432 as for bench:objects). \`-- --record\` rewrites this section.`,
      );
    }
  } finally {
    await stopAll();
  }
}

await main();
