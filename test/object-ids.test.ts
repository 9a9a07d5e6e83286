// Issue #15, point 2: objectIds as the hosted service's (24 lowercase hex, the creation time in seconds
// first), so `order=objectId` and the SDK's Query#each follow time; imported ids of any format keep
// working; a query without `order` lists objects in insertion order. Before: ids were 24 random
// lowercase alphanumerics and a query without `order` came back in id order, which was random.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, startServer, type TestServer } from './helpers/harness.ts';
import { Importer } from '../src/import/importer.ts';

// Near the real time: signatures (X-LC-Sign) are checked against the server's clock.
const start = Date.now();
const clock = new ManualClock(start);
let server: TestServer;
let dir: string;

before(async () => {
  server = await startServer({ clock });
  dir = mkdtempSync(join(tmpdir(), 'roost-ids-'));
});
after(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const hexId = /^[0-9a-f]{24}$/;
const secondsOf = (id: string) => parseInt(id.slice(0, 8), 16);

async function ids(path: string, query: Record<string, string> = {}): Promise<string[]> {
  const res = await server.master.get(path, { query: { limit: '1000', ...query } });
  assert.equal(res.status, 200, res.text);
  return res.body.results.map((r: { objectId: string }) => r.objectId);
}

test('every new objectId is 24 lowercase hex characters starting with its creation time in seconds', async () => {
  clock.set(start);
  const object = await server.client.post('/1.1/classes/IdShape', { n: 1 });
  const user = await server.client.post('/1.1/users', { username: 'ids-user', password: 'ids-password-1' });
  const device = await server.client.post('/1.1/installations', { installationId: 'f'.repeat(32), deviceType: 'android' });
  const sdkUser = await server.client.post('/1.1/classes/_User', { username: 'ids-user-2', password: 'ids-password-1' });
  const batch = await server.client.post('/1.1/batch', { requests: [{ method: 'POST', path: '/1.1/classes/IdShape', body: { n: 2 } }] });
  assert.deepEqual([object.status, user.status, device.status, sdkUser.status, batch.status], [201, 201, 201, 201, 200]);
  const issued = [object.body.objectId, user.body.objectId, device.body.objectId, sdkUser.body.objectId, batch.body[0].success.objectId];
  for (const id of issued) {
    assert.match(id, hexId);
    assert.equal(id.slice(0, 8), Math.floor(start / 1000).toString(16));
    assert.equal(secondsOf(id), Math.floor(start / 1000));
  }
  // One process: the same 10 characters after the time, and a counter that moves on.
  assert.equal(new Set(issued.map((id) => id.slice(8, 18))).size, 1);
  assert.equal(new Set(issued).size, issued.length);
  assert.deepEqual([...issued].sort(), issued);
});

/** Creates `count` objects {i} of the class one after another, moving the clock by `step` ms before every `every`-th. */
async function createInTurn(className: string, count: number, every: number, step: number): Promise<string[]> {
  const created: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i % every === 0) clock.advance(step);
    created.push((await server.client.post(`/1.1/classes/${className}`, { i })).body.objectId);
  }
  return created;
}

test('ids issued in one second by one process sort in the order they were issued; across seconds by time', async () => {
  clock.set(start + 10_000);
  // Two objects a second, each pair in the same millisecond.
  const issued = await createInTurn('IdTime', 40, 2, 500);
  assert.deepEqual([...issued].sort(), issued);
  assert.deepEqual(await ids('/1.1/classes/IdTime', { order: 'objectId' }), issued);
  assert.deepEqual(await ids('/1.1/classes/IdTime', { order: '-objectId' }), [...issued].reverse());
  // Query#each's pages: objectId > last, ordered by objectId.
  const after = await ids('/1.1/classes/IdTime', { order: 'objectId', where: JSON.stringify({ objectId: { $gt: issued[19] } }), limit: '10' });
  assert.deepEqual(after, issued.slice(20, 30));
});

test('ids of two processes differ in their process part, never collide, and still start with the time', async () => {
  // A second copy of the module stands for another process (its own random part and counter).
  const here = await import('../src/lib/ids.ts');
  // The path as this file runs: from source (.ts) or compiled by npm test (.js), where a computed path is not rewritten.
  const another = `../src/lib/ids.${import.meta.url.endsWith('.js') ? 'js' : 'ts'}?process=2`;
  const there: typeof here = await import(another);
  const now = Date.UTC(2031, 5, 1);
  const a = Array.from({ length: 1000 }, () => here.newObjectId(now));
  const b = Array.from({ length: 1000 }, () => there.newObjectId(now));
  assert.notEqual(a[0].slice(8, 18), b[0].slice(8, 18));
  assert.equal(new Set([...a, ...b]).size, 2000);
  for (const id of [...a, ...b]) assert.equal(secondsOf(id), now / 1000);
  // Times outside what 8 hex characters hold are clamped, never longer or negative ids.
  assert.match(here.newObjectId(-5000), /^00000000[0-9a-f]{16}$/);
  assert.match(here.newObjectId(2 ** 45), /^ffffffff[0-9a-f]{16}$/);
});

