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
const sources = args.length > 0 ? args : findTests('test').sort();
const files = sources.map((path) => join(build, relative('.', path)).replace(/\.ts$/, '.js'));
const status = run(['--enable-source-maps', '--test', '--test-concurrency=2', '--test-timeout=120000', ...files]);
rmSync(build, { recursive: true, force: true });
process.exit(status);
