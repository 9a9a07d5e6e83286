// Import benchmark: `roost import` of a generated export of 1,000,000 `_User` rows into PostgreSQL.
// The export is written to a temporary folder first (never kept in git); the import runs as the
// operator runs it, a separate `roost import` process; then a second run of the same export
// measures the idempotent re-run (every objectId present).
//
//   npm run bench:import [-- --record]
//   BENCH_IMPORT_USERS=1000000   rows to generate
//   BENCH_IMPORT_BATCH=2000      rows per store call (roost import --batch)
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { exportUser, serviceHash } from '../test/helpers/export.ts';
import { cleanup, cpuTime, createDatabase, dropDatabase, envNumber, fixed, log, machine, recordSection, roostDir, roostEnv, table } from './lib.ts';
import { loadavg } from 'node:os';

const users = envNumber('BENCH_IMPORT_USERS', 1_000_000);
const batch = envNumber('BENCH_IMPORT_BATCH', 2000);
const record = process.argv.includes('--record');
const dbName = 'roost_bench_import';

/** Writes `_User.jsonl`: real legacy hashes (a pool of 512 reused, as computing 1M would take minutes). */
async function writeExport(path: string): Promise<void> {
  const pool = Array.from({ length: 512 }, (_, i) => {
    const salt = `salt-${i}-${Math.random().toString(36).slice(2)}`;
    const password = `password-${i}`;
    return { salt, password, hash: serviceHash(salt, password) };
  });
  const out = createWriteStream(path);
  for (let n = 0; n < users; n++) {
    const extra: Record<string, unknown> = { level: n % 50, tags: ['imported'] };
    if (n % 10 === 0) extra.authData = { weixin: { openid: `wx-${n}`, access_token: 'token', expires_in: 7200 } };
    if (n % 3 === 0) extra.mobilePhoneNumber = `+86139${String(n).padStart(8, '0')}`;
    if (!out.write(exportUser(n, { hash: pool[n % pool.length], extra }).line + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

interface RunResult {
  ms: number;
  stdout: string;
  stderr: string;
  code: number;
  /** CPU seconds of the roost process (all its threads) and of the PostgreSQL backends of `db`. */
  cpu: { roost: number; postgres: number };
  /** One-minute load average at the end: how busy the shared machine was. */
  load: number;
}

/** Runs the roost command, sampling its CPU time and that of the database's backends each 250 ms. */
function roost(args: string[], env: NodeJS.ProcessEnv, db?: string): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(roostDir, 'src', 'cli.ts'), ...args], { env, cwd: roostDir });
    let stdout = '';
    let stderr = '';
    let roostCpu = 0;
    const backends = new Map<number, number>();
    const admin = db ? new pg.Client({ connectionString: env.DATABASE_URL }) : null;
    const connected = admin?.connect();
    const sample = setInterval(async () => {
      const own = cpuTime(child.pid ?? 0);
      if (Number.isFinite(own)) roostCpu = own;
      if (!admin) return;
      try {
        await connected;
        const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db]);
        for (const { pid } of rows as Array<{ pid: number }>) {
          const used = cpuTime(pid);
          if (Number.isFinite(used)) backends.set(pid, used);
        }
      } catch {
        // sampling is best effort
      }
    }, 250);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', async (code) => {
      clearInterval(sample);
      await admin?.end().catch(() => undefined);
      const postgres = [...backends.values()].reduce((a, b) => a + b, 0);
      resolve({ ms: performance.now() - started, stdout, stderr, code: code ?? -1, cpu: { roost: roostCpu, postgres }, load: loadavg()[0] });
    });
  });
}

