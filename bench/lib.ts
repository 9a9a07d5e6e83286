import { createHash } from 'node:crypto';
// Shared helpers of the benchmarks: processes under test, databases, autocannon runs, tables.
// Every server under test runs in its own process; autocannon runs in this one.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { once } from 'node:events';
import { cpus, totalmem, release, type } from 'node:os';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const benchDir = join(root, 'bench');
/** The checkout whose build is measured: this one, unless BENCH_ROOST_DIR names another (e.g. an older commit). */
export const roostDir = process.env.BENCH_ROOST_DIR ?? root;

export { pgAdminUrl, databaseUrl, withAdmin, createDatabase, analyzeDatabase, vacuumDatabase, dropDatabase } from './databases.ts';
export { cpuTime, mainThreadCpu, postgresCpu, postgresCpuSince } from './cpu.ts';
export { load, warm, type LoadOptions, type LoadResult } from './load.ts';
import { load, warm, type LoadOptions } from './load.ts';
import { cpuTime } from './cpu.ts';
import { createDatabase, dropDatabase } from './databases.ts';

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Runs a command to completion, failing loudly with its output. */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? root,
    env: options.env ?? process.env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** Compiles Roost into dist/ so the servers under test run the built code, as `npm start` does. */
export function buildRoost(): void {
  if (process.env.BENCH_SKIP_BUILD === '1') return log(`using the existing build in ${roostDir}/dist`);
  log(`building Roost in ${roostDir} (npm run build)`);
  run('npm', ['run', 'build', '--silent'], { cwd: roostDir });
}

export interface ServerProcess {
  name: string;
  url: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a server process and waits until `healthPath` answers 200. */
export async function startServer(options: {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  port: number;
  healthPath: string;
  cwd?: string;
  timeoutMs?: number;
}): Promise<ServerProcess> {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd ?? root,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited: number | null = null;
  child.on('exit', (code) => {
    exited = code ?? -1;
  });
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (exited !== null) throw new Error(`${options.name} exited with ${exited} before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} was not ready in time:\n${output}`);
    }
    try {
      const response = await fetch(url + options.healthPath);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  const stop = async () => {
    if (exited !== null) return;
    const gone = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  };
  return { name: options.name, url, pid: child.pid!, child, stop };
}

/** The environment of a Roost process under test: built code, warnings only. */
export function roostEnv(store: { databaseUrl?: string; sqlitePath?: string }, port = 0): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.SQLITE_PATH;
  delete env.NODE_OPTIONS;
  // PostgreSQL needs a sealing key (src/secret-keys.ts): a fixed one, so a bench database outlives a run.
  if (store.databaseUrl) env.DATABASE_URL = store.databaseUrl;
  if (store.databaseUrl) env.ROOST_SECRET_KEY ||= createHash('sha256').update('roost bench secret key').digest('base64');
  if (store.sqlitePath) env.SQLITE_PATH = store.sqlitePath;
  // Drained within stop()'s 5 s before its SIGKILL (the default grace is 10 s), so a process run with --cpu-prof
  // (BENCH_PROFILE=1) exits on its own and writes its profile: killed, it wrote none.
  env.SHUTDOWN_GRACE_MS ||= '1000';
  return env;
}

export interface AppKeys {
  appId: string;
  appKey: string;
  masterKey: string;
}

/** Creates an application with the `roost` command against the store named by `env`. */
export function createRoostApp(env: NodeJS.ProcessEnv, name = 'bench'): AppKeys {
  const out = run(process.execPath, [join(roostDir, 'bin', 'roost.js'), 'app', 'create', '--name', name], { env, cwd: roostDir });
  return JSON.parse(out) as AppKeys;
}

/**
 * Imports `count` objects made by `row` into `className` with `roost import`, as a migrated app's export
 * would arrive: JSON lines, created one second apart from 2023-01-01 (a row may set its own dates).
 */
