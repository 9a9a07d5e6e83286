// Get-by-id's fast paths answer as the general path does (issue #14: a fast path that stays has a named
// seam and an equivalence test). SqliteStore.preparedGetById reads outside Kysely; Store.getObjectJson
// hands on the stored text, which must be JSON.stringify's text of the fields getObject gives;
// PostgresStore coalesces lookups that arrive together (LookupBatcher). Run on the
// database the run selects (test/storage/stores.ts), in-process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Acl, Readers, StoredObject, Where } from '../../src/objects/types.ts';
import { SqlStore } from '../../src/storage/sql/sql-store.ts';
import { freshApp, useStore } from './stores.ts';

const store = useStore();

const bodies: Array<StoredObject['data']> = [
  {},
  { title: 'plain', n: -0.1, big: 1e21, small: 5e-7, yes: true, none: null, list: [1, 'two', [3], { four: 4 }] },
  { b: 1, a: { 10: 'ten', 9: 'nine', z: {} }, _c: [{ 2: 'two', 1: 'one' }] },
  { text: 'é 中文 😀 "quoted" back\\slash\nnewline\ttab \u2028 \u001f </script>' },
  { owner: { __type: 'Pointer', className: '_User', objectId: 'u1' }, objectId: { x: 1 } },
];
const acls: Array<Acl | null> = [
  null,
  { '*': { read: true } },
  { u1: { read: true, write: true } },
  { 'role:admin': { read: true }, u2: { write: true } },
  { u5: { read: true } },
];
// null is the master key; six readers take a statement the SQLite store does not keep.
const readerSets: Readers[] = [null, ['*'], ['*', 'u1'], ['*', 'u2', 'role:admin'], ['*', 'u0', 'u1', 'u2', 'u3', 'u5']];

async function seedPaths(): Promise<Array<{ appId: string; className: string; objectId: string }>> {
  const appId = await freshApp(store());
  const now = Date.UTC(2024, 1, 29, 23, 59, 59, 999);
  const refs: Array<{ appId: string; className: string; objectId: string }> = [];
  let seq = 0;
  for (const data of bodies) {
    for (const acl of acls) {
      seq += 1;
      const objectId = `paths${String(seq).padStart(19, '0')}`;
      const object = { className: 'Paths', objectId, createdAt: now, updatedAt: now + seq, acl, data };
      assert.equal((await store().insertObject(appId, object)).ok, true);
      refs.push({ appId, className: 'Paths', objectId });
    }
  }
  refs.push(
    { appId, className: 'Paths', objectId: 'missing00000000000000000' },
    { appId, className: 'Paths', objectId: 'not\u0000plausible' },
    { appId, className: 'Other', objectId: refs[0].objectId },
    { appId: `${appId}x`, className: 'Paths', objectId: refs[0].objectId },
  );
  return refs;
}

test('getObject and getObjectJson answer as SqlStore does, for every row, reader set and odd id', async () => {
  const refs = await seedPaths();
  let seen = 0;
  for (const ref of refs) {
    for (const readers of readerSets) {
      const label = `${ref.className}/${ref.objectId} readers ${JSON.stringify(readers)}`;
      const general = await SqlStore.prototype.getObject.call(store() as SqlStore, ref, readers);
      assert.deepEqual(await store().getObject(ref, readers), general, label);
      const json = await store().getObjectJson(ref, readers);
      assert.deepEqual(json, general && { createdAt: general.createdAt, updatedAt: general.updatedAt, dataJson: JSON.stringify(general.data) }, label);
      if (general) seen += 1;
    }
  }
  // Each ACL is read by some reader sets and not by others: both answers were compared.
  assert.ok(seen > 0 && seen < refs.length * readerSets.length, String(seen));
});

test('lookups made together (one batch per class and reader set) answer as each made alone', async () => {
  const refs = await seedPaths();
  // Every ref with every reader set, twice (the same id twice in one batch), in one turn of the loop.
  const asks = [...refs, ...refs].flatMap((ref) => readerSets.map((readers) => ({ ref, readers })));
  const together = await Promise.all(asks.map(({ ref, readers }) => store().getObject(ref, readers)));
  const togetherJson = await Promise.all(asks.map(({ ref, readers }) => store().getObjectJson(ref, readers)));
  let seen = 0;
  for (const [i, { ref, readers }] of asks.entries()) {
    const general = await SqlStore.prototype.getObject.call(store() as SqlStore, ref, readers);
    const label = `${ref.className}/${ref.objectId} readers ${JSON.stringify(readers)}`;
    assert.deepEqual(together[i], general, label);
    assert.deepEqual(togetherJson[i], general && { createdAt: general.createdAt, updatedAt: general.updatedAt, dataJson: JSON.stringify(general.data) }, label);
    if (general) seen += 1;
  }
  assert.ok(seen > 0 && seen < asks.length, String(seen));
});

