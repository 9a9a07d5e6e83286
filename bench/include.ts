// include (issue #16 point 1): a query of 20 posts, each with 2 pointers included (author, category), side by
// side in the same run with get-by-id on the same class and the same query without include, on SQLite and on
// PostgreSQL. The target: the include query at least 25% of get-by-id's requests per second.
//
//   npm run bench:include                 # prints the table
//   npm run bench:include -- --record     # also rewrites the "include" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (32),
// BENCH_POSTS (10000), BENCH_STORES=sqlite or postgres runs one store only, BENCH_PG_URL (admin URL),
// BENCH_KINDS=include (or get, query; comma-separated) runs only those scenarios, BENCH_PROFILE=1 (bench/lib.ts).
// Seeded through /1.1/batch with the master key; an index on the posts' `group` is declared with POST /1.1/indexes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sameValues, startFloor } from './floor.ts';
import {
  analyzeDatabase,
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
  postgresCpu,
  postgresCpuSince,
  profileArgs,
  quiesce,
  recordSection,
  roostEnv,
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
const postCount = envNumber('BENCH_POSTS', 10_000);
const pageSize = 20;
const groups = Math.max(1, Math.floor(postCount / pageSize));
const authorCount = 1000;
const categoryCount = 50;
const record = process.argv.includes('--record');

interface Target {
  label: string;
  server: ServerProcess;
  keys: AppKeys;
  postIds: string[];
  /** The PostgreSQL target's database (its backends' CPU is logged beside the server's). */
  database?: string;
  /** The floor over the same classes (bench/floor-server.js): get-by-id and the include page with nothing of Roost. */
  floor: ServerProcess;
}

async function call(target: { server: ServerProcess; keys: AppKeys }, method: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${target.server.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-lc-id': target.keys.appId, 'x-lc-key': `${target.keys.masterKey},master` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** Creates objects 500 to a batch; answers their ids in order. */
async function createAll(target: { server: ServerProcess; keys: AppKeys }, className: string, bodies: unknown[]): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < bodies.length; start += 500) {
    const requests = bodies.slice(start, start + 500).map((body) => ({ method: 'POST', path: `/1.1/classes/${className}`, body }));
    const results = (await call(target, 'POST', '/1.1/batch', { requests })) as Array<{ success?: { objectId: string } }>;
    for (const result of results) {
      if (!result.success) throw new Error(`seeding ${className}: ${JSON.stringify(result)}`);
      ids.push(result.success.objectId);
    }
  }
  return ids;
}

const random = (n: number) => Math.floor(Math.random() * n);
const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });

/** Authors and categories, then posts pointing at one of each, `pageSize` posts a group. */
async function seed(target: { server: ServerProcess; keys: AppKeys }): Promise<string[]> {
  await call(target, 'POST', '/1.1/indexes/IncPost', { name: 'byGroup', keys: { group: 1 } });
  const authors = await createAll(target, 'IncAuthor', Array.from({ length: authorCount }, (_, i) => ({ name: `author ${i}`, bio: 'x'.repeat(200), followers: i })));
  const categories = await createAll(target, 'IncCategory', Array.from({ length: categoryCount }, (_, i) => ({ title: `category ${i}`, rank: i })));
  const posts = Array.from({ length: postCount }, (_, i) => ({
    title: `post ${i}`,
    group: i % groups,
    score: i,
    author: pointer('IncAuthor', authors[random(authorCount)]),
    category: pointer('IncCategory', categories[random(categoryCount)]),
  }));
  return createAll(target, 'IncPost', posts);
}

type Kind = 'get' | 'query' | 'include' | 'floor-get' | 'floor-include' | 'floor-include1';
const kinds: Array<[Kind, string]> = [
  ['get', 'get-by-id'],
  ['query', `query of ${pageSize} (indexed where), no include`],
  ['include', `query of ${pageSize} with include=author,category`],
  ['floor-get', 'floor: bare get-by-id'],
  ['floor-include', 'floor: bare include page'],
  ['floor-include1', 'floor: include page in one statement'],
];

interface Scenario {
  name: string;
  kind: Kind;
  target: Target;
  /** The process answering: Roost, or the floor. */
  server: ServerProcess;
  options: LoadOptions;
}