test('a query without order lists objects in insertion order, whatever their ids', async () => {
  clock.set(start + 100_000);
  // Five in one millisecond, then time moves: insertion order either way.
  const created = await createInTurn('IdOrder', 25, 5, 1);
  assert.deepEqual(await ids('/1.1/classes/IdOrder'), created);
  // Pages of skip/limit walk the same order.
  const pages = [...(await ids('/1.1/classes/IdOrder', { limit: '10' })), ...(await ids('/1.1/classes/IdOrder', { limit: '10', skip: '10' })), ...(await ids('/1.1/classes/IdOrder', { skip: '20' }))];
  assert.deepEqual(pages, created);
  // With a where, and for the built-in classes, the same.
  const odd = created.filter((_, i) => i % 2 === 1);
  assert.deepEqual(await ids('/1.1/classes/IdOrder', { where: JSON.stringify({ i: { $in: [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23] } }) }), odd);
  const users: string[] = [];
  for (let i = 0; i < 5; i++) users.push((await server.client.post('/1.1/users', { username: `ids-order-${i}`, password: 'ids-password-1', group: 'order' })).body.objectId);
  assert.deepEqual(await ids('/1.1/users', { where: JSON.stringify({ group: 'order' }) }), users);
});

/** Runs `roost import`'s importer on one export file of the class. */
async function importLines(className: string, rows: object[]): Promise<void> {
  const file = join(dir, `${className}.jsonl`);
  writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
  const importer = new Importer({ store: server.store, clock: server.clock, appId: server.appId, secret: server.config.secret, workers: 0 });
  const [report] = await importer.run(file);
  assert.equal(report.inserted, rows.length, JSON.stringify(report));
}

// Ids the service issued (hex), older 24-character ids of any letter, Parse's 10 characters, and others an
// exporter may carry: all are kept, read, updated, queried and deleted as they are.
const foreignIds = ['5d8308029c9235000886c4cf', 'z9y8x7w6v5u4t3s2r1q0pona', 'Ab3dE5gH9k', 'legacy_id-01', '7', 'X'.repeat(64)];

test('imported objects keep ids of any format: read, updated, queried and deleted by them', async () => {
  clock.set(start + 200_000);
  // Exported out of time order; the ids sort neither by time nor by line.
  const rows = foreignIds.map((objectId, i) => ({ objectId, n: i, createdAt: new Date(Date.UTC(2019, 0, 10 - i)).toISOString() }));
  await importLines('Imported', rows);
  for (const [i, id] of foreignIds.entries()) {
    const path = `/1.1/classes/Imported/${id}`;
    assert.deepEqual((await server.client.get(path)).body.n, i, id);
    const put = await server.client.put(path, { n: { __op: 'Increment', amount: 100 }, tag: 'moved' });
    assert.equal(put.status, 200, `${id}: ${put.text}`);
    assert.equal((await server.client.get(path, { query: { keys: 'n' } })).body.n, i + 100);
  }
  const byId = await ids('/1.1/classes/Imported', { where: JSON.stringify({ objectId: { $in: foreignIds } }) });
  assert.deepEqual([...byId].sort(), [...foreignIds].sort());
  assert.deepEqual(await ids('/1.1/classes/Imported', { where: JSON.stringify({ objectId: foreignIds[2] }) }), [foreignIds[2]]);
  // Without order: by creation time, the oldest first (the export listed the newest first).
  assert.deepEqual(await ids('/1.1/classes/Imported'), [...foreignIds].reverse());
  // A new object sorts after them without order, and after the service's 2019 id by objectId (a later time).
  const fresh = (await server.client.post('/1.1/classes/Imported', { n: 99 })).body.objectId;
  assert.equal((await ids('/1.1/classes/Imported')).at(-1), fresh);
  const hexOnly = JSON.stringify({ objectId: { $in: [foreignIds[0], fresh] } });
  assert.deepEqual(await ids('/1.1/classes/Imported', { order: 'objectId', where: hexOnly }), [foreignIds[0], fresh]);
  for (const id of foreignIds) {
    const path = `/1.1/classes/Imported/${id}`;
    assert.deepEqual((await server.client.delete(path)).body, {}, id);
    assert.deepEqual((await server.client.get(path)).body, {}, id);
  }
  assert.deepEqual(await ids('/1.1/classes/Imported'), [fresh]);
});

test('imported users with ids of any format are found, updated and deleted by them', async () => {
  const rows = ['z9y8x7w6v5u4t3s2r1q0user', 'ParseUser1'].map((objectId, i) => ({ objectId, username: `imported-${i}`, createdAt: '2019-01-01T00:00:00.000Z' }));
  await importLines('_User', rows);
  for (const { objectId, username } of rows) {
    assert.equal((await server.master.get(`/1.1/users/${objectId}`)).body.username, username);
    assert.equal((await server.master.put(`/1.1/users/${objectId}`, { nickname: 'n' })).status, 200);
    assert.equal((await server.master.get(`/1.1/classes/_User/${objectId}`)).body.nickname, 'n');
    assert.deepEqual((await server.master.delete(`/1.1/users/${objectId}`)).body, {});
    assert.deepEqual((await server.master.get(`/1.1/users/${objectId}`)).body, { code: 211, error: 'Could not find user.' });
  }
});
