// One conformance suite for the Store interface, run against every implementation available:
// SQLite always, PostgreSQL when DATABASE_URL names a server.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../src/storage/store.ts';
import type { StoredObject, Where } from '../src/objects/types.ts';
import { mergeSettings } from '../src/apps/settings.ts';
import { openSqliteStore } from '../src/storage/sqlite/open.ts';
import { openPostgresStore } from '../src/storage/postgres/open.ts';
import { freshPostgresDatabase, postgresUrl } from './helpers/databases.ts';

interface Implementation {
  name: string;
  open(): Promise<{ store: Store; cleanup: () => Promise<void> }>;
}

const implementations: Implementation[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'roost-conformance-'));
      const store = await openSqliteStore({ path: join(dir, 'db.sqlite') });
      return { store, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
];
if (postgresUrl) {
  implementations.push({
    name: 'postgres',
    async open() {
      const db = await freshPostgresDatabase();
      const store = await openPostgresStore({ url: db.url, poolSize: 8 });
      return { store, cleanup: db.drop };
    },
  });
}

let seq = 0;
function object(className: string, data: StoredObject['data'], acl: StoredObject['acl'] = null): StoredObject {
  seq += 1;
  return { className, objectId: `obj${String(seq).padStart(6, '0')}`, createdAt: 1000 + seq, updatedAt: 1000 + seq, acl, data };
}

