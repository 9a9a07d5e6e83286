// Relations (#16 point 3): a page of `$relatedTo` on a relation of 100,000 members reads about a page of
// rows (one EXISTS probe of the relations primary key per row of the target class, in its index order),
// against get-by-id in the same run (the yardstick; the target is not below 25% of it) and a page of the
// class without a where (what any page of 20 costs), on SQLite and PostgreSQL. Beside it, for the record:
// the count of the relation, and the reverse query (the owners whose relation holds a post) among 10,000.
//
//   npm run bench:relations                 # prints the table
//   npm run bench:relations -- --record     # also rewrites the "relations" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (8),
// BENCH_MEMBERS relation size (100000), BENCH_STORES=sqlite or postgres, BENCH_PG_URL (admin URL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  analyzeDatabase,
  importClass,
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
  recordSection,
  roostEnv,
  run,
  startRoost,
  table,
  warm,
  type AppKeys,
  type LoadOptions,
  type ServerProcess,
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 8);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const members = envNumber('BENCH_MEMBERS', 100_000);
/** Posts in the class: one in five is no member, so a page skips over some rows as a real class would. */
const posts = Math.round(members * 1.25);
const owners = 10_000;
const pageSize = 20;
/** The most pointers one AddRelation may carry (hosted: 128 beyond). */
const perRequest = 1000;
const record = process.argv.includes('--record');

const postId = (n: number) => `b0${n.toString(16).padStart(22, '0')}`;
const ownerId = (n: number) => `c0${n.toString(16).padStart(22, '0')}`;
const isMember = (n: number) => n % 5 !== 4;


