import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { storeKind, testDatabase, type TestDatabase } from './helpers/harness.ts';
import { spawnRoost, type RoostProcess } from './helpers/processes.ts';
import { roostScript } from './helpers/scripts.ts';
import { newSecretKeyText } from '../src/lib/secret-box.ts';

/**
 * Review of e2b2d15, finding 11 (and the Redis message of finding 10): start-up as operators meet
 * it. Every failure to start exits non-zero with one line naming the cause (the Redis one read
 * "max retries per request"; `roost app create` on an unreachable database printed a stack trace);
 * a server and `roost app create` started together on a fresh database raced on migrations
 * ("table already exists"); `node <symlink>/main.js` exited 0 without serving.
 */
const databases: TestDatabase[] = [];
const nodes: RoostProcess[] = [];
const folders: string[] = [];
after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(databases.map((database) => database.drop()));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a Roost script to its end (a server that starts is killed after 60 s and fails the test). */
function run(entry: string[], args: string[], env: Record<string, string>, onSpawn?: (pid: number) => void): Promise<Outcome> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [...entry, ...args],
      { env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => done({ code: error ? ((error as { code?: unknown }).code as number) ?? null : 0, stdout, stderr }),
    );
    if (child.pid !== undefined) onSpawn?.(child.pid);
  });
}

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'roost-startup-'));
  folders.push(dir);
  return dir;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

function assertOneLine(outcome: Outcome, line: string): void {
  assert.equal(outcome.code, 1, `exit code; stderr: ${outcome.stderr}`);
  assert.equal(outcome.stderr, `${line}\n`);
  assert.ok(!outcome.stdout.includes('masterKey'), 'no keys printed for an application nobody can reach');
}

describe('a failure to start is one line that names the cause', { concurrency: 2 }, () => {
  test('port in use', async () => {
    const holder: Server = createServer();
    await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
    const port = (holder.address() as { port: number }).port;
    try {
      const database = await testDatabase();
      databases.push(database);
      const outcome = await run(roostScript('main'), [], { ...database.env, PORT: String(port) });
      assertOneLine(outcome, `roost: cannot listen on 127.0.0.1:${port}: address already in use`);
    } finally {
      holder.close();
    }
  });

  test('PostgreSQL unreachable, for the server and for a CLI command (the password stays out)', async () => {
    const port = await closedPort();
    const env = { DATABASE_URL: `postgres://roost:s3cret@127.0.0.1:${port}/roost`, ROOST_SECRET_KEY: newSecretKeyText() };
    const line = `roost: cannot reach PostgreSQL at postgres://roost:****@127.0.0.1:${port}/roost: connection refused`;
    const [server, cli] = await Promise.all([run(roostScript('main'), [], env), run(roostScript('cli'), ['app', 'create', '--name', 'shop'], env)]);
    assertOneLine(server, line);
    assertOneLine(cli, line);
  });

  test('Redis unreachable', async () => {
    const port = await closedPort();
    const database = await testDatabase();
    databases.push(database);
    const outcome = await run(roostScript('main'), [], { ...database.env, REDIS_URL: `redis://127.0.0.1:${port}` });
    assertOneLine(outcome, `roost: cannot reach Redis at redis://127.0.0.1:${port}: connection refused`);
  });

  test('data folder that cannot be written', { skip: storeKind === 'sqlite' ? false : 'the data folder holds the SQLite store' }, async () => {
    // A file stands where the folder should be (the process may run as root, which file modes do not stop).
    const file = join(folder(), 'not-a-folder');
    writeFileSync(file, '');
    const outcome = await run(roostScript('main'), [], { DATA_DIR: join(file, 'data') });
    assertOneLine(outcome, `roost: cannot write to the data folder ${join(file, 'data')}: not a directory`);
  });
});

/**
 * SQLite: the test holds the write lock until every process has the database file open, so all of
 * them start migrating at the same moment (without it the race is there, but seldom hit).
 */
async function startTogether(database: TestDatabase, pids: number[], count: number): Promise<void> {
  if (database.kind !== 'sqlite') return;
  const path = database.env.SQLITE_PATH;
  const holder = new Database(path);
  holder.pragma('journal_mode = WAL');
  holder.exec('BEGIN IMMEDIATE');
  try {
    const hasOpen = (pid: number) => {
      try {
        return readdirSync(`/proc/${pid}/fd`).some((fd) => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
          } catch {
            return false;
          }
        });
      } catch {
        return true; // gone already, or no /proc: nothing to wait for
      }
    };
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (pids.length < count || !pids.every(hasOpen))) await new Promise((done) => setTimeout(done, 50));
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
}

test('a server and two `roost app create` started together on a fresh database all succeed, twice over', async () => {
  for (let round = 0; round < 2; round++) {
    const database = await testDatabase();
    databases.push(database);
    const env = { ...database.env, LOG_LEVEL: 'silent' };
    const pids: number[] = [];
    const starting = spawnRoost({ ...database.env, LOG_LEVEL: 'info' });
    const creating = Promise.all(
      ['one', 'two'].map((name) => run(roostScript('cli'), ['app', 'create', '--name', name], env, (pid) => pids.push(pid))),
    );
    await startTogether(database, pids, 2);
    const created = await creating;
    const node = await starting;
    nodes.push(node);
    for (const outcome of created) {
      assert.deepEqual([outcome.code, outcome.stderr], [0, ''], outcome.stderr);
      assert.ok(JSON.parse(outcome.stdout).masterKey);
    }
    await node.stop();
    const store = await database.open();
    const names = (await store.listApps()).map((app) => app.name).sort();
    await store.close();
    assert.deepEqual(names.filter((name) => name !== 'default'), ['one', 'two']);
  }
});

test('started through a symlinked release folder, the server serves and the CLI runs', async () => {
  const link = join(folder(), 'current');
  symlinkSync(resolve('.'), link);
  const database = await testDatabase();
  databases.push(database);
  const node = await spawnRoost(database.env, [], roostScript('main', link));
  nodes.push(node);
  const health = await fetch(`${node.url}/health`);
  assert.equal(health.status, 200);
  const listed = await run(roostScript('cli', link), ['app', 'list'], { ...database.env, LOG_LEVEL: 'silent' });
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual((JSON.parse(listed.stdout) as Array<{ name: string }>).map((app) => app.name), ['default']);
});