for (const implementation of implementations) {
  describe(`Store conformance: ${implementation.name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, cleanup } = await implementation.open());
      await store.createApp({ appId: 'app1', name: 'one', appKey: 'k1', masterKey: 'm1', settings: {}, createdAt: 1 });
      await store.createApp({ appId: 'app2', name: 'two', appKey: 'k2', masterKey: 'm2', settings: {}, createdAt: 2 });
    });
    after(async () => {
      await store?.close();
      await cleanup?.();
    });

    test('applications: create, get, list, settings under a refusal', async () => {
      assert.equal((await store.getApp('app1'))?.name, 'one');
      assert.equal(await store.getApp('missing'), null);
      assert.deepEqual((await store.listApps()).map((a) => a.appId), ['app1', 'app2']);
      const next = await store.updateAppSettings('app1', (current) => ({ ...mergeSettings(current), commercial: true }));
      assert.equal((next as { commercial: boolean }).commercial, true);
      // The refusal is the caller's own value, handed back untouched: stores word no errors.
      const refusal = { reason: 'no' };
      const refused = await store.updateAppSettings('app1', () => ({ refused: refusal }));
      assert.ok(refused !== null && 'refused' in refused && refused.refused === refusal);
      assert.equal((await store.getApp('app1'))?.settings.commercial, true);
      assert.equal(await store.updateAppSettings('missing', (c) => c as never), null);
    });

    test('the server secret is generated once', async () => {
      const first = await store.serverSecret();
      assert.ok(first.length >= 32);
      assert.equal(await store.serverSecret(), first);
    });

    test('unique fields are enforced per application and reported by name', async () => {
      const user = object('_User', { username: 'ann', email: 'ann@x.org', mobilePhoneNumber: '+100' });
      assert.equal((await store.insertObject('app1', user)).ok, true);
      const cases: Array<[StoredObject['data'], string]> = [
        [{ username: 'ann' }, 'username'],
        [{ username: 'ann2', email: 'ann@x.org' }, 'email'],
        [{ username: 'ann3', mobilePhoneNumber: '+100' }, 'mobilePhoneNumber'],
      ];
      for (const [data, field] of cases) {
        assert.deepEqual(await store.insertObject('app1', object('_User', data)), { ok: false, reason: 'taken', field });
      }
      assert.deepEqual(await store.insertObject('app1', { ...object('Post', {}), objectId: user.objectId, className: '_User' }), {
        ok: false,
        reason: 'taken',
        field: 'objectId',
      });
      assert.equal((await store.insertObject('app2', object('_User', { username: 'ann' }))).ok, true, 'other app');
      assert.equal((await store.insertObject('app1', object('Post', { username: 'ann' }))).ok, true, 'other class');
      assert.equal((await store.insertObject('app1', object('_User', { username: 'Ann' }))).ok, true, 'case sensitive');
      await store.insertObject('app1', object('_Installation', { installationId: 'dev1' }));
      assert.deepEqual(await store.insertObject('app1', object('_Installation', { installationId: 'dev1' })), {
        ok: false,
        reason: 'taken',
        field: 'installationId',
      });
    });

    test('reads filter by the readers of each row; null readers (master) see all', async () => {
      const open = object('Doc', { n: 1 });
      const mine = object('Doc', { n: 2 }, { u1: { read: true, write: true } });
      const hidden = object('Doc', { n: 3 }, { u2: { write: true } });
      for (const o of [open, mine, hidden]) await store.insertObject('app1', o);
      const ref = (o: StoredObject) => ({ appId: 'app1', className: 'Doc', objectId: o.objectId });
      assert.equal((await store.getObject(ref(open), ['*']))?.data.n, 1);
      assert.equal(await store.getObject(ref(mine), ['*']), null);
      assert.equal((await store.getObject(ref(mine), ['*', 'u1']))?.data.n, 2);
      assert.equal(await store.getObject(ref(hidden), ['*', 'u2']), null);
      assert.equal((await store.getObject(ref(hidden), null))?.data.n, 3);
      const query = { where: { op: 'const', value: true } as const, order: [{ path: ['n'], descending: true }], limit: 10, skip: 0 };
      assert.deepEqual((await store.findObjects('app1', 'Doc', { ...query, readers: ['*'] })).map((o) => o.data.n), [1]);
      assert.deepEqual((await store.findObjects('app1', 'Doc', { ...query, readers: null })).map((o) => o.data.n), [3, 2, 1]);
      assert.deepEqual((await store.findObjects('app1', 'Doc', { ...query, readers: null, limit: 1, skip: 1 })).map((o) => o.data.n), [2]);
      assert.equal(await store.countObjects('app1', 'Doc', { op: 'const', value: true }, ['*', 'u1']), 2);
      assert.equal(await store.classExists('app1', 'Doc'), true);
      assert.equal(await store.classExists('app2', 'Doc'), false);
    });

    test('updates run under a row lock: concurrent changes all land', async () => {
      const counter = object('Counter', { n: 0 });
      await store.insertObject('app1', counter);
      const ref = { appId: 'app1', className: 'Counter', objectId: counter.objectId };
      await Promise.all(
        Array.from({ length: 25 }, () =>
          store.updateObject(ref, (current) => ({ ...current, data: { n: (current.data.n as number) + 1 } })),
        ),
      );
      assert.equal((await store.getObject(ref, null))?.data.n, 25);
    });

    test('update outcomes: refused, condition failed, not found, taken', async () => {
      const doc = object('_User', { username: 'zed', n: 1 });
      await store.insertObject('app1', doc);
      const ref = { appId: 'app1', className: '_User', objectId: doc.objectId };
      const refused = await store.updateObject(ref, () => ({ refused: 'denied' }));
      assert.deepEqual(refused, { ok: false, reason: 'refused', refusal: 'denied' });
      assert.equal((await store.getObject(ref, null))?.data.n, 1);
      const condition = { where: { op: 'eq', path: ['n'], value: 2 } as Where, readers: null };
      assert.deepEqual(await store.updateObject(ref, (c) => c, condition), { ok: false, reason: 'conditionFailed' });
      // Review of e2b2d15 (ACL oracle): the refusal comes before the condition, whatever it says.
      const refusedFirst = await store.updateObject(ref, () => ({ refused: 'denied' }), condition);
      assert.deepEqual(refusedFirst, { ok: false, reason: 'refused', refusal: 'denied' });
      assert.deepEqual(await store.updateObject({ ...ref, objectId: 'nope' }, (c) => c, condition), { ok: false, reason: 'notFound' });
      const taken = await store.updateObject(ref, (c) => ({ ...c, data: { username: 'ann' } }));
      assert.deepEqual(taken, { ok: false, reason: 'taken', field: 'username' });
      assert.equal((await store.getObject(ref, null))?.data.username, 'zed');
    });

    // SQLite's get-by-id runs straight on the one connection (src/storage/sqlite/sqlite-store.ts); inside an
    // open write transaction it would see that transaction's uncommitted row, here one that is rolled back
    // (the user's row is updated, then its identity row collides with another user's).
    test('reads during an update never see a change that is rolled back', async () => {
      const authData = { weixin: { openid: 'rolled-back' } };
      const holder = object('_User', { username: 'holder' });
      await store.insertObject('app1', holder);
      await store.updateObject({ appId: 'app1', className: '_User', objectId: holder.objectId }, (current) => ({ ...current, data: { ...current.data, authData } }));
      const doc = object('_User', { username: 'free' });
      await store.insertObject('app1', doc);
      const ref = { appId: 'app1', className: '_User', objectId: doc.objectId };
      const reads: Array<Promise<StoredObject | null>> = [];
      // A read on every microtask turn while the update's transaction runs, until well after it ends.
      const readEachTurn = (left: number) => {
        reads.push(store.getObject(ref, null));
        if (left > 0) queueMicrotask(() => readEachTurn(left - 1));
      };
      const taken = await store.updateObject(ref, (current) => {
        readEachTurn(500);
        return { ...current, data: { ...current.data, authData } };
      });
      assert.deepEqual(taken, { ok: false, reason: 'taken', field: 'authData' });
      const seen = new Set((await Promise.all(reads)).map((read) => JSON.stringify(read?.data)));
      assert.deepEqual([...seen], [JSON.stringify({ username: 'free' })]);
    });

    test('quota pauses: shared per (app, profile, vendor), the later pause wins, expiry ends them', async () => {
      const key = { appId: 'app1', deviceProfile: '_default', vendor: 'mi' as const };
      assert.equal(await store.quotaPauses.current(key, 1000), null);
      await store.quotaPauses.pause(key, 5000, 'daily quota');
      await store.quotaPauses.pause(key, 3000, 'earlier');
      assert.deepEqual(await store.quotaPauses.current(key, 1000), { until: 5000, reason: 'daily quota' });
      assert.equal(await store.quotaPauses.current({ ...key, vendor: 'oppo' }, 1000), null);
      assert.equal(await store.quotaPauses.current({ ...key, appId: 'app2' }, 1000), null);
      assert.equal(await store.quotaPauses.current(key, 5000), null);
      await store.quotaPauses.pause(key, 9000, 'next day');
      assert.deepEqual(await store.quotaPauses.current(key, 6000), { until: 9000, reason: 'next day' });
    });

    // Review of e2b2d15 (ACL oracle): a condition is never met by a row its readers may not read, even a true one.
    test('a condition is evaluated with its readers: an unreadable row never meets it', async () => {
      const doc = object('Hidden', { secret: 's3' }, { u1: { read: true, write: true }, '*': { write: true } });
      await store.insertObject('app1', doc);
      const ref = { appId: 'app1', className: 'Hidden', objectId: doc.objectId };
      const matching: Where = { op: 'eq', path: ['secret'], value: 's3' };
      const bump = (c: StoredObject) => ({ ...c, data: { ...c.data, n: 1 } });
      for (const readers of [['*'], ['*', 'u2']]) {
        assert.deepEqual(await store.updateObject(ref, bump, { where: matching, readers }), { ok: false, reason: 'conditionFailed' });
        assert.deepEqual(await store.deleteObject(ref, () => null, { where: matching, readers }), { ok: false, reason: 'conditionFailed' });
      }
      assert.equal((await store.updateObject(ref, bump, { where: matching, readers: ['*', 'u1'] })).ok, true);
      assert.equal((await store.deleteObject(ref, () => null, { where: matching, readers: null })).ok, true);
    });

    test('delete: guard, condition and missing rows', async () => {
      const doc = object('Gone', { n: 1 });
      await store.insertObject('app1', doc);
      const ref = { appId: 'app1', className: 'Gone', objectId: doc.objectId };
      const refused = await store.deleteObject(ref, () => ({ refused: 'denied' }));
      assert.deepEqual(refused, { ok: false, reason: 'refused', refusal: 'denied' });
      assert.deepEqual(await store.deleteObject(ref, () => null, { where: { op: 'eq', path: ['n'], value: 9 }, readers: null }), {
        ok: false,
        reason: 'conditionFailed',
      });
      assert.equal((await store.deleteObject(ref, () => null)).ok, true);
      assert.deepEqual(await store.deleteObject(ref, () => null), { ok: false, reason: 'notFound' });
      assert.equal(await store.getObject(ref, null), null);
    });
  });
}
