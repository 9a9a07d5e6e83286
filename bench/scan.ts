// Scan (#16 point 7): a page of GET /1.1/scan/classes/<C> at the start, the middle and the end of a
// class costs the same (keyset paging on the objectId), against get-by-id in the same run (the
// yardstick), the first REST page in the same order (what the scan's run through the class route adds)
// and a REST page at the middle with `skip` (what scan replaces), on SQLite and PostgreSQL.
//
//   npm run bench:scan                 # prints the table
//   npm run bench:scan -- --record     # also rewrites the "scan" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (8),
// BENCH_OBJECTS class size (200000), BENCH_STORES=sqlite or postgres, BENCH_PG_URL (admin URL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  importClass,
  analyzeDatabase,
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
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 8);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const size = envNumber('BENCH_OBJECTS', 200_000);
const pageSize = 100;
const record = process.argv.includes('--record');
const className = 'ScanItem';

/** Ids in a shuffled order of creation, so the objectId order is not the insertion order. */
function objectIdOf(n: number): string {
  return ((n * 2_654_435_761) % 2 ** 32).toString(16).padStart(8, '0') + n.toString(16).padStart(16, '0');
}

async function seed(env: NodeJS.ProcessEnv, keys: AppKeys, dir: string): Promise<void> {
  await importClass(env, keys, dir, className, size, (i) => ({ objectId: objectIdOf(i), title: `item ${i}`, n: i, tags: ['bench'] }));
}

/** The cursors of the pages at the start (none), the middle and the end, found by walking the scan in pages of 1,000. */
async function cursorsAtDepth(server: ServerProcess, headers: Record<string, string>): Promise<{ middle: string; end: string }> {
  const cursors: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const response = await fetch(`${server.url}/1.1/scan/classes/${className}?limit=1000${query}`, { headers });
    if (!response.ok) throw new Error(`scan: ${response.status} ${await response.text()}`);
    cursor = ((await response.json()) as { cursor: string | null }).cursor;
    if (cursor) cursors.push(cursor);
  } while (cursor);
  return { middle: cursors[Math.floor(cursors.length / 2)], end: cursors[cursors.length - 2] };
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-scan-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const list: StoreScenario[] = [];
    for (const { label, store, env, keys, server } of await startStores('scan', dir, stack)) {
      log(`${label}: importing ${size} objects`);
      await seed(env, keys, dir);
      if (store.databaseUrl) await analyzeDatabase(store.databaseUrl);
      const headers = { 'x-lc-id': keys.appId, 'x-lc-key': `${keys.masterKey},master` };
      const { middle, end } = await cursorsAtDepth(server, headers);
      const scan = (cursor?: string) => `/1.1/scan/classes/${className}?limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const paths: Array<[string, () => string]> = [
        ['get-by-id', () => `/1.1/classes/${className}/${objectIdOf(Math.floor(Math.random() * size))}`],
        [`scan page of ${pageSize}, start`, () => scan()],
        [`scan page of ${pageSize}, middle`, () => scan(middle)],
        [`scan page of ${pageSize}, end`, () => scan(end)],
        // The same page as a REST find: what running the find through the class route adds.
        [`REST page of ${pageSize} by objectId, first`, () => `/1.1/classes/${className}?order=objectId&limit=${pageSize}`],
        [`REST page of ${pageSize} by objectId, skip ${size / 2}`, () => `/1.1/classes/${className}?order=objectId&limit=${pageSize}&skip=${size / 2}`],
      ];
      for (const [name, next] of paths) {
        list.push({ name, store: label, options: { url: server.url, connections, durationSec, headers, next: () => ({ path: next() }) } });
      }
    }
    const rows = (await measureAgainstYardstick(list, rounds)).map(({ scenario, rps, ratio, bad }) => [
      `${scenario.store} ${scenario.name}`,
      fixed(rps),
      percent(ratio),
      bad,
    ]);
    const headers = ['scenario', 'req/s (median)', 'vs get-by-id', 'non-2xx + errors'];
    const settings = `${size.toLocaleString('en')} objects imported with \`roost import\` (ids not in insertion order), master key, ${connections} connections, ${rounds} rounds × ${durationSec} s per scenario after 3 s warm-up; "middle" and "end" are the cursors of the pages of 1,000 at half and at the end of the class`;
    const text = `${table(headers, rows)}\n\n${settings}\nmachine: ${machine()}`;
    process.stdout.write(`\n${text}\n`);
    if (record) {
      recordSection('scan', `## Scan (#16 point 7): a page costs the same at any depth\n\nRun ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}.\n\n${text}\n\nReproduce: \`npm run bench:scan\`; \`-- --record\` rewrites this section.`);
    }
  } finally {
    await stopAll();
  }
}

await main();