function scenarios(targets: Target[]): Scenario[] {
  const query = (include: string) =>
    `/1.1/classes/IncPost?where=${encodeURIComponent(JSON.stringify({ group: random(groups) }))}&limit=${pageSize}${include}`;
  const paths: Record<Kind, (target: Target) => string> = {
    get: (target) => `/1.1/classes/IncPost/${target.postIds[random(target.postIds.length)]}`,
    query: () => query(''),
    include: () => query('&include=author,category'),
    'floor-get': (target) => `/floor/get/${target.postIds[random(target.postIds.length)]}`,
    'floor-include': () => `/floor/include/${random(groups)}`,
    'floor-include1': () => `/floor/include1/${random(groups)}`,
  };
  const only = process.env.BENCH_KINDS?.split(',');
  return targets.flatMap((target) => {
    const headers = { 'x-lc-id': target.keys.appId, 'x-lc-key': target.keys.appKey };
    // The one-statement floor is PostgreSQL's (a round trip less); SQLite's statements run in process.
    const offered = kinds.filter(([kind]) => kind !== 'floor-include1' || target.database !== undefined);
    return offered.filter(([kind]) => !only || only.includes(kind)).map(([kind, label]) => ({
      name: `${target.label} ${label}`,
      kind,
      target,
      server: kind.startsWith('floor') ? target.floor : target.server,
      options: { url: (kind.startsWith('floor') ? target.floor : target.server).url, connections, durationSec, headers, next: () => ({ path: paths[kind](target) }) },
    }));
  });
}

interface Sample extends LoadResult {
  serverCpu: number;
}

async function measure(scenario: Scenario, pids: number[]): Promise<Sample> {
  await quiesce(pids);
  const before = cpuTime(scenario.server.pid);
  const { database } = scenario.target;
  const databaseBefore = database === undefined ? null : postgresCpu(database);
  const result = await load(scenario.options);
  const serverCpu = (cpuTime(scenario.server.pid) - before) / result.durationSec;
  const perRequest = (cpu: number) => `${fixed((cpu / result.durationSec / result.rps) * 1e6)} µs/req`;
  const databaseCpu = databaseBefore === null ? '' : `, PostgreSQL CPU ${perRequest(postgresCpuSince(databaseBefore, database))}`;
  log(`${scenario.name}: ${fixed(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, server CPU ${serverCpu.toFixed(2)} (${perRequest(serverCpu * result.durationSec)})${databaseCpu}` +
    (result.non2xx || result.errors ? `, non-2xx ${result.non2xx}, errors ${result.errors} ${JSON.stringify(result.statuses)}` : ''));
  return { ...result, serverCpu };
}

/** The floor's include page holds what Roost's does (the same values: the floor sends the stored keys' order). */
async function sameIncludePage(label: string, server: ServerProcess, keys: AppKeys, floor: ServerProcess): Promise<void> {
  const where = encodeURIComponent(JSON.stringify({ group: 7 }));
  const roost = await fetch(`${server.url}/1.1/classes/IncPost?where=${where}&limit=${pageSize}&include=author,category`, { headers: { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey } });
  const roostText = await roost.text();
  const floorText = await (await fetch(`${floor.url}/floor/include/7`)).text();
  const joinedText = label === 'PostgreSQL' ? await (await fetch(`${floor.url}/floor/include1/7`)).text() : floorText;
  if (!sameValues(roostText, floorText) || !sameValues(roostText, joinedText)) throw new Error(`floor ${label}: its include page is not Roost's:\n${floorText.slice(0, 600)}\n${roostText.slice(0, 600)}`);
}

