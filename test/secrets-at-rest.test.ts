import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import Database from 'better-sqlite3';
import { startServer, testDatabase, type TestServer, type TestDatabase } from './helpers/harness.ts';
import { roostCli } from './helpers/cli.ts';

/**
 * Issue 18 §2: a dump of the database (the SQLite file, `pg_dump`) holds none of the secrets Roost
 * must read back, and nothing in it is accepted as a credential.
 */
const run = promisify(execFile);
const servers: TestServer[] = [];
const databases: TestDatabase[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(databases.map((database) => database.drop()));
});

const vendorSecret = 'vendor-secret-7f3k2m9q1x';
const providerSecret = 'provider-secret-4n8w6t2z5y';
const webhookSecret = 'webhook-secret-9c1v7b3h6j';

async function dumpOf(database: TestDatabase): Promise<string> {
  if (database.kind === 'postgres') return (await run('pg_dump', ['--no-owner', database.env.DATABASE_URL], { maxBuffer: 64 << 20 })).stdout;
  const path = database.env.SQLITE_PATH;
  return [path, `${path}-wal`].filter(existsSync).map((file) => readFileSync(file).toString('latin1')).join('\n');
}

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

async function status(server: TestServer, headers: Record<string, string>): Promise<number> {
  const response = await fetch(`${server.url}/1.1/classes/Probe`, { headers: { 'X-LC-Id': server.appId, ...headers } });
  return response.status;
}

async function configureSecrets(server: TestServer): Promise<string[]> {
  await server.services.registry.updateSettings(server.appId, {
    vendors: { _default: { HMS: { appId: 'hms-app', appSecret: vendorSecret } } },
    authProviders: { weixin: { appId: 'wx-app', appSecret: providerSecret } },
    sms: { provider: 'webhook', webhookUrl: 'https://sms.example.com/hook', webhookSecret },
  });
  return [server.appKey, server.masterKey, vendorSecret, providerSecret, webhookSecret, server.config.secret];
}

test('a dump holds no secret in clear, and no value from it is accepted as a key or signs a request', async () => {
  const database = await testDatabase();
  databases.push(database);
  const server = await startServer({ database });
  servers.push(server);
  const secrets = await configureSecrets(server);
  assert.equal(await status(server, { 'X-LC-Key': `${server.masterKey},master` }), 200);

  const dump = await dumpOf(database);
  for (const secret of secrets) assert.equal(dump.includes(secret), false, `the dump holds ${secret.slice(0, 6)}…`);
  const sealed = [...new Set(dump.match(/sealed:1:[0-9a-f]{8}:[A-Za-z0-9_-]+/g) ?? [])];
  assert.ok(sealed.length >= 6, `sealed values in the dump: ${sealed.length}`);
  const timestamp = String(Date.now());
  for (const value of sealed) {
    assert.equal(await status(server, { 'X-LC-Key': `${value},master` }), 401);
    assert.equal(await status(server, { 'X-LC-Key': value }), 401);
    assert.equal(await status(server, { 'X-LC-Sign': `${md5(timestamp + value)},${timestamp},master` }), 401);
    assert.equal(await status(server, { 'X-AVOSCloud-Application-Key': value }), 401);
  }
  // The operator still sees them: settings open (masked for display), keys open.
  const settings = await server.services.registry.freshSettings(server.appId);
  assert.equal(settings?.vendors._default.HMS.appSecret, vendorSecret);
  assert.equal(settings?.sms.webhookSecret, webhookSecret);
});

test('values in clear from before sealing are sealed at the next start, and still work', async () => {
  const database = await testDatabase();
  databases.push(database);
  const first = await startServer({ database });
  await configureSecrets(first);
  const { appId, appKey, masterKey } = first;
  await first.close();
  // A database as an older Roost left it: keys and server secret in clear.
  const clear = [
    `UPDATE apps SET app_key = '${appKey}', master_key = '${masterKey}' WHERE app_id = '${appId}'`,
    `UPDATE meta SET value = 'server-secret-in-clear-0123456789' WHERE key = 'secret'`,
  ];
  if (database.kind === 'postgres') {
    const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await client.connect();
    for (const statement of clear) await client.query(statement);
    await client.end();
  } else {
    const db = new Database(database.env.SQLITE_PATH);
    for (const statement of clear) db.prepare(statement).run();
    db.close();
  }
  assert.ok((await dumpOf(database)).includes(masterKey));
  const second = await startServer({ database });
  servers.push(second);
  const dump = await dumpOf(database);
  for (const secret of [appKey, masterKey, 'server-secret-in-clear-0123456789']) assert.equal(dump.includes(secret), false);
  const timestamp = String(Date.now());
  const asFirst = { ...second, appId, url: second.url } as TestServer;
  assert.equal(await status(asFirst, { 'X-LC-Key': `${masterKey},master` }), 200);
  assert.equal(await status(asFirst, { 'X-LC-Sign': `${md5(timestamp + appKey)},${timestamp}` }), 200);
  assert.equal(await second.store.serverSecret(), 'server-secret-in-clear-0123456789');
});

