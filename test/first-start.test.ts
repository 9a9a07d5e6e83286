import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import { spawnRoost, type RoostProcess } from './helpers/processes.ts';
import { holdWriteLock, waitForLockWaiters } from './helpers/locks.ts';
import { roostScript } from './helpers/scripts.ts';

/**
 * Regression: each node checked for applications, then created "default", so nodes starting
 * together on an empty database could each create one (and print different keys).
 */
const run = promisify(execFile);
const databases: TestDatabase[] = [];
const nodes: RoostProcess[] = [];

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(databases.map((database) => database.drop()));
});

function roost(database: TestDatabase, ...args: string[]) {
  return run(process.execPath, [...roostScript('cli'), ...args], {
    env: { ...process.env, ...database.env, LOG_LEVEL: 'silent' },
  });
}

/** Starts three nodes at once; keeps every one that started, so the test can stop them. */
async function startThree(database: TestDatabase, beforeWaiting = async () => {}): Promise<RoostProcess[]> {
  const starting = Promise.allSettled([1, 2, 3].map(() => spawnRoost(database.env)));
  await beforeWaiting();
  const settled = await starting;
  const started = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  nodes.push(...started);
  for (const result of settled) if (result.status === 'rejected') throw result.reason;
  return started;
}

async function assertOneDefault(database: TestDatabase, started: RoostProcess[]): Promise<void> {
  const printed = started.filter((node) => node.defaultKeys !== null);
  assert.equal(printed.length, 1, started.map((node) => node.lines.join('\n')).join('\n---\n'));
  const apps = JSON.parse((await roost(database, 'app', 'list')).stdout) as Array<{ appId: string; name: string }>;
  assert.deepEqual(apps.map((app) => [app.appId, app.name]), [[printed[0].defaultKeys!.appId, 'default']]);
}

// On SQLite the window between check and insert is microseconds wide, so this may pass without the
// fix; on PostgreSQL the next test forces the race.
test('SQLite: three nodes starting at once on an empty store create exactly one "default" application', { skip: process.env.DATABASE_URL ? 'the PostgreSQL test below forces the race' : false }, async () => {
  const database = await testDatabase();
  databases.push(database);
  await assertOneDefault(database, await startThree(database));
});

// On PostgreSQL the race is forced: another session holds the apps table (reads still pass) until
// all three nodes wait on it or on each other, so each has had its chance to find no application.
test('PostgreSQL: three nodes that all wait at the first application still create one', { skip: process.env.DATABASE_URL ? false : 'PostgreSQL only' }, async () => {
  const database = await testDatabase();
  databases.push(database);
  await roost(database, 'migrate');
  const release = await holdWriteLock(database, 'apps');
  const started = await startThree(database, () => waitForLockWaiters(database, 'apps', 3).finally(release));
  await assertOneDefault(database, started);
});

// Issue 18: keys never reach the log stream. stdout here is a pipe, as under systemd or in a container.
test('without a terminal, the first start writes the keys to a file only its owner reads, and no output line holds one', async () => {
  const database = await testDatabase();
  databases.push(database);
  const dataDir = mkdtempSync(join(tmpdir(), 'roost-first-'));
  const single = await spawnRoost({ ...database.env, DATA_DIR: dataDir });
  nodes.push(single);
  const keysFile = join(dataDir, 'default-app-keys.txt');
  assert.equal(statSync(keysFile).mode & 0o777, 0o600);
  const keys = single.defaultKeys!;
  assert.match(readFileSync(keysFile, 'utf8'), new RegExp(`masterKey: ${keys.masterKey}\\n`));
  for (const line of single.lines) {
    assert.equal(line.includes(keys.masterKey) || line.includes(keys.appKey), false, line);
  }
  assert.ok(single.lines.some((line) => line.includes(`"keysFile":"${keysFile}"`)));
  // The first console operator comes with them, in the same file only.
  const password = /\n {2}password: {2}(\S+)\n/.exec(readFileSync(keysFile, 'utf8'))?.[1] ?? '';
  assert.equal(password.length, 24);
  for (const line of single.lines) assert.equal(line.includes(password), false, line);
  const signIn = await fetch(`${single.url}/console/api/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'admin', password }),
  });
  assert.equal(signIn.status, 200);
  const response = await fetch(`${single.url}/1.1/classes/Probe`, { headers: { 'X-LC-Id': keys.appId, 'X-LC-Key': `${keys.masterKey},master` } });
  assert.equal(response.status, 200);
});
