import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import pg from 'pg';
import Database from 'better-sqlite3';
import { ManualClock } from '../src/lib/clock.ts';
import { ChannelClient } from '../src/push/channel/client.ts';
import { startServer, testDatabase, type TestServer, type TestDatabase } from './helpers/harness.ts';
import { roostCli } from './helpers/cli.ts';
import { filesFolder, filesUnder, sendBytes } from './helpers/files.ts';

/** Issue 18 §1: `roost app rotate|keys|delete`, seen through HTTP on a node that caches applications. */
const servers: TestServer[] = [];
const databases: TestDatabase[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(databases.map((database) => database.drop()));
});

const day = 86_400_000;

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

async function status(server: TestServer, headers: Record<string, string>, init: RequestInit = {}): Promise<number> {
  const response = await fetch(`${server.url}/1.1/classes/Probe`, { ...init, headers: { 'X-LC-Id': server.appId, 'Content-Type': 'application/json', ...headers } });
  await response.arrayBuffer();
  return response.status;
}

/** Every way a client proves a key: X-LC-Key, X-LC-Sign (at the server's time), the old X-AVOSCloud-* headers. */
async function proofs(server: TestServer, clock: ManualClock, key: string, master: boolean): Promise<number[]> {
  const suffix = master ? ',master' : '';
  const timestamp = String(clock.now());
  return [
    await status(server, { 'X-LC-Key': `${key}${suffix}` }),
    await status(server, { 'X-LC-Sign': `${md5(timestamp + key)},${timestamp}${suffix}` }),
    await status(server, { 'X-AVOSCloud-Application-Key': `${key}${suffix}` }),
    await status(server, { 'X-AVOSCloud-Request-Sign': `${md5(timestamp + key)},${timestamp}${suffix}` }),
  ];
}