test('roost secrets rotate-key: a new key seals everything, the old one is kept to open, the server reads on', async () => {
  const database = await testDatabase();
  databases.push(database);
  const server = await startServer({ database, env: { APP_CACHE_MS: '0' } });
  servers.push(server);
  const secrets = await configureSecrets(server);
  const keyFile = database.kind === 'sqlite' ? `${database.env.SQLITE_PATH.replace(/[^/]+$/, '')}secret.key` : null;
  const before = new Set((await dumpOf(database)).match(/sealed:1:([0-9a-f]{8}):/g));
  assert.equal(before.size, 1, [...before].join(" "));
  if (keyFile) {
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    const rotated = await roostCli(database.env, 'secrets', 'rotate-key');
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, /^sealed again: [1-9]\d* records?\n$/);
    assert.equal(readFileSync(keyFile, 'utf8').trim().split('\n').length, 2);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  } else {
    // ROOST_SECRET_KEY: rotate-key says how; a new key put first, the old kept after it, then reseal.
    const refused = await roostCli(database.env, 'secrets', 'rotate-key');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /put a new key .* first in ROOST_SECRET_KEY/);
    const newKey = (await roostCli({}, 'secrets', 'new-key')).stdout.trim();
    const resealed = await roostCli({ ...database.env, ROOST_SECRET_KEY: `${newKey},${database.env.ROOST_SECRET_KEY}` }, 'secrets', 'reseal');
    assert.equal(resealed.code, 0, resealed.stderr);
  }
  const dump = await dumpOf(database);
  const after = new Set(dump.match(/sealed:1:([0-9a-f]{8}):/g));
  assert.equal(after.size, 1);
  assert.notDeepEqual([...after], [...before]);
  for (const secret of secrets) assert.equal(dump.includes(secret), false);
  if (keyFile) {
    // The running server picks the new key up from the file (it reads it again on an unknown key id).
    assert.equal(await status(server, { 'X-LC-Key': `${server.masterKey},master` }), 200);
  }
});

test('PostgreSQL without a configured key seals with one made in DATA_DIR; a node with another key stops, naming the one it lacks', { skip: process.env.DATABASE_URL ? false : 'PostgreSQL only' }, async () => {
  const database = await testDatabase();
  databases.push(database);
  const first = mkdtempSync(join(tmpdir(), 'roost-key-a-'));
  const other = mkdtempSync(join(tmpdir(), 'roost-key-b-'));
  try {
    const created = await roostCli({ ...database.env, ROOST_SECRET_KEY: '', DATA_DIR: first }, 'app', 'create', '--name', 'keyed');
    assert.equal(created.code, 0, created.stderr);
    assert.equal(statSync(join(first, 'secret.key')).mode & 0o777, 0o600);
    const again = await roostCli({ ...database.env, ROOST_SECRET_KEY: '', DATA_DIR: first }, 'app', 'keys', JSON.parse(created.stdout).appId);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).masterKey, JSON.parse(created.stdout).masterKey);
    const elsewhere = await roostCli({ ...database.env, ROOST_SECRET_KEY: '', DATA_DIR: other }, 'app', 'list');
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.stderr, /^roost: a secret in the database was sealed with key [0-9a-f]{8}, which is not among the configured secret keys/);
  } finally {
    rmSync(first, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
  const wrong = await roostCli({ ...database.env, ROOST_SECRET_KEY: 'not-a-key' }, 'migrate');
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /^roost: a secret key must be 32 random bytes in base64/);
});

test('SQLite whose key file is gone refuses to start, naming the key it needs', { skip: process.env.DATABASE_URL ? 'SQLite only' : false }, async () => {
  const database = await testDatabase();
  databases.push(database);
  const store = await database.open();
  await store.createApp({ appId: 'gone-key-app', name: 'x', appKey: 'a'.repeat(24), masterKey: 'm'.repeat(24), settings: {}, createdAt: 1, retiredKeys: [] });
  await store.close();
  const keyFile = `${database.env.SQLITE_PATH.replace(/[^/]+$/, '')}secret.key`;
  const id = /sealed:1:([0-9a-f]{8}):/.exec(await dumpOf(database))![1];
  rmSync(keyFile);
  const outcome = await roostCli(database.env, 'app', 'list');
  assert.equal(outcome.code, 1);
  assert.equal(
    outcome.stderr,
    `roost: a secret in the database was sealed with key ${id}, which is not among the configured secret keys (ROOST_SECRET_KEY / ROOST_SECRET_KEY_FILE)\n`,
  );
});
