import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import { spawnRoost, type RoostProcess } from './helpers/processes.ts';
import { Client } from './helpers/client.ts';

let database: TestDatabase;
let first: RoostProcess;
let second: RoostProcess;

before(async () => {
  database = await testDatabase();
  first = await spawnRoost(database.env);
  second = await spawnRoost(database.env);
});
after(async () => {
  await first?.stop();
  await second?.stop();
  await database?.drop();
});

test('the first start creates the "default" application once and prints its keys', () => {
  assert.ok(first.defaultKeys, first.lines.join('\n'));
  assert.equal(second.defaultKeys, null);
  const logged = first.lines.filter((line) => line.startsWith('{')).join('\n');
  assert.ok(!logged.includes(first.defaultKeys!.appKey), 'the app key never reaches a log line');
  assert.ok(!logged.includes(first.defaultKeys!.masterKey), 'the master key never reaches a log line');
});

test('two Roost processes on one database see each other’s writes at once', async () => {
  const keys = first.defaultKeys!;
  const a = new Client({ url: first.url, appId: keys.appId, appKey: keys.appKey });
  const b = new Client({ url: second.url, appId: keys.appId, appKey: keys.appKey });
  const created = await a.post('/1.1/classes/Shared', { n: 1 });
  assert.equal(created.status, 201);
  const seen = await b.get(`/1.1/classes/Shared/${created.body.objectId}`);
  assert.equal(seen.body.n, 1);
  const responses = await Promise.all([
    ...Array.from({ length: 10 }, () => a.put(`/1.1/classes/Shared/${created.body.objectId}`, { n: { __op: 'Increment' } })),
    ...Array.from({ length: 10 }, () => b.put(`/1.1/classes/Shared/${created.body.objectId}`, { n: { __op: 'Increment' } })),
  ]);
  assert.deepEqual(responses.map((r) => r.status), Array(20).fill(200), JSON.stringify(responses.map((r) => r.body)));
  assert.equal((await a.get(`/1.1/classes/Shared/${created.body.objectId}`)).body.n, 21);
  const masterB = new Client({ url: second.url, ...keys });
  assert.equal((await b.put('/1.1/settings', { userQueryPermission: true })).status, 403);
  assert.equal((await masterB.put('/1.1/settings', { userQueryPermission: true })).status, 200);
  assert.equal((await new Client({ url: first.url, ...keys }).get('/1.1/settings')).body.userQueryPermission, true);
  const health = await fetch(second.url + '/health');
  assert.equal(health.status, 200);
});
