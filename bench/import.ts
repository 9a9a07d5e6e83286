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
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { exportUser, serviceHash } from '../test/helpers/export.ts';
import { cleanup, createDatabase, dropDatabase, envNumber, fixed, log, machine, recordSection, roostDir, roostEnv, table } from './lib.ts';

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

function roost(args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string; stderr: string; code: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(roostDir, 'src', 'cli.ts'), ...args], { env, cwd: roostDir });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ ms: performance.now() - started, stdout, stderr, code: code ?? -1 }));
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

    const runs: Array<{ name: string; ms: number; inserted: number; existing: number }> = [];
    for (const name of ['first import', 're-run (all present)']) {
      log(`${name} …`);
      const result = await roost(['import', '--app', appId, '--batch', String(batch), file], env);
      if (result.code !== 0) throw new Error(result.stderr);
      const summary = JSON.parse(result.stdout) as { files: Array<{ inserted: number; existing: number }> };
      runs.push({ name, ms: result.ms, inserted: summary.files[0].inserted, existing: summary.files[0].existing });
      log(`${name}: ${fixed(result.ms / 1000, 1)} s (${summary.files[0].inserted} inserted, ${summary.files[0].existing} present)`);
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

    const rows = runs.map((r) => [r.name, fixed(r.ms / 1000, 1), fixed((users / r.ms) * 1000), r.inserted, r.existing]);
    const markdown = `## Import

\`npm run bench:import\` (bench/import.ts): a generated \`_User\` export of ${users.toLocaleString('en-US')} rows
(${fixed(mb)} MB of JSON lines: username, email, a phone number on a third, weixin authData on a tenth, ACL,
both date forms, salt + legacy SHA-512 hash, session token) loaded by \`roost import --app APPID FILE
--batch ${batch}\` into an empty PostgreSQL database, as a separate process (start-up, migrations and the
final summary included). Target: 1,000,000 users in under 2 minutes.

${table(['run', 'seconds', 'rows/s', 'inserted', 'already present'], rows)}

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
