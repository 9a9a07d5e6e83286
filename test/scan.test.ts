// Scan (GET /1.1/scan/classes/<class>): keyset pages with a sealed cursor, master key only (reference §13).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startServer, type TestServer } from './helpers/harness.ts';
import { prepareImportBatch } from '../src/storage/import-batch.ts';
import type { StoredObject } from '../src/objects/types.ts';

let server: TestServer;
const total = 2500;
const objects: StoredObject[] = [];

before(async () => {
  server = await startServer();
  const now = Date.now();
  for (let n = 0; n < total; n++) {
    // Random ids, so the objectId order is not the insertion order.
    const data: Record<string, unknown> = { n, group: n % 3 };
    if (n % 10 !== 0) data.ts = 100_000 - n;
    objects.push({ className: 'Export', objectId: randomBytes(12).toString('hex'), createdAt: now + n, updatedAt: now + n, acl: n % 7 === 0 ? {} : null, data: data as StoredObject['data'] });
  }
  const records = objects.map((object) => ({ object, passwordHash: null, session: null }));
  const statuses = await server.store.ops.importObjects(prepareImportBatch(server.store.kind, server.appId, 'Export', records));
  assert.ok(statuses.every((status) => status.kind === 'inserted'));
});
after(async () => {
  await server?.close();
});

type Page = { status: number; body: any };

function scan(query: Record<string, unknown>, className = 'Export'): Promise<Page> {
  return server.master.get(`/1.1/scan/classes/${className}`, { query });
}

/** Every page of a scan, following the cursor to its end. */
async function scanAll(query: Record<string, unknown>): Promise<{ ns: number[]; pages: number[] }> {
  const ns: number[] = [];
  const pages: number[] = [];
  let cursor: string | null | undefined;
  do {
    const res = await scan(cursor ? { ...query, cursor } : query);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['results', 'cursor']);
    ns.push(...res.body.results.map((o: { n: number }) => o.n));
    pages.push(res.body.results.length);
    cursor = res.body.cursor;
    assert.ok(pages.length <= total, 'the scan ends');
  } while (cursor !== null);
  return { ns, pages };
}

const byId = (a: StoredObject, b: StoredObject) => (a.objectId < b.objectId ? -1 : a.objectId > b.objectId ? 1 : 0);

test('a scan by objectId reads every object once, in objectId order, 1,000 a page; the last page has cursor null', async () => {
  const { ns, pages } = await scanAll({ limit: 1000 });
  assert.deepEqual(pages, [1000, 1000, 500]);
  assert.deepEqual(ns, [...objects].sort(byId).map((o) => o.data.n));
  // A page is the REST find of the same order, to the byte.
  const first = await scan({ limit: 1000 });
  const rest = await server.master.get('/1.1/classes/Export', { query: { order: 'objectId', limit: 1000 } });
  assert.deepEqual(first.body.results, rest.body.results);
  assert.equal(typeof first.body.cursor, 'string');
});

test('a full last page is followed by {"results":[],"cursor":null}, as hosted; the default page is 100', async () => {
  const four = objects.filter((o) => o.data.group === 1).slice(0, 4).map((o) => o.data.n);
  const where = { n: { $in: four } };
  const one = await scan({ where, limit: 2 });
  const two = await scan({ where, limit: 2, cursor: one.body.cursor });
  const three = await scan({ where, limit: 2, cursor: two.body.cursor });
  assert.deepEqual([one.body.results.length, two.body.results.length], [2, 2]);
  assert.deepEqual(three.body, { results: [], cursor: null });
  assert.equal((await scan({})).body.results.length, 100);
  assert.equal((await scan({ limit: 5000 })).body.results.length, 1000);
});

test('where narrows the scan; the cursor carries only the position', async () => {
  const { ns } = await scanAll({ where: { group: 1 }, limit: 300 });
  assert.deepEqual(ns, [...objects].sort(byId).filter((o) => o.data.group === 1).map((o) => o.data.n));
});

test('scan_key: a field or createdAt, ascending or descending (-key), ties broken by objectId; objects without the key are left out', async () => {
  const withTs = objects.filter((o) => o.data.ts !== undefined);
  assert.deepEqual((await scanAll({ scan_key: 'ts', limit: 700 })).ns, [...withTs].sort((a, b) => (a.data.ts as number) - (b.data.ts as number)).map((o) => o.data.n));
  assert.deepEqual((await scanAll({ scan_key: '-ts', limit: 700 })).ns, [...withTs].sort((a, b) => (b.data.ts as number) - (a.data.ts as number)).map((o) => o.data.n));
  const byGroup = [...objects].sort((a, b) => (a.data.group as number) - (b.data.group as number) || byId(a, b));
  assert.deepEqual((await scanAll({ scan_key: 'group', limit: 333 })).ns, byGroup.map((o) => o.data.n));
  assert.deepEqual((await scanAll({ scan_key: 'createdAt', limit: 999 })).ns, objects.map((o) => o.data.n));
  const keysOnly = await scan({ scan_key: 'ts', limit: 2, keys: 'group' });
  assert.deepEqual(Object.keys(keysOnly.body.results[0]).sort(), ['createdAt', 'group', 'objectId', 'ts', 'updatedAt']);
});

test('a bad cursor is 400 code 102, never a 500: garbage, tampered, or another scan\'s', async () => {
  const refused = { code: 102, error: 'Invalid scan cursor: send the cursor the previous page of the same scan answered.' };
  const page = await scan({ limit: 10 });
  const cursor = page.body.cursor as string;
  const [payload, mac] = cursor.split('.');
  const forged = Buffer.from(JSON.stringify([null, '0'])).toString('base64url');
  const bad = ['x', '.', 'a.b.c', `${forged}.${mac}`, `${payload}.${mac.slice(1)}x`, `${payload}`, `${cursor}.${mac}`, '%00', `${payload}.${'A'.repeat(5000)}`];
  for (const value of bad) {
    const res = await scan({ limit: 10, cursor: value });
    assert.deepEqual([res.status, res.body], [400, refused], value);
  }
  for (const other of [{ scan_key: '-objectId' }, { scan_key: 'n' }]) {
    const res = await scan({ limit: 10, cursor, ...other });
    assert.deepEqual([res.status, res.body], [400, refused], JSON.stringify(other));
  }
  const otherClass = await scan({ limit: 10, cursor }, 'Other');
  assert.deepEqual([otherClass.status, otherClass.body], [400, refused]);
  const next = await scan({ limit: 10, cursor });
  assert.equal(next.status, 200);
});

test('scan needs the master key; a bad where or key is refused as a REST find refuses it', async () => {
  const client = await server.client.get('/1.1/scan/classes/Export');
  assert.deepEqual([client.status, client.body], [403, { code: 403, error: 'Scan needs the master key.' }]);
  const where = await scan({ where: '{bad' });
  assert.deepEqual([where.status, where.body], [400, { code: 107, error: 'where is not valid JSON.' }]);
  const key = await scan({ scan_key: 'a b' });
  assert.equal(key.status, 400);
  assert.equal(key.body.code, 105);
  const empty = await scan({}, 'NoSuchClass');
  assert.deepEqual([empty.status, empty.body], [200, { results: [], cursor: null }]);
});
