// Keep your keys (#15, 1): an application moving off the hosted service keeps its appId, appKey and
// master key (`roost app create --app-id … --app-key … --master-key …`, or `roost import --create-app …`),
// so phones in the field, which send the old keys, keep working once the API domain points at Roost.
// After the import every way a client proves a key works with the old ones: X-LC-Key, X-LC-Key ",master",
// X-LC-Sign with either key, the push channel's login; a wrong key is still 401.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { Client } from './helpers/client.ts';
import { roostCli } from './helpers/cli.ts';
import { exportUser, type ExportUser } from './helpers/export.ts';
import { ChannelClient } from '../src/push/channel/client.ts';
import { md5Hex } from '../src/lib/crypto.ts';

// Ids as the hosted service issued them: 24 characters and a region suffix (cn-n1, global).
const hosted = { appId: '5f3c2a1b9d8e7f6a5b4c3d2e-gzGzoHsz', appKey: 'Xk3vQ9mW2pL7rT5yB8nC1dF4', masterKey: 'Mq7Zt2Lw9Rb4Nc6Vy1Hs8Gj3' };
const migrated = { appId: '6a1b2c3d4e5f60718293a4b5-MdYXbMMI', appKey: 'Pz8Kd3Wq6Ln1Tb4Ry7Fv2Hc9', masterKey: 'Gt5Xm2Bq8Vs3Kw6Nj9Lp1Rd4' };
const deviceId = 'd'.repeat(32);

let database: TestDatabase;
let server: TestServer;
let dir: string;
const users: ExportUser[] = [];

const roost = (...args: string[]) => roostCli({ ...database.env, ROOST_SECRET: server.config.secret }, ...args);
const unauthorized = { code: 401, error: 'Unauthorized.' };

before(async () => {
  database = await testDatabase();
  server = await startServer({ database });
  dir = mkdtempSync(join(tmpdir(), 'roost-app-keys-'));
  for (let n = 0; n < 3; n++) users.push(exportUser(n));
  writeFileSync(join(dir, '_User.jsonl'), users.map((u) => u.line).join('\n') + '\n');
  const device = { objectId: 'inst00000000000000000001', installationId: deviceId, deviceType: 'android', channels: ['news'] };
  writeFileSync(join(dir, '_Installation.jsonl'), JSON.stringify(device) + '\n');
});

