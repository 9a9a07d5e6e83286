// Subqueries (#16 point 4): a page of 20 of `{"post":{"$inQuery":{"className":"SqbPost","where":{"category":N}}}}`
// over two classes of 100,000 objects with indexes on the fields both sides read (SqbPost.category,
// SqbComment.post.objectId), against get-by-id in the same run (the yardstick), on SQLite and PostgreSQL.
// The subquery is SQL inside the one statement: its 100 matches (the default limit) select the comments.
//
//   npm run bench:subqueries                 # prints the table
//   npm run bench:subqueries -- --record     # also rewrites the "subqueries" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (32),
// BENCH_OBJECTS objects per class (100000), BENCH_STORES=sqlite or postgres, BENCH_PG_URL (admin URL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFloor } from './floor.ts';
import {
  analyzeDatabase,
  importClass,
  buildRoost,
  cleanup,
  envNumber,
  fixed,
  log,
  machine,
  measureAgainstYardstick,
  percent,
  recordSection,
  run,
  startStores,
  table,
  type AppKeys,
  type ServerProcess,
  type StoreScenario,
  declareIndex,
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 32);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const size = envNumber('BENCH_OBJECTS', 100_000);
const categories = 1000;
const pageSize = 20;
const target = 0.25;
const record = process.argv.includes('--record');

const postId = (n: number) => 'a' + n.toString(16).padStart(23, '0');
const commentId = (n: number) => 'c' + n.toString(16).padStart(23, '0');



/** Posts in `categories` categories; each comment points at a post (7919 is prime to the size: one comment a post). */
async function seed(server: ServerProcess, env: NodeJS.ProcessEnv, keys: AppKeys, dir: string): Promise<void> {
  await importClass(env, keys, dir, 'SqbPost', size, (i) => ({ objectId: postId(i), category: i % categories, n: i }));
  await importClass(env, keys, dir, 'SqbComment', size, (i) => ({
    objectId: commentId(i),
    post: { __type: 'Pointer', className: 'SqbPost', objectId: postId((i * 7919) % size) },
    n: i,
  }));
  await declareIndex(server.url, keys, 'SqbPost', 'byCategory', { category: 1 });
  await declareIndex(server.url, keys, 'SqbComment', 'byPost', { 'post.objectId': 1 });
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-subqueries-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const list: StoreScenario[] = [];
    for (const { label, store, env, keys, server } of await startStores('subqueries', dir, stack)) {
      log(`${label}: importing two classes of ${size} objects and declaring their indexes`);
      await seed(server, env, keys, dir);
      if (store.databaseUrl) await analyzeDatabase(store.databaseUrl);
      const headers = { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey };
      const random = (n: number) => Math.floor(Math.random() * n);
      const inQuery = () => {
        const where = { post: { $inQuery: { className: 'SqbPost', where: { category: random(categories) } } } };
        return `/1.1/classes/SqbComment?where=${encodeURIComponent(JSON.stringify(where))}&limit=${pageSize}`;
      };
      const paths: Array<[string, () => string]> = [
        ['get-by-id', () => `/1.1/classes/SqbComment/${commentId(random(size))}`],
        [`$inQuery page of ${pageSize} (100 matches inside)`, inQuery],
      ];
      // One request first, so a broken scenario fails here rather than as a table of errors.
      const check = await fetch(server.url + inQuery(), { headers });
      const body = (await check.json()) as { results?: unknown[] };
      if (!check.ok || body.results?.length !== pageSize) throw new Error(`$inQuery: ${check.status} ${JSON.stringify(body).slice(0, 300)}`);
      for (const [name, next] of paths) {
        list.push({ name, store: label, options: { url: server.url, connections, durationSec, headers, next: () => ({ path: next() }) } });
      }
      // The floor (bench/floor-server.js): a bare route with the same driver sending the same statement; its own yardstick.
      const floorCheck = { query: `where=${encodeURIComponent(JSON.stringify({ post: { $inQuery: { className: 'SqbPost', where: { category: 7 } } } }))}&limit=${pageSize}`, floorPath: '/floor/inquery/7' };
      const floor = await startFloor(label, store, { url: server.url, appId: keys.appId, appKey: keys.appKey, className: 'SqbComment' }, floorCheck);
      stack.push(() => floor.stop());
      const floorPaths: Array<[string, () => string]> = [
        ['bare get-by-id', () => `/floor/get/${commentId(random(size))}`],
        ['bare $inQuery page', () => `/floor/inquery/${random(categories)}`],
      ];
      for (const [name, next] of floorPaths) {
        list.push({ name, store: `${label} floor`, options: { url: floor.url, connections, durationSec, headers: {}, next: () => ({ path: next() }) } });
      }
    }
    const measured = await measureAgainstYardstick(list, rounds);
    const verdicts = measured
      .filter(({ scenario }) => !scenario.name.endsWith('get-by-id'))
      .map(({ scenario, ratio }) => `- ${scenario.store} ${scenario.name}: ${percent(ratio)} of get-by-id (target ≥ ${percent(target)})${scenario.store.endsWith('floor') ? ' (of the floor\'s get-by-id: what the host allows)' : `: ${ratio >= target ? 'met' : 'MISSED'}`}`);
    const rows = measured.map(({ scenario, rps, ratio, bad }) => [`${scenario.store} ${scenario.name}`, fixed(rps), percent(ratio), bad]);
    const headers = ['scenario', 'req/s (median)', 'vs get-by-id', 'non-2xx + errors'];
    const settings = `two classes of ${size.toLocaleString('en')} objects imported with \`roost import\` (SqbPost: \`category\` of ${categories}, index byCategory; SqbComment: \`post\` a pointer, one comment a post, index on \`post.objectId\`), app key, ${connections} connections, ${rounds} rounds × ${durationSec} s per scenario after 3 s warm-up; the subquery's where is \`{"category":<random>}\` (100 posts, the default subquery limit)`;
    const text = `${table(headers, rows)}\n\n${verdicts.join('\n')}\n\n${settings}\nmachine: ${machine()}`;
    process.stdout.write(`\n${text}\n`);
    if (record) {
      recordSection('subqueries', `## Subqueries (#16 point 4): an $inQuery page against get-by-id\n\nRun ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}.\n\n${text}\n\nReproduce: \`npm run bench:subqueries\`; \`-- --record\` rewrites this section.`);
    }
  } finally {
    await stopAll();
  }
}

await main();