async function startTargets(dir: string, stack: Array<() => unknown>): Promise<Target[]> {
  const targets: Target[] = [];
  const only = process.env.BENCH_STORES;
  for (const label of ['SQLite', 'PostgreSQL'] as const) {
    if (only && !label.toLowerCase().startsWith(only.toLowerCase())) continue;
    const database = label === 'PostgreSQL' ? 'roost_bench_include' : undefined;
    const store = database ? { databaseUrl: await createDatabase(database) } : { sqlitePath: join(dir, 'bench-include.sqlite') };
    if (database) stack.push(() => dropDatabase(database));
    const keys = createRoostApp(roostEnv(store));
    const server = await startRoost(`roost ${label}`, store, profileArgs());
    stack.push(() => server.stop());
    const started = performance.now();
    const postIds = await seed({ server, keys });
    if (store.databaseUrl) await analyzeDatabase(store.databaseUrl);
    log(`${label}: ${authorCount} authors, ${categoryCount} categories, ${postCount} posts seeded in ${fixed((performance.now() - started) / 1000, 1)} s`);
    const floor = await startFloor(label, store, { url: server.url, appId: keys.appId, appKey: keys.appKey, className: 'IncPost' });
    stack.push(() => floor.stop());
    await sameIncludePage(label, server, keys, floor);
    targets.push({ label: `Roost ${label}`, server, keys, postIds, database, floor });
  }
  return targets;
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-include-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const targets = await startTargets(dir, stack);
    const list = scenarios(targets);
    log(`warming up (3 s each), then ${rounds} rounds × ${list.length} scenarios × ${durationSec} s at ${connections} connections`);
    for (const scenario of list) await warm(scenario.options);
    const samples = new Map<Scenario, Sample[]>(list.map((s) => [s, []]));
    const pids = targets.flatMap((t) => [t.server.pid, t.floor.pid]);
    for (let round = 1; round <= rounds; round++) {
      for (const scenario of list) samples.get(scenario)!.push(await measure(scenario, pids));
    }
    await stopAll();

    // Ratios within a round (each against get-by-id of the same store in that round; a floor row against the
    // floor's), then the median.
    const getOf = (target: Target, kind: Kind) => samples.get(list.find((s) => s.target === target && s.kind === kind)!) ?? [];
    const rows = list.map((scenario) => {
      const runs = samples.get(scenario)!;
      const gets = getOf(scenario.target, scenario.kind.startsWith('floor') ? 'floor-get' : 'get');
      return {
        scenario,
        rps: median(runs.map((r) => r.rps)),
        ratio: median(runs.map((r, i) => r.rps / (gets[i]?.rps ?? NaN))),
        p50: median(runs.map((r) => r.p50)),
        p99: median(runs.map((r) => r.p99)),
        cpuPerRequest: median(runs.map((r) => (r.serverCpu / r.rps) * 1e6)),
        bad: runs.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
      };
    });
    const headers = ['scenario', 'req/s (median)', 'vs get-by-id', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'non-2xx + errors'];
    const body = rows.map((row) => [row.scenario.name, fixed(row.rps), percent(row.ratio), fixed(row.p50, 1), fixed(row.p99, 1), fixed(row.cpuPerRequest), row.bad]);
    const verdict = rows
      .filter((row) => row.scenario.kind === 'include')
      .map((row) => {
        const plain = rows.find((r) => r.scenario.target === row.scenario.target && r.scenario.kind === 'query') ?? { rps: NaN };
        const floor = rows.find((r) => r.scenario.target === row.scenario.target && r.scenario.kind === 'floor-include');
        const floorGet = rows.find((r) => r.scenario.target === row.scenario.target && r.scenario.kind === 'floor-get');
        const get = rows.find((r) => r.scenario.target === row.scenario.target && r.scenario.kind === 'get');
        const floorLine =
          floor && floorGet && get
            ? `; the floor's include page ${percent(floor.ratio)} of the floor's get-by-id (${percent(floorGet.cpuPerRequest / floor.cpuPerRequest)} by CPU a request), Roost's ${percent(get.cpuPerRequest / row.cpuPerRequest)} by CPU a request; Roost's include page costs ${(row.cpuPerRequest / floor.cpuPerRequest).toFixed(2)}× the floor's CPU, its get-by-id ${(get.cpuPerRequest / floorGet.cpuPerRequest).toFixed(2)}×`
            : '';
        return `- ${row.scenario.name}: ${percent(row.ratio)} of get-by-id (target ≥ 25%): ${row.ratio >= 0.25 ? 'met' : 'MISSED'}; ${percent(row.rps / plain.rps)} of the same query without include${floorLine}`;
      })
      .join('\n');
    const settings = `${connections} connections, ${rounds} rounds × ${durationSec} s per scenario (after 3 s warm-up); ${postCount.toLocaleString('en')} posts (each pointing at one of ${authorCount} authors and one of ${categoryCount} categories), query \`where={"group":<random>}&limit=${pageSize}\` on a declared index, include=author,category`;
    process.stdout.write(`\n${table(headers, body)}\n\n${verdict}\n\n${settings}\nmachine: ${machine()}\n`);
    if (record) {
      const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      recordSection(
        'include',
        `## include (issue 16 point 1): a page of 20 with two pointers included, against get-by-id

Run ${when} on ${machine()}.
${settings}. Each server runs alone in its own process (built \`dist/\`, \`LOG_LEVEL=warn\`); "vs get-by-id" is the median over rounds of (scenario req/s ÷ get-by-id req/s on the same store in the same round).

${table(headers, body)}

${verdict}

Reproduce: \`npm run bench:include\` (needs PostgreSQL on 127.0.0.1:5432, user postgres, trust; set \`BENCH_PG_URL\` otherwise). \`-- --record\` rewrites this section.`,
      );
    }
  } finally {
    await stopAll();
  }
}

await main();
