// Class schemas (#16 point 6): the type check on the write path. A create and an update of fields the class
// knows (checked against each node's memory of the types, no round trip) against get-by-id in the same run
// (the yardstick), and a create in a class with a column default (read per class at most every APP_CACHE_MS),
// on SQLite and PostgreSQL.
//
//   npm run bench:schemas                 # prints the table
//   npm run bench:schemas -- --record     # also rewrites the "schemas" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (8),
// BENCH_OBJECTS class size (10000), BENCH_STORES=sqlite or postgres, BENCH_PG_URL (admin URL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
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
  roostDir,
  run,
  startStores,
  table,
  type AppKeys,
  type StoreScenario,
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 8);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const size = envNumber('BENCH_OBJECTS', 10_000);
const record = process.argv.includes('--record');
const className = 'Typed';

const objectIdOf = (n: number) => `typed${n.toString(16).padStart(19, '0')}`;
const fields = (n: number) => ({ title: `item ${n}`, n, done: n % 2 === 0, tags: ['bench'], at: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' } });

async function seed(env: NodeJS.ProcessEnv, keys: AppKeys, dir: string): Promise<void> {
  // The import teaches the class its types, as it does a migrated app's.
  await importClass(env, keys, dir, className, size, (i) => ({ objectId: objectIdOf(i), ...fields(i) }));
  run(process.execPath, [join(roostDir, 'bin', 'roost.js'), 'schema', 'set', '--app', keys.appId, 'Defaulted', '{"state": {"default": "new"}, "n": {"type": "Number"}}'], { env, cwd: roostDir });
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-schemas-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const list: StoreScenario[] = [];
    for (const { label, env, keys, server } of await startStores('schemas', dir, stack)) {
      log(`${label}: importing ${size} objects`);
      await seed(env, keys, dir);
      const headers = { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey };
      const random = () => Math.floor(Math.random() * size);
      const base = { url: server.url, connections, durationSec, headers };
      list.push(
        { name: 'get-by-id', store: label, options: { ...base, next: () => ({ path: `/1.1/classes/${className}/${objectIdOf(random())}` }) } },
        { name: 'create, 5 known fields', store: label, options: { ...base, method: 'POST', next: (i) => ({ path: `/1.1/classes/${className}`, body: fields(i) }) } },
        {
          name: 'update, 2 known fields',
          store: label,
          options: { ...base, method: 'PUT', next: (i) => ({ path: `/1.1/classes/${className}/${objectIdOf(random())}`, body: { n: i, done: true } }) },
        },
        { name: 'create with a column default', store: label, options: { ...base, method: 'POST', next: (i) => ({ path: '/1.1/classes/Defaulted', body: { n: i } }) } },
      );
    }
    const rows = (await measureAgainstYardstick(list, rounds)).map(({ scenario, rps, ratio, bad }) => [
      `${scenario.store} ${scenario.name}`,
      fixed(rps),
      percent(ratio),
      bad,
    ]);
    const headers = ['scenario', 'req/s (median)', 'vs get-by-id', 'non-2xx + errors'];
    const settings = `${size.toLocaleString('en')} objects imported with \`roost import\` (which teaches the class its types), app key, ${connections} connections, ${rounds} rounds × ${durationSec} s per scenario after 3 s warm-up`;
    const text = `${table(headers, rows)}\n\n${settings}\nmachine: ${machine()}`;
    process.stdout.write(`\n${text}\n`);
    if (record) {
      recordSection('schemas', `## Class schemas (#16 point 6): the type check on writes\n\nRun ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}.\n\n${text}\n\nReproduce: \`npm run bench:schemas\`; \`-- --record\` rewrites this section.`);
    }
  } finally {
    await stopAll();
  }
}

await main();
