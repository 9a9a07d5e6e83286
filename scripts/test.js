#!/usr/bin/env node
// Runs the whole suite with Node's test runner: every test/**/*.test.ts file.
// Extra arguments (file paths) narrow it down: `npm test -- test/objects.test.ts`.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fakes' || name === 'helpers' ? [] : findTests(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const args = process.argv.slice(2);
const files = args.length > 0 ? args : findTests('test').sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000', ...files],
  { stdio: 'inherit', env: process.env },
);
process.exit(result.status ?? 1);