export async function importClass(
  env: NodeJS.ProcessEnv,
  keys: AppKeys,
  dir: string,
  className: string,
  count: number,
  row: (n: number) => object,
): Promise<void> {
  const file = join(dir, `${className}-${count}.jsonl`);
  const out = createWriteStream(file);
  const t0 = Date.UTC(2023, 0, 1);
  for (let n = 0; n < count; n++) {
    const at = new Date(t0 + n * 1000).toISOString();
    if (!out.write(JSON.stringify({ createdAt: at, updatedAt: at, ...row(n) }) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  run(process.execPath, [join(roostDir, 'bin', 'roost.js'), 'import', '--app', keys.appId, '--class', className, file], { env, cwd: roostDir });
  rmSync(file);
}

/** The node flags of `npm start` in the measured checkout (package.json), so a bench runs Roost as operators do. */
function startFlags(): string[] {
  const scripts = (JSON.parse(readFileSync(join(roostDir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts;
  return (scripts?.start ?? '').split(' ').filter((word) => word.startsWith('--'));
}

/** Starts the built Roost (dist/main.js) on a fresh port, with `npm start`'s node flags. Pass NODE_ARGS-like extras in `nodeArgs`. */
export async function startRoost(
  name: string,
  store: { databaseUrl?: string; sqlitePath?: string },
  nodeArgs: string[] = [],
): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({
    name,
    command: process.execPath,
    args: [...startFlags(), ...nodeArgs, join(roostDir, 'dist', 'main.js')],
    cwd: roostDir,
    env: roostEnv(store, port),
    port,
    healthPath: '/health',
  });
}

/** The yardstick: a bare Fastify route answering a fixed JSON, in its own process. */
export async function startBare(): Promise<ServerProcess> {
  const port = await freePort();
  return startServer({
    name: 'bare fastify',
    command: process.execPath,
    args: [join(benchDir, 'bare-server.js')],
    env: { ...process.env, PORT: String(port) },
    port,
    healthPath: '/bare',
  });
}

// ── PostgreSQL databases of a run ────────────────────────────────────────────

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// ── reporting ────────────────────────────────────────────────────────────────

export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => '| ' + row.map((cell, i) => cell.padEnd(widths[i])).join(' | ') + ' |';
  return [line(cells[0]), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...cells.slice(1).map(line)].join(
    '\n',
  );
}

export function fixed(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function percent(value: number): string {
  return `${(value * 100).toFixed(0)}%`;
}

export function machine(): string {
  const cpu = cpus();
  const gib = (totalmem() / 1024 ** 3).toFixed(0);
  return `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${gib} GiB, ${type()} ${release()}, Node ${process.version}`;
}

/** With BENCH_PROFILE=1, the node options that make a Roost process write a CPU profile into bench/profiles/ at exit. */
export function profileArgs(): string[] {
  // BENCH_NODE_ARGS: node flags of a run's own (e.g. a GC setting to compare), after npm start's.
  const extra = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ').filter(Boolean) : [];
  return [...extra, ...(process.env.BENCH_PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(benchDir, 'profiles')}`] : [])];
}

/**
 * Waits until the servers under test are idle (each under 5% of a core over half a second), so
 * work queued by one run (e.g. password hashes still on the thread pool after autocannon stopped)
 * does not eat into the next one. Gives up after `maxMs`.
 */
export async function quiesce(pids: number[], maxMs = 30_000): Promise<void> {
  const until = Date.now() + maxMs;
  for (;;) {
    const before = pids.map(cpuTime);
    await sleep(500);
    const busy = pids.some((pid, i) => cpuTime(pid) - before[i] > 0.025);
    if (!busy) return;
    if (Date.now() > until) return log('servers still busy after waiting; going on');
  }
}

/** Stops everything started, whatever happened, once. */
export function cleanup(stack: Array<() => Promise<unknown> | unknown>): () => Promise<void> {
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    for (const step of stack.reverse()) {
      try {
        await step();
      } catch (error) {
        log(`cleanup: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
}

/**
 * Replaces this benchmark's own section of bench/RESULTS.md (between its markers), or appends it;
 * sections of other benchmarks stay as they are.
 */
export function recordSection(name: string, markdown: string): void {
  const path = join(benchDir, 'RESULTS.md');
  const start = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const block = `${start}\n${markdown.trim()}\n${end}`;
  let text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmark results\n';
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from >= 0 && to > from) text = text.slice(0, from) + block + text.slice(to + end.length);
  else text = text.trimEnd() + '\n\n' + block + '\n';
  writeFileSync(path, text);
  log(`recorded the ${name} section of bench/RESULTS.md`);
}

/** Roost on one store for a benchmark: the store, its environment, a new application, the server. */
export interface BenchStore {
  label: 'SQLite' | 'PostgreSQL';
  store: { databaseUrl?: string; sqlitePath?: string };
  env: NodeJS.ProcessEnv;
  keys: AppKeys;
  server: ServerProcess;
}

/**
 * Starts Roost on SQLite (a file in `dir`) and on a PostgreSQL database `roost_bench_<name>`, or on the one
 * BENCH_STORES names (sqlite, postgres); `stack` stops the servers and drops the database.
 */
export async function startStores(name: string, dir: string, stack: Array<() => unknown>): Promise<BenchStore[]> {
  const started: BenchStore[] = [];
  for (const label of ['SQLite', 'PostgreSQL'] as const) {
    if (process.env.BENCH_STORES && !label.toLowerCase().startsWith(process.env.BENCH_STORES)) continue;
    const database = label === 'PostgreSQL' ? `roost_bench_${name}` : undefined;
    const store = database ? { databaseUrl: await createDatabase(database) } : { sqlitePath: join(dir, `${name}.sqlite`) };
    if (database) stack.push(() => dropDatabase(database));
    const env = roostEnv(store);
    const keys = createRoostApp(env);
    const server = await startRoost(`roost ${label}`, store, profileArgs());
    stack.push(() => server.stop());
    started.push({ label, store, env, keys, server });
  }
  return started;
}

/** A load to measure, under the store it runs on; the first scenario of each store is that store's yardstick. */
export interface StoreScenario {
  name: string;
  store: string;
  options: LoadOptions;
}

/**
 * Warms every scenario, runs `rounds` rounds of them all, and gives each its median req/s, its median ratio
 * to its store's yardstick in the same round, and its non-2xx answers and errors over the rounds.
 */
export async function measureAgainstYardstick(
  list: StoreScenario[],
  rounds: number,
): Promise<Array<{ scenario: StoreScenario; rps: number; ratio: number; bad: number }>> {
  for (const scenario of list) await warm(scenario.options);
  const samples = new Map<StoreScenario, number[]>(list.map((s) => [s, []]));
  const bad = new Map<StoreScenario, number>(list.map((s) => [s, 0]));
  for (let round = 1; round <= rounds; round++) {
    for (const scenario of list) {
      const result = await load(scenario.options);
      samples.get(scenario)!.push(result.rps);
      bad.set(scenario, bad.get(scenario)! + result.non2xx + result.errors);
      log(`round ${round} ${scenario.store} ${scenario.name}: ${fixed(result.rps)} req/s`);
    }
  }
  return list.map((scenario) => {
    const yardstick = list.find((s) => s.store === scenario.store)!;
    const ratio = median(samples.get(scenario)!.map((rps, i) => rps / samples.get(yardstick)![i]));
    return { scenario, rps: median(samples.get(scenario)!), ratio, bad: bad.get(scenario)! };
  });
}

/**
 * Declares an index through POST /1.1/indexes, as an operator would, and waits until it is built: builds
 * run in the background, and a measurement (or an ANALYZE, which deadlocks with a concurrent build on
 * PostgreSQL) must not start before.
 */
export async function declareIndex(url: string, keys: AppKeys, className: string, name: string, fields: Record<string, 1 | -1>): Promise<void> {
  const headers = { 'content-type': 'application/json', 'x-lc-id': keys.appId, 'x-lc-key': `${keys.masterKey},master` };
  const response = await fetch(`${url}/1.1/indexes/${className}`, { method: 'POST', headers, body: JSON.stringify({ name, keys: fields }) });
  if (!response.ok) throw new Error(`index ${name}: ${response.status} ${await response.text()}`);
  for (;;) {
    const listed = await fetch(`${url}/1.1/indexes/${className}`, { headers });
    const { results } = (await listed.json()) as { results: Array<{ name: string; state: string }> };
    const state = results.find((index) => index.name === name)?.state;
    if (state === 'ready') return;
    if (state !== 'building') throw new Error(`index ${name}: ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