/** How many indexes the objects table has, by the database's catalogue. */
async function indexesOnObjects(database: TestDatabase): Promise<number> {
  if (database.kind === 'postgres') {
    const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await client.connect();
    const { rows } = await client.query(`SELECT COUNT(*)::int AS n FROM pg_indexes WHERE tablename = 'objects'`);
    await client.end();
    return rows[0].n as number;
  }
  const db = new Database(database.env.SQLITE_PATH, { readonly: true });
  const { n } = db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'index' AND tbl_name = 'objects'`).get() as { n: number };
  db.close();
  return n;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 50 && !(await check()); attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(await check());
}

test('rotate with a grace period, keys, delete: every node honours them through its cache', async () => {
  const database = await testDatabase();
  databases.push(database);
  const clock = new ManualClock();
  const server = await startServer({ database, clock, env: { APP_CACHE_MS: '300' } });
  servers.push(server);
  const { appId, appKey, masterKey } = server;
  const ok = [200, 200, 200, 200];
  const refused = [401, 401, 401, 401];

  const rotated = await roostCli(database.env, 'app', 'rotate', appId, '--master-key', '--grace', '7d');
  assert.equal(rotated.code, 0, rotated.stderr);
  const printed = JSON.parse(rotated.stdout) as { appId: string; masterKey: string; oldKeyAcceptedUntil: string };
  assert.equal(printed.appId, appId);
  assert.notEqual(printed.masterKey, masterKey);
  assert.ok(Math.abs(Date.parse(printed.oldKeyAcceptedUntil) - (Date.now() + 7 * day)) < 60_000);
  // Another process changed the keys: this node sees the new one once its cached record expires.
  await until(async () => (await status(server, { 'X-LC-Key': `${printed.masterKey},master` })) === 200);
  assert.deepEqual(await proofs(server, clock, printed.masterKey, true), ok);
  assert.deepEqual(await proofs(server, clock, masterKey, true), ok, 'the old master key within its grace period');

  const keys = await roostCli(database.env, 'app', 'keys', appId);
  assert.equal(keys.code, 0, keys.stderr);
  const shown = JSON.parse(keys.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(shown), ['appId', 'appKey', 'masterKey', 'rotated']);
  assert.deepEqual([shown.appId, shown.appKey, shown.masterKey], [appId, appKey, printed.masterKey]);
  assert.deepEqual((shown.rotated as Array<{ kind: string; key: string }>).map((entry) => [entry.kind, entry.key]), [['masterKey', masterKey]]);

  // The CLI set the end by its own clock, a few seconds after this one started.
  clock.advance(7 * day + 60_000);
  assert.deepEqual(await proofs(server, clock, masterKey, true), refused, 'the old master key after its grace period');
  assert.deepEqual(await proofs(server, clock, printed.masterKey, true), ok);
  assert.deepEqual(await proofs(server, clock, appKey, false), ok);

  // No grace: the old app key is refused at once (on this node; others within APP_CACHE_MS).
  const next = await server.services.registry.rotate(appId, 'appKey', 0);
  assert.deepEqual(await proofs(server, clock, appKey, false), refused);
  assert.deepEqual(await proofs(server, clock, next!.appKey, false), ok);

  const usage = await roostCli(database.env, 'app', 'rotate', appId, '--grace', '7 days');
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^roost: app rotate needs one of --key or --master-key\n/);
});

test('delete says what it removes, asks (refuses without a terminal unless --yes), then removes it all', async () => {
  const database = await testDatabase();
  databases.push(database);
  const folder = await filesFolder();
  const server = await startServer({ database, env: { APP_CACHE_MS: '300', FILES_DIR: folder } });
  servers.push(server);
  const other = await server.services.registry.create('other');
  const master = { 'X-LC-Key': `${server.masterKey},master` };
  for (const body of [{ n: 1 }, { n: 2 }]) assert.equal(await status(server, master, { method: 'POST', body: JSON.stringify(body) }), 201);
  assert.equal((await server.master.post('/1.1/indexes/Probe', { name: 'byN', keys: { n: 1 } })).status, 201);
  await server.store.classIndexes.idle();
  const indexCount = () => indexesOnObjects(database);
  const withIndex = await indexCount();
  assert.equal((await server.client.post('/1.1/users', { username: 'ann', password: 'secret-pass-1' })).status, 201);
  assert.equal((await server.client.post('/1.1/installations', { deviceType: 'android', installationId: 'a'.repeat(32) })).status, 201);

  assert.equal((await server.master.post('/1.1/leaderboard/leaderboards', { statisticName: 'wins', memberType: '_User' })).status, 200);

  const asked = await roostCli(database.env, 'app', 'delete', server.appId);
  assert.equal(asked.code, 1);
  assert.equal(
    asked.stderr,
    `This deletes application ${server.appId} and everything it holds: 2 objects in 3 classes, 1 users, 1 installations, 0 roles, 1 leaderboards, with their sessions, status inboxes, push history and the bytes of its files.\n` +
      'roost: not deleted: add --yes to delete without being asked (no terminal to ask on)\n',
  );
  assert.equal(await status(server, master), 200);

  const kept = await sendBytes(server.client, 'POST', '/1.1/files/kept.txt', 'kept bytes', { 'Content-Type': 'text/plain' });
  assert.equal(kept.status, 201);
  assert.ok((await filesUnder(folder)).some((path) => path.startsWith(`${server.appId}/`)));
  const deleted = await roostCli({ ...database.env, FILES_DIR: folder }, 'app', 'delete', server.appId, '--yes');
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.deepEqual((await filesUnder(folder)).filter((path) => path.startsWith(`${server.appId}/`)), []);
  assert.equal(deleted.stdout, `deleted application ${server.appId}\n`);
  await until(async () => (await status(server, master)) === 401);
  assert.equal(await server.store.appContents(server.appId), null);
  assert.equal(await indexCount(), withIndex - (database.kind === 'sqlite' ? 1 : 2));
  assert.deepEqual(await server.store.appContents(other.appId), { objects: 0, users: 0, installations: 0, roles: 0, classes: 0, leaderboards: 0 });
  const missing = await roostCli(database.env, 'app', 'keys', server.appId);
  assert.deepEqual(missing, { code: 1, stdout: '', stderr: `roost: no application with id ${server.appId}\n` });
});

test("the push channel's login accepts an app key in its grace period and refuses one rotated without grace", async () => {
  const server = await startServer();
  servers.push(server);
  const login = async (appKey: string) => {
    const device = new ChannelClient({ url: server.url, appId: server.appId, appKey, installationId: 'rotating-device' });
    try {
      await device.connect();
      return 'loggedin';
    } catch (error) {
      return (error as { code?: number }).code;
    } finally {
      await device.close();
    }
  };
  const first = await server.services.registry.rotate(server.appId, 'appKey', 3_600_000);
  assert.deepEqual([await login(server.appKey), await login(first!.appKey)], ['loggedin', 'loggedin']);
  const second = await server.services.registry.rotate(server.appId, 'appKey', 0);
  assert.deepEqual([await login(server.appKey), await login(first!.appKey), await login(second!.appKey)], ['loggedin', 401, 'loggedin']);
});