after(async () => {
  await server?.close();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Headers that prove a key each way a client can, for `keys`' application. */
function proofs(keys: typeof hosted): Array<[string, Record<string, string>, boolean]> {
  const now = String(Date.now());
  return [
    ['X-LC-Key', { 'X-LC-Key': keys.appKey }, false],
    ['X-LC-Key ,master', { 'X-LC-Key': `${keys.masterKey},master` }, true],
    ['X-LC-Sign', { 'X-LC-Sign': `${md5Hex(now + keys.appKey)},${now}` }, false],
    ['X-LC-Sign ,master', { 'X-LC-Sign': `${md5Hex(now + keys.masterKey)},${now},master` }, true],
  ];
}

/** A client of `keys`' application that sends exactly `headers` as its proof. */
function request(keys: typeof hosted, method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const client = new Client({ url: server.url, appId: keys.appId, appKey: keys.appKey });
  return client.request(method, path, { body, headers: { 'X-LC-Sign': '', ...headers } });
}

test('roost app create keeps the id and keys it is given', async () => {
  const created = await roost('app', 'create', '--app-id', hosted.appId, '--app-key', hosted.appKey, '--master-key', hosted.masterKey, '--name', 'shop');
  assert.deepEqual([created.code, created.stderr], [0, '']);
  assert.deepEqual(JSON.parse(created.stdout), hosted);
  const listed = JSON.parse((await roost('app', 'list')).stdout) as Array<{ appId: string; name: string }>;
  assert.deepEqual(listed.filter((app) => app.appId === hosted.appId).map((app) => app.name), ['shop']);

  const object = await request(hosted, 'POST', '/1.1/classes/Post', { 'X-LC-Key': hosted.appKey }, { title: 'kept' });
  assert.equal(object.status, 201, object.text);
  for (const [name, headers, master] of proofs(hosted)) {
    const read = await request(hosted, 'GET', `/1.1/classes/Post/${object.body.objectId}`, headers);
    assert.deepEqual([read.status, read.body.title], [200, 'kept'], name);
    // Querying users needs the master key (userQueryPermission is off): the key kind is what was proved.
    const users = await request(hosted, 'GET', '/1.1/users', headers);
    assert.equal(users.status, master ? 200 : 403, name);
  }
});

test('missing keys are generated; the name defaults to the id', async () => {
  const appId = 'abcdefghijklmnopqrstuvwx';
  const created = await roost('app', 'create', '--app-id', appId);
  assert.equal(created.code, 0, created.stderr);
  const keys = JSON.parse(created.stdout);
  assert.equal(keys.appId, appId);
  assert.match(keys.appKey, /^[A-Za-z0-9]{24}$/);
  assert.match(keys.masterKey, /^[A-Za-z0-9]{24}$/);
  assert.notEqual(keys.appKey, keys.masterKey);
  assert.equal((await server.store.getApp(appId))?.name, appId);
});

test('ids and keys no application may have are refused with the reason, and nothing is created', async () => {
  const other = { appKey: 'Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8', masterKey: 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2' };
  const badId = 'the application id must be 1 to 64 letters, digits, "-" or "_"';
  const cases: Array<[Partial<typeof hosted>, string]> = [
    [{ appId: 'has/slash' }, badId],
    [{ appId: 'has space' }, badId],
    [{ appId: 'dot.ted' }, badId],
    [{ appId: '' }, badId],
    [{ appId: 'x'.repeat(65) }, badId],
    [{ appId: 'short-key', appKey: 'k'.repeat(15) }, 'the appKey must be 16 to 64 letters, digits, "-" or "_"'],
    [{ appId: 'long-key', appKey: 'k'.repeat(65) }, 'the appKey must be 16 to 64 letters, digits, "-" or "_"'],
    [{ appId: 'comma-key', masterKey: `${'m'.repeat(20)},master` }, 'the masterKey must be 16 to 64 letters, digits, "-" or "_"'],
    [{ appId: 'same-keys', ...other, masterKey: other.appKey }, 'the masterKey must differ from the appKey and the application id'],
    [{ appId: other.appKey, appKey: other.appKey }, 'the appKey must differ from the application id'],
  ];
  for (const [given, message] of cases) {
    assert.deepEqual(await server.services.registry.createWithKeys(undefined, given), { outcome: 'refused', message }, JSON.stringify(given));
    if (given.appId) assert.equal(await server.store.getApp(given.appId), null, given.appId);
  }
  const longest = { appId: 'a'.repeat(64), appKey: 'b'.repeat(64), masterKey: 'c'.repeat(16) };
  assert.deepEqual(await server.services.registry.createWithKeys('edge', longest), { outcome: 'created', keys: longest });
});

test('roost app create: a taken id exits 1 with the reason and the application keeps its keys; a bad key exits 1; no id nor name exits 2', async () => {
  const other = { appKey: 'Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8', masterKey: 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2' };
  const [taken, badKey, usage] = await Promise.all([
    roost('app', 'create', '--app-id', hosted.appId, '--app-key', other.appKey, '--master-key', other.masterKey),
    roost('app', 'create', '--app-id', 'same-keys', '--app-key', other.appKey, '--master-key', other.appKey),
    roost('app', 'create'),
  ]);
  assert.deepEqual([taken.code, taken.stdout, taken.stderr], [1, '', `roost: an application with id ${hosted.appId} already exists\n`]);
  const message = 'roost: cannot create the application: the masterKey must differ from the appKey and the application id\n';
  assert.deepEqual([badKey.code, badKey.stdout, badKey.stderr], [1, '', message]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^roost: app create needs --name NAME or --app-id ID\n/);
  assert.deepEqual(await server.store.getApp(hosted.appId).then((app) => app && { appKey: app.appKey, masterKey: app.masterKey }), {
    appKey: hosted.appKey,
    masterKey: hosted.masterKey,
  });
  const read = await request(hosted, 'GET', '/1.1/classes/Post', { 'X-LC-Key': `${hosted.masterKey},master` });
  assert.equal(read.status, 200, read.text);
});

test('roost import --create-app makes the application with the old keys and loads the export in one step', async () => {
  const { code, stdout, stderr } = await roost(
    'import', '--create-app', '--app-id', migrated.appId, '--app-key', migrated.appKey, '--master-key', migrated.masterKey, '--name', 'migrated', dir,
  );
  assert.deepEqual([code, stderr], [0, '']);
  const summary = JSON.parse(stdout);
  assert.deepEqual(summary.app, migrated);
  assert.deepEqual(summary.files.map((f: { className: string; inserted: number }) => [f.className, f.inserted]), [['_User', 3], ['_Installation', 1]]);
});

test('after the import every key proof of the old clients works: app key, master key, signed with either', async () => {
  for (const [name, headers, master] of proofs(migrated)) {
    const login = await request(migrated, 'POST', '/1.1/login', headers, { username: users[0].username, password: users[0].password });
    assert.deepEqual([login.status, login.body.objectId], [200, users[0].objectId], name);
    const me = await request(migrated, 'GET', '/1.1/users/me', { ...headers, 'X-LC-Session': users[1].sessionToken });
    assert.deepEqual([me.status, me.body.objectId], [200, users[1].objectId], `${name}: an exported session token`);
    const query = await request(migrated, 'GET', '/1.1/users', headers);
    assert.equal(query.status, master ? 200 : 403, name);
    if (master) assert.deepEqual(query.body.results.map((u: { objectId: string }) => u.objectId).sort(), users.map((u) => u.objectId).sort(), name);
  }
});

test('a wrong key, a key of another application or a stale signature is still 401 with the catalogue error', async () => {
  const now = Date.now();
  const stale = String(now - 16 * 60 * 1000);
  const wrong: Array<[string, Record<string, string>]> = [
    ['wrong app key', { 'X-LC-Key': 'Wr0ngWr0ngWr0ngWr0ngWr0n' }],
    ['app key as master', { 'X-LC-Key': `${migrated.appKey},master` }],
    ['another application\'s key', { 'X-LC-Key': hosted.appKey }],
    ['signed with a wrong key', { 'X-LC-Sign': `${md5Hex(now + 'Wr0ngWr0ngWr0ngWr0ngWr0n')},${now}` }],
    ['signed with the app key, claiming master', { 'X-LC-Sign': `${md5Hex(now + migrated.appKey)},${now},master` }],
    ['stale signature', { 'X-LC-Sign': `${md5Hex(stale + migrated.appKey)},${stale}` }],
  ];
  for (const [name, headers] of wrong) {
    const response = await request(migrated, 'POST', '/1.1/login', headers, { username: users[0].username, password: users[0].password });
    assert.deepEqual([response.status, response.body], [401, unauthorized], name);
  }
  // The old id with the wrong suffix names no application.
  const noApp = await request({ ...migrated, appId: migrated.appId.replace('-MdYXbMMI', '-gzGzoHsz') }, 'GET', '/1.1/classes/Post', { 'X-LC-Key': migrated.appKey });
  assert.deepEqual([noApp.status, noApp.body], [401, unauthorized]);
});

test('an imported device logs in to the push channel with the kept id and key and gets a push sent with the master key', async () => {
  const device = new ChannelClient({ url: server.url, appId: migrated.appId, appKey: migrated.appKey, installationId: deviceId });
  await device.connect();
  try {
    const now = String(Date.now());
    const sent = await request(migrated, 'POST', '/1.1/push', { 'X-LC-Sign': `${md5Hex(now + migrated.masterKey)},${now},master` }, {
      where: { installationId: deviceId },
      data: { alert: 'still here' },
    });
    assert.equal(sent.status, 201, sent.text);
    await server.services.push.drain();
    await device.waitForMessages(1);
    assert.equal(device.messages[0].data.alert, 'still here');
  } finally {
    await device.close();
  }
  const stranger = new ChannelClient({ url: server.url, appId: migrated.appId, appKey: hosted.appKey, installationId: deviceId });
  await assert.rejects(stranger.connect(), { code: 401 });
});

test('the same import run again reuses the application; other keys for a taken id are refused', async () => {
  const again = await roost('import', '--create-app', '--app-id', migrated.appId, '--app-key', migrated.appKey, '--master-key', migrated.masterKey, dir);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stderr, `roost: application ${migrated.appId} exists with the keys given; importing into it\n`);
  const summary = JSON.parse(again.stdout);
  assert.equal(summary.app, undefined, 'no application was created');
  assert.deepEqual(summary.files.map((f: { inserted: number; existing: number }) => [f.inserted, f.existing]), [[0, 3], [0, 1]]);

  const [other, bad, noExport] = await Promise.all([
    roost('import', '--create-app', '--app-id', migrated.appId, '--master-key', hosted.masterKey, dir),
    roost('import', '--create-app', '--app-id', 'bad id', dir),
    roost('import', '--create-app', '--app-id', 'no-export', join(dir, 'missing')),
  ]);
  assert.deepEqual([noExport.code, noExport.stderr], [1, `roost: ENOENT: no such file or directory, stat '${join(dir, 'missing')}'\n`]);
  assert.equal(await server.store.getApp('no-export'), null, 'no application for an export that cannot be read');
  assert.deepEqual([other.code, other.stdout, other.stderr], [1, '', `roost: an application with id ${migrated.appId} already exists with other keys\n`]);
  assert.deepEqual([bad.code, bad.stderr], [1, 'roost: cannot create the application: the application id must be 1 to 64 letters, digits, "-" or "_"\n']);
  // The application's keys are as they were.
  const read = await request(migrated, 'GET', '/1.1/users', { 'X-LC-Key': `${migrated.masterKey},master` });
  assert.equal(read.status, 200, read.text);
});

test('import usage: keys without --create-app, or --app and --app-id naming two applications, exit 2; --app-id alone is --app', async () => {
  const [keysAlone, twoApps, existing] = await Promise.all([
    roost('import', '--app', migrated.appId, '--app-key', migrated.appKey, dir),
    roost('import', '--app', migrated.appId, '--app-id', hosted.appId, dir),
    roost('import', '--app-id', migrated.appId, dir),
  ]);
  assert.equal(keysAlone.code, 2);
  assert.match(keysAlone.stderr, /^roost: --app-key, --master-key and --name go with --create-app\n/);
  assert.equal(twoApps.code, 2);
  assert.match(twoApps.stderr, /^roost: --app and --app-id name two applications\n/);
  assert.equal(existing.code, 0, existing.stderr);
  assert.deepEqual(JSON.parse(existing.stdout).files.map((f: { existing: number }) => f.existing), [3, 1]);
});