/** The posts and owners imported; the big relation written as clients write it, 1,000 pointers a request. */
async function seed(server: ServerProcess, env: NodeJS.ProcessEnv, keys: AppKeys, dir: string): Promise<void> {
  await importClass(env, keys, dir, 'RelPost', posts, (n) => ({ objectId: postId(n), title: `post ${n}`, n }));
  await importClass(env, keys, dir, 'RelOwner', owners, (n) => ({ objectId: ownerId(n), name: `owner ${n}` }));
  const headers = { 'content-type': 'application/json', 'x-lc-id': keys.appId, 'x-lc-key': `${keys.masterKey},master` };
  const ids = Array.from({ length: posts }, (_, n) => n).filter(isMember);
  for (let from = 0; from < ids.length; from += perRequest) {
    const objects = ids.slice(from, from + perRequest).map((n) => ({ __type: 'Pointer', className: 'RelPost', objectId: postId(n) }));
    const response = await fetch(`${server.url}/1.1/classes/RelOwner/${ownerId(0)}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ likes: { __op: 'AddRelation', objects } }),
    });
    if (!response.ok) throw new Error(`AddRelation: ${response.status} ${await response.text()}`);
  }
  // A few more owners hold a post each, so the reverse query has owners to find among the 10,000.
  for (let n = 1; n <= 10; n++) {
    const body = { likes: { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: 'RelPost', objectId: postId(n) }] } };
    const response = await fetch(`${server.url}/1.1/classes/RelOwner/${ownerId(n * 997)}`, { method: 'PUT', headers, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`AddRelation: ${response.status} ${await response.text()}`);
  }
}

interface Scenario {
  name: string;
  store: string;
  options: LoadOptions;
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-relations-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const list: Scenario[] = [];
    for (const label of ['SQLite', 'PostgreSQL'] as const) {
      if (process.env.BENCH_STORES && !label.toLowerCase().startsWith(process.env.BENCH_STORES)) continue;
      const database = label === 'PostgreSQL' ? 'roost_bench_relations' : undefined;
      const store = database ? { databaseUrl: await createDatabase(database) } : { sqlitePath: join(dir, 'relations.sqlite') };
      if (database) stack.push(() => dropDatabase(database));
      const env = roostEnv(store);
      const keys = createRoostApp(env);
      const server = await startRoost(`roost ${label}`, store);
      stack.push(() => server.stop());
      log(`${label}: importing ${posts} posts and ${owners} owners, adding ${members} members`);
      const started = Date.now();
      await seed(server, env, keys, dir);
      log(`${label}: seeded in ${fixed((Date.now() - started) / 1000, 1)} s`);
      if (store.databaseUrl) await analyzeDatabase(store.databaseUrl);
      // The app key: every query carries the ACL clause, as a client's does.
      const headers = { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey };
      const related = encodeURIComponent(JSON.stringify({ $relatedTo: { object: { __type: 'Pointer', className: 'RelOwner', objectId: ownerId(0) }, key: 'likes' } }));
      const pointer = (n: number) => encodeURIComponent(JSON.stringify({ likes: { __type: 'Pointer', className: 'RelPost', objectId: postId(n) } }));
      const paths: Array<[string, () => string]> = [
        ['get-by-id', () => `/1.1/classes/RelPost/${postId(Math.floor(Math.random() * posts))}`],
        [`page of ${pageSize}, no where (the page's own cost)`, () => `/1.1/classes/RelPost?limit=${pageSize}`],
        [`$relatedTo, page of ${pageSize}`, () => `/1.1/classes/RelPost?where=${related}&limit=${pageSize}`],
        [`$relatedTo, page of ${pageSize}, skip 1,000`, () => `/1.1/classes/RelPost?where=${related}&limit=${pageSize}&skip=1000`],
        [`$relatedTo, count of ${members.toLocaleString('en')}`, () => `/1.1/classes/RelPost?where=${related}&limit=0&count=1`],
        [`reverse query among ${owners.toLocaleString('en')} owners`, () => `/1.1/classes/RelOwner?where=${pointer(1 + Math.floor(Math.random() * 10))}`],
      ];
      for (const [name, next] of paths) {
        list.push({ name, store: label, options: { url: server.url, connections, durationSec, headers, next: () => ({ path: next() }) } });
      }
    }
    for (const scenario of list) await warm(scenario.options);
    const samples = new Map<Scenario, number[]>(list.map((s) => [s, []]));
    const bad = new Map<Scenario, number>(list.map((s) => [s, 0]));
    for (let round = 1; round <= rounds; round++) {
      for (const scenario of list) {
        const result = await load(scenario.options);
        samples.get(scenario)!.push(result.rps);
        bad.set(scenario, bad.get(scenario)! + result.non2xx + result.errors);
      }
    }
    const rows = list.map((scenario) => {
      const yardstick = list.find((s) => s.store === scenario.store)!;
      const ratio = median(samples.get(scenario)!.map((rps, i) => rps / samples.get(yardstick)![i]));
      return [`${scenario.store} ${scenario.name}`, fixed(median(samples.get(scenario)!)), percent(ratio), bad.get(scenario)!];
    });
    const headers = ['scenario', 'req/s (median)', 'vs get-by-id', 'non-2xx + errors'];
    const settings = `${members.toLocaleString('en')} members of one relation among ${posts.toLocaleString('en')} posts (imported with \`roost import\`, the members added with AddRelation, ${perRequest} a request), ${owners.toLocaleString('en')} owners (11 holding members); app key (the ACL clause in every query), ${connections} connections, ${rounds} rounds × ${durationSec} s per scenario after 3 s warm-up; target: \`$relatedTo\` page not below 25% of get-by-id`;
    const text = `${table(headers, rows)}\n\n${settings}\nmachine: ${machine()}`;
    process.stdout.write(`\n${text}\n`);
    if (record) {
      recordSection(
        'relations',
        `## Relations (#16 point 3): a page of a 100,000-member relation\n\nRun ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}.\n\n${text}\n\nReproduce: \`npm run bench:relations\`; \`-- --record\` rewrites this section.`,
      );
    }
  } finally {
    await stopAll();
  }
}

await main();
