import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { roostScript } from './helpers/scripts.ts';

const run = promisify(execFile);

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const defaults = {
  verifyEmailOnSignup: false,
  preventLoginWithUnverifiedEmail: false,
  forceReloginOnPasswordChange: true,
  userQueryPermission: false,
  clientPushAllowed: false,
  commercial: false,
  mixedPush: false,
  androidIntentHostname: null,
  vendors: {},
};

describe('GET and PUT /1.1/settings', () => {
  test('a new application has the documented defaults', async () => {
    const res = await server.master.get('/1.1/settings');
    assert.equal(res.status, 200);
    for (const [key, value] of Object.entries(defaults)) assert.deepEqual(res.body[key], value, key);
  });

  test('PUT merges the given keys and returns the whole settings', async () => {
    const res = await server.master.put('/1.1/settings', { userQueryPermission: true, androidIntentHostname: 'push.example.com' });
    assert.equal(res.status, 200);
    assert.equal(res.body.userQueryPermission, true);
    assert.equal(res.body.androidIntentHostname, 'push.example.com');
    assert.equal(res.body.forceReloginOnPasswordChange, true);
    const again = await server.master.get('/1.1/settings');
    assert.equal(again.body.userQueryPermission, true);
  });

  test('mixed push needs a commercial application: 403 with the reason', async () => {
    const refused = await server.master.put('/1.1/settings', { mixedPush: true });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 403);
    assert.match(refused.body.error, /commercial/);
    assert.equal((await server.master.get('/1.1/settings')).body.mixedPush, false);
    const ok = await server.master.put('/1.1/settings', { commercial: true, mixedPush: true });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.mixedPush, true);
    const off = await server.master.put('/1.1/settings', { mixedPush: false, commercial: false });
    assert.equal(off.status, 200);
  });

  test('vendor secrets are never returned in full, and merge field by field', async () => {
    const res = await server.master.put('/1.1/settings', {
      vendors: { _default: { HMS: { appId: '10086', appSecret: 'super-secret-value' } } },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.vendors, { _default: { HMS: { appId: '10086', appSecret: '****alue' } } });
    assert.ok(!JSON.stringify((await server.master.get('/1.1/settings')).body).includes('super-secret-value'));
    const merged = await server.master.put('/1.1/settings', { vendors: { _default: { HMS: { appId: '10087' } } } });
    assert.deepEqual(merged.body.vendors._default.HMS, { appId: '10087', appSecret: '****alue' });
  });

  test('bad settings are refused and change nothing', async () => {
    const cases: Array<[unknown, number, number]> = [
      [{ commercial: 'yes' }, 400, 111],
      [{ unknownKey: true }, 400, 105],
      [{ androidIntentHostname: 'not a host' }, 400, 111],
      [{ vendors: { _default: { nokia: {} } } }, 400, 111],
      [{ vendors: { _default: { mi: { appSecret: 5 } } } }, 400, 111],
      [[1], 400, 107],
    ];
    const before = (await server.master.get('/1.1/settings')).body;
    for (const [body, status, code] of cases) {
      const res = await server.master.put('/1.1/settings', body);
      assert.deepEqual([res.status, res.body.code], [status, code], JSON.stringify(body));
    }
    assert.deepEqual((await server.master.get('/1.1/settings')).body, before);
  });

  test('settings need the master key', async () => {
    assert.equal((await server.client.get('/1.1/settings')).status, 403);
    assert.equal((await server.client.put('/1.1/settings', { commercial: true })).status, 403);
  });
});

describe('the roost command', () => {
  let database: TestDatabase;
  before(async () => {
    database = await testDatabase();
  });
  after(async () => {
    await database?.drop();
  });

  const roost = (...args: string[]) =>
    run(process.execPath, [...roostScript('cli'), ...args], {
      env: { ...process.env, ...database.env, DATABASE_URL: database.env.DATABASE_URL ?? '' },
    });

  test('app create, app list, app settings', async () => {
    const created = JSON.parse((await roost('app', 'create', '--name', 'shop')).stdout);
    assert.deepEqual(Object.keys(created).sort(), ['appId', 'appKey', 'masterKey']);
    const list = JSON.parse((await roost('app', 'list')).stdout);
    assert.deepEqual(list.map((app: { appId: string; name: string }) => [app.appId, app.name]), [[created.appId, 'shop']]);
    const shown = JSON.parse((await roost('app', 'settings', created.appId)).stdout);
    assert.equal(shown.forceReloginOnPasswordChange, true);
    const changed = JSON.parse(
      (await roost('app', 'settings', created.appId, '--set', 'commercial=true', '--set', 'androidIntentHostname=push.shop.example')).stdout,
    );
    assert.equal(changed.commercial, true);
    assert.equal(changed.androidIntentHostname, 'push.shop.example');
  });

  test('usage errors exit 2 with a message', async () => {
    await assert.rejects(roost('app', 'create'), (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 2);
      assert.match(error.stderr, /--name/);
      return true;
    });
  });

  test('an unknown option exits 2 with the usage, not a stack trace', async () => {
    await assert.rejects(roost('devices', 'simulate', '--no-such-option'), (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 2);
      assert.match(error.stderr, /Usage: roost/);
      assert.doesNotMatch(error.stderr, /\n\s+at /);
      return true;
    });
  });

  test('a refused setting exits 1 with the reason', async () => {
    const created = JSON.parse((await roost('app', 'create', '--name', 'free')).stdout);
    await assert.rejects(roost('app', 'settings', created.appId, '--set', 'mixedPush=true'), (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr, /commercial/);
      return true;
    });
  });
});
