#!/usr/bin/env node
// Runs the whole suite with Node's test runner: every test/**/*.test.ts file.
// Extra arguments (file paths) narrow it down: `npm test -- test/objects.test.ts`.
//
// src and test are compiled once into .build (tsconfig.test.json) and the suite runs the JavaScript:
// loading each test process's modules through tsx's hooks cost about 2 s of CPU, and so did every
// Roost process or CLI run a test starts (test/helpers/scripts.ts runs those compiled too).
// Source maps point failures back at the .ts lines.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

// One folder per run: two runs in one checkout (SQLite and PostgreSQL side by side) must not share it.
const build = join('.build', `run-${process.pid}`);

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fakes' || name === 'helpers' ? [] : findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function run(args) {
  return spawnSync(process.execPath, args, { stdio: 'inherit', env: process.env }).status ?? 1;
}

for (const name of existsSync('.build') ? readdirSync('.build') : []) {
  const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
  if (!pid || !alive(pid)) rmSync(join('.build', name), { recursive: true, force: true });
}
// A type error is typecheck's to fail (CI runs it first); the code is still emitted and the tests run.
run([join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.test.json', '--outDir', build]);
if (!existsSync(join(build, 'test'))) process.exit(1);
// What the compiled code reads beside itself: the protobuf schema, and package.json two folders up from src/lib.
copyFileSync('src/push/connection/messages.proto', join(build, 'src/push/connection/messages.proto'));
symlinkSync(join('..', '..', 'package.json'), join(build, 'package.json'));

const args = process.argv.slice(2);
// The longest files start first (their time in seconds on both stores, 2 cores, 2026-11-28): started in
// alphabetical order, test/storage/query-plans.test.ts (34 s on PostgreSQL) began when most of the suite was
// done and ran alone at the end. The rest follow in alphabetical order.
const longestFirst = [
  'test/storage/query-plans.test.ts', // 34
  'test/fuzz.test.ts', // 29
  'test/accounts-lockout.test.ts', // 29
  'test/console-admin-browser.test.ts', // 23
  'test/console-cli.test.ts', // 20
  'test/console-data-browser.test.ts', // 19
  'test/files-mirror.test.ts', // 19
  'test/faults.test.ts', // 18
  'test/push-cluster.test.ts', // 17
  'test/console-browser.test.ts', // 17
  'test/console-totp-browser.test.ts', // 17
  'test/near-page-shapes.test.ts', // 16
  'test/objects-page-shapes.test.ts', // 16
  'test/console-push-browser.test.ts', // 16
  'test/storage/page-plans.test.ts', // 15
];
const rank = (path) => (longestFirst.includes(path) ? longestFirst.indexOf(path) : longestFirst.length);
const sources = args.length > 0 ? args : findTests('test').sort().sort((a, b) => rank(a) - rank(b));
const files = sources.map((path) => join(build, relative('.', path)).replace(/\.ts$/, '.js'));
// Three files at a time on two cores: many tests wait (timers, child processes, a browser), and at two the
// suite kept the cores ~125% busy; at three, 170% and a third less time (README, under "Two commands").
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
const status = run(['--enable-source-maps', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=120000', ...files]);
rmSync(build, { recursive: true, force: true });
process.exit(status);
