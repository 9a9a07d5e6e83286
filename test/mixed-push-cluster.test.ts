// Two Roost processes (src/main.ts, the default senders) share one mixed-push job: every device
// is sent to its maker exactly once, and the record adds up.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import { spawnRoost, type RoostProcess } from './helpers/processes.ts';
import { Client } from './helpers/client.ts';
import { closeMakers, sentTokens, startMakers, vendorSettings, type Makers } from './helpers/makers.ts';
import { seedMixedInstallations, seededToken } from './helpers/seed-mixed.ts';
import { vendors } from '../src/push/vendors/types.ts';

let database: TestDatabase;
let makers: Makers;
let a: RoostProcess;
let b: RoostProcess;
let keys: { appId: string; appKey: string; masterKey: string };
const env = { PUSH_PAGE_SIZE: '50', LOG_LEVEL: 'warn' };
const count = 2100;
const routes = ['lc', ...vendors];

before(async () => {
  database = await testDatabase();
  makers = await startMakers();
  a = await spawnRoost({ ...database.env, ...env, LOG_LEVEL: 'info' });
  b = await spawnRoost({ ...database.env, ...env, LOG_LEVEL: 'info' });
  keys = a.defaultKeys!;
});
after(async () => {
  await a?.stop();
  await b?.stop();
  await closeMakers(makers);
  await database?.drop();
});

const master = (node: RoostProcess) => new Client({ url: node.url, ...keys });

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('two processes share one job with makers: each device is sent once', async () => {
  const on = await master(a).put('/1.1/settings', { commercial: true, mixedPush: true, vendors: vendorSettings(makers) });
  assert.equal(on.status, 200, on.text);
  await seedMixedInstallations({ env: database.env, appId: keys.appId, count, prefix: 'mx-', channel: 'mx', routes });
  const pushed = await master(b).post('/1.1/push', { channels: ['mx'], data: { alert: 'shared', title: 'two nodes' } });
  assert.equal(pushed.status, 201, pushed.text);
  const done = await waitFor('done', async () => {
    const r = (await master(a).get(`/1.1/notifications/${pushed.body.objectId}`)).body;
    return r.status === 'done' ? r : null;
  });
  const per = count / routes.length;
  assert.equal(done.devices, count);
  assert.equal(done.routes.lc.devices, per);
  assert.equal(done.successes, per * vendors.length);
  for (const [index, vendor] of vendors.entries()) {
    assert.deepEqual(done.routes[vendor], { devices: per, successes: per, failures: 0, invalidTokens: 0, dropped: 0 }, vendor);
    const expected = Array.from({ length: per }, (_, k) => seededToken('mx-', k * routes.length + index + 1)).sort();
    const tokens = sentTokens(makers[vendor]);
    assert.equal(tokens.length, per, `${vendor}: every device once`);
    assert.deepEqual([...tokens].sort(), expected, vendor);
    assert.deepEqual(makers[vendor].violations, [], vendor);
  }
  // Both processes did part of the work: each one's GET /metrics counts the devices it handed to makers.
  const sentBy = async (node: RoostProcess) => {
    const text = await (await fetch(`${node.url}/metrics`)).text();
    return [...text.matchAll(/^roost_push_sent_total\{route="(\w+)",status="sent"\} (\d+)$/gm)]
      .filter((m) => m[1] !== 'channel')
      .reduce((sum, m) => sum + Number(m[2]), 0);
  };
  const [byA, byB] = [await sentBy(a), await sentBy(b)];
  assert.equal(byA + byB, per * vendors.length);
  assert.ok(byA > 0 && byB > 0, `a sent ${byA}, b sent ${byB}`);
});