async function main(): Promise<void> {
  const stack: Array<() => Promise<unknown> | unknown> = [];
  const done = cleanup(stack);
  try {
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-import-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, '_User.jsonl');
    log(`writing ${users} users to ${file}`);
    let t = performance.now();
    await writeExport(file);
    const mb = statSync(file).size / 1e6;
    log(`export written: ${fixed(mb)} MB in ${fixed((performance.now() - t) / 1000, 1)} s`);

    const url = await createDatabase(dbName);
    stack.push(() => dropDatabase(dbName));
    const env = roostEnv({ databaseUrl: url });
    const app = await roost(['app', 'create', '--name', 'import'], env);
    if (app.code !== 0) throw new Error(app.stderr);
    const { appId } = JSON.parse(app.stdout) as { appId: string };

    const runs: Array<{ name: string; ms: number; inserted: number; existing: number; cpu: RunResult['cpu']; load: number }> = [];
    for (const name of ['first import', 're-run (all present)']) {
      log(`${name} …`);
      const result = await roost(['import', '--app', appId, '--batch', String(batch), file], env, dbName);
      if (result.code !== 0) throw new Error(result.stderr);
      const summary = JSON.parse(result.stdout) as { files: Array<{ inserted: number; existing: number }> };
      runs.push({ name, ms: result.ms, inserted: summary.files[0].inserted, existing: summary.files[0].existing, cpu: result.cpu, load: result.load });
      log(
        `${name}: ${fixed(result.ms / 1000, 1)} s (${summary.files[0].inserted} inserted, ${summary.files[0].existing} present; ` +
          `CPU roost ${fixed(result.cpu.roost, 1)} s, postgres ${fixed(result.cpu.postgres, 1)} s; load ${result.load.toFixed(1)})`,
      );
    }

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const counts = await client.query(`SELECT
        (SELECT count(*) FROM objects WHERE class_name = '_User') AS users,
        (SELECT count(*) FROM objects WHERE password_hash LIKE '$lcsha512$%') AS legacy,
        (SELECT count(*) FROM objects WHERE session_digest IS NOT NULL) AS sessions,
        (SELECT count(*) FROM auth_identities) AS identities`);
    await client.end();
    const c = counts.rows[0] as Record<string, string>;
    if (Number(c.users) !== users) throw new Error(`expected ${users} users, found ${c.users}`);
    log(`stored: ${c.users} users, ${c.legacy} legacy hashes, ${c.sessions} sessions, ${c.identities} identities`);

    // What the run needs on a machine of its own: the CPU time it used, spread over the cores
    // (roost's parse threads and PostgreSQL run side by side), but never less than roost's share.
    const cores = Math.min(2, availableParallelism());
    const alone = (r: (typeof runs)[number]) => Math.max((r.cpu.roost + r.cpu.postgres) / cores, r.cpu.roost / cores);
    const rows = runs.map((r) => [
      r.name,
      fixed(r.ms / 1000, 1),
      fixed((users / r.ms) * 1000),
      r.inserted,
      r.existing,
      fixed(r.cpu.roost, 1),
      fixed(r.cpu.postgres, 1),
      fixed(alone(r), 1),
      r.load.toFixed(1),
    ]);
    const markdown = `## Import

\`npm run bench:import\` (bench/import.ts): a generated \`_User\` export of ${users.toLocaleString('en-US')} rows
(${fixed(mb)} MB of JSON lines: username, email, a phone number on a third, weixin authData on a tenth, ACL,
both date forms, salt + legacy SHA-512 hash, session token) loaded by \`roost import --app APPID FILE
--batch ${batch}\` into an empty PostgreSQL database, as a separate process (start-up, migrations and the
final summary included). Target: 1,000,000 users in under 2 minutes.

${table(['run', 'wall s', 'rows/s', 'inserted', 'already present', 'roost CPU s', 'PostgreSQL CPU s', 'CPU s / cores', 'load avg'], rows)}

"CPU s / cores" is the CPU time both processes used divided by the ${cores} cores: the wall time the run
needs when it has the machine to itself. "load avg" is the one-minute load average at the end of the
run (other engineers' suites and benchmarks share this machine).

Stored afterwards: ${c.users} users, ${c.legacy} legacy password hashes (each becomes argon2id at its
user's first login), ${c.sessions} sealed session tokens, ${c.identities} authData identity rows.
Machine: ${machine()}.`;
    process.stdout.write(markdown + '\n');
    if (record) recordSection('import', markdown);
  } finally {
    await done();
  }
}

await main();
