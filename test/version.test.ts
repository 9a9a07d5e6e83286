import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { roostCli } from './helpers/cli.ts';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; engines: { node: string } };

test('roost --version prints the version package.json names', async () => {
  const outcome = await roostCli({}, '--version');
  assert.deepEqual(outcome, { code: 0, stdout: `roost ${pkg.version}\n`, stderr: '' });
});

/** What package-lock.json records of every installed package's `engines.node`. */
function lockedEngines(): Array<[string, string]> {
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { engines?: { node?: string }; dev?: boolean }> };
  return Object.entries(lock.packages).flatMap(([path, entry]) => (path && entry.engines?.node && !entry.dev ? [[path, entry.engines.node]] : []));
}

test('engines.node holds: every runtime dependency accepts the oldest Node the package claims', () => {
  const oldest = semver.minVersion(pkg.engines.node)!.version;
  assert.equal(oldest, '20.0.0');
  // better-sqlite3 names majors ("20.x || 22.x"): checked against the newest Node 20 too.
  const refusing = lockedEngines().filter(([, range]) => !semver.satisfies('20.19.0', range) && !semver.satisfies(oldest, range));
  assert.deepEqual(refusing, []);
});