// A page that is a lone equality on a unique column (the id, username, email, mobilePhoneNumber, installationId)
// from its start goes with the lookups on PostgreSQL (PostgresStore.findObjects: the master key's
// `where={"username":…}`); every other page, and a value the lookup cannot carry, keeps SqlStore's page.
test('pages by a unique column, made together, answer as SqlStore pages do, for every reader set and odd value', async () => {
  const refs = await seedPaths();
  const appId = refs[0].appId;
  const now = Date.UTC(2024, 1, 29, 23, 59, 59, 999);
  const names = ['ada', 'é 中文 😀 "q"', 'Ada', 'x'.repeat(300)];
  for (const [i, username] of names.entries()) {
    const data = { username, email: `${i}@example.com`, mobilePhoneNumber: `+8613${String(i).padStart(9, '0')}`, n: i };
    const user = { className: '_User', objectId: `user${String(i).padStart(20, '0')}`, createdAt: now, updatedAt: now + i, acl: acls[i], data };
    assert.equal((await store().insertObject(appId, user)).ok, true);
    const device = { className: '_Installation', objectId: `inst${String(i).padStart(20, '0')}`, createdAt: now, updatedAt: now, acl: acls[i + 1], data: { installationId: username, deviceType: 'ios' } };
    assert.equal((await store().insertObject(appId, device)).ok, true);
  }
  const odd = ['missing', '', 'not\u0000plausible', 'lone \ud800 high', 'lone \udc00 low', '😀'];
  const asks: Array<{ className: string; where: Where; limit?: number; skip?: number; order?: boolean }> = [];
  for (const value of [...names, ...odd, '0@example.com', '+8613000000001']) {
    for (const field of ['username', 'email', 'mobilePhoneNumber']) asks.push({ className: '_User', where: { op: 'eq', path: [field], value } });
    asks.push({ className: '_Installation', where: { op: 'eq', path: ['installationId'], value } });
    asks.push({ className: 'Paths', where: { op: 'eq', path: ['objectId'], value } });
  }
  for (const ref of refs) asks.push({ className: ref.className, where: { op: 'eq', path: ['objectId'], value: ref.objectId } });
  const ada: Where = { op: 'eq', path: ['username'], value: 'ada' };
  asks.push(
    { className: '_User', where: { op: 'and', items: [ada] } },
    { className: '_User', where: ada, limit: 1 },
    { className: '_User', where: ada, skip: 1 },
    { className: '_User', where: ada, order: true },
    { className: '_User', where: { op: 'eq', path: ['username'], value: 7 } },
    { className: '_User', where: { op: 'eq', path: ['nickname'], value: 'ada' } },
    { className: '_User', where: { op: 'eq', path: ['installationId'], value: 'ada' } },
    { className: '_User', where: { op: 'eq', path: ['objectId'], value: 'user00000000000000000000' } },
  );
  const queries = [...asks, ...asks].flatMap((ask) =>
    readerSets.map((readers) => ({
      className: ask.className,
      query: { where: ask.where, order: ask.order ? [{ path: ['createdAt'], descending: true }] : [], limit: ask.limit ?? 100, skip: ask.skip ?? 0, readers },
    })),
  );
  const settled = (promise: Promise<unknown[]>) => promise.then((found) => ({ found }), (error: Error) => ({ error: error.message }));
  const together = await Promise.all(queries.map(({ className, query }) => settled(store().findObjects(appId, className, query))));
  const togetherJson = await Promise.all(queries.map(({ className, query }) => settled(store().findObjectsJson(appId, className, query))));
  let seen = 0;
  for (const [i, { className, query }] of queries.entries()) {
    const label = `${className} ${JSON.stringify(query)}`;
    const general = await settled(SqlStore.prototype.findObjects.call(store() as SqlStore, appId, className, query));
    assert.deepEqual(together[i], general, label);
    assert.deepEqual(togetherJson[i], await settled(SqlStore.prototype.findObjectsJson.call(store() as SqlStore, appId, className, query)), label);
    if ('found' in general && general.found.length > 0) seen += 1;
  }
  assert.ok(seen > 0 && seen < queries.length, String(seen));
});
