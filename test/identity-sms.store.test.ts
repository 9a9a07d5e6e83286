// Conformance of the IdentityStore and SmsStore verbs on SQLite and (with DATABASE_URL) PostgreSQL:
// the identity index follows authData through inserts, updates and deletes; issuing respects the
// per-number limits under concurrency; a code is consumed once.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import type { Store } from '../src/storage/store.ts';
import type { StoredObject } from '../src/objects/types.ts';
import type { SmsLimits } from '../src/storage/sms-store.ts';

let database: TestDatabase;
let store: Store;
before(async () => {
  database = await testDatabase();
  store = await database.open();
  await store.createApp({ appId: 'app1', name: 'one', appKey: 'k1', masterKey: 'm1', settings: {}, createdAt: 1 });
});
after(async () => {
  await store?.close();
  await database?.drop();
});

const session = (n: number) => ({ digest: `digest-${n}`, cipher: `cipher-${n}` });
let seq = 0;
function user(data: StoredObject['data']): StoredObject {
  seq += 1;
  return { className: '_User', objectId: `user${String(seq).padStart(6, '0')}`, createdAt: seq, updatedAt: seq, acl: null, data };
}

test('insertUser binds the identities of authData; the loser of a race learns field authData', async () => {
  const users = Array.from({ length: 10 }, (_, i) => user({ username: `u-${seq}-${i}`, authData: { p: { uid: 'same' } } }));
  const outcomes = await Promise.all(users.map((u, i) => store.identities.insertUser('app1', u, { passwordHash: null, session: session(seq * 100 + i) })));
  assert.equal(outcomes.filter((o) => o.ok).length, 1);
  for (const outcome of outcomes.filter((o) => !o.ok)) assert.deepEqual(outcome, { ok: false, reason: 'taken', field: 'authData' });
  const bound = await store.identities.findBound('app1', [{ platform: 'p', uid: 'same' }, { platform: 'p', uid: 'other' }]);
  assert.equal(bound.length, 1);
  // The losers left no row behind.
  const winner = users[outcomes.findIndex((o) => o.ok)];
  assert.equal(bound[0].userId, winner.objectId);
  assert.equal((await store.accounts.findUser('app1', { userId: users.find((u) => u !== winner)!.objectId })), null);
});

test('identities follow authData on update and delete; openid and id count as the uid', async () => {
  const ann = user({ username: `ann${seq}`, authData: { weixin: { openid: 'wx-ann' }, anonymous: { id: 'anon-ann' } } });
  const bob = user({ username: `bob${seq}` });
  assert.ok((await store.identities.insertUser('app1', ann, { passwordHash: null, session: session(9001) })).ok);
  assert.ok((await store.identities.insertUser('app1', bob, { passwordHash: 'h', session: session(9002) })).ok);
  const found = await store.identities.findBound('app1', [{ platform: 'weixin', uid: 'wx-ann' }, { platform: 'anonymous', uid: 'anon-ann' }]);
  assert.equal(found.length, 2);
  const annRef = { appId: 'app1', className: '_User', objectId: ann.objectId };
  const bobRef = { appId: 'app1', className: '_User', objectId: bob.objectId };
  // Bob cannot take Ann's account; the row is not changed.
  const taken = await store.updateObject(bobRef, (c) => ({ ...c, data: { ...c.data, authData: { weixin: { openid: 'wx-ann' } } } }));
  assert.deepEqual(taken, { ok: false, reason: 'taken', field: 'authData' });
  assert.equal((await store.getObject(bobRef, null))?.data.authData, undefined);
  // Ann drops anonymous: its id is free, Bob may take it.
  assert.ok((await store.updateObject(annRef, (c) => ({ ...c, data: { ...c.data, authData: { weixin: { openid: 'wx-ann' } } } }))).ok);
  assert.deepEqual(await store.identities.findBound('app1', [{ platform: 'anonymous', uid: 'anon-ann' }]), []);
  assert.ok((await store.updateObject(bobRef, (c) => ({ ...c, data: { ...c.data, authData: { anonymous: { id: 'anon-ann' } } } }))).ok);
  // Deleting Ann frees her accounts.
  assert.ok((await store.deleteObject(annRef, () => null)).ok);
  assert.deepEqual(await store.identities.findBound('app1', [{ platform: 'weixin', uid: 'wx-ann' }]), []);
});

const limits: SmsLimits = { minIntervalMs: 60_000, maxPerWindow: 3, windowMs: 600_000 };
const code = (phone: string, digest: string, expiresAt: number, purpose = 'sms') => ({ appId: 'app1', phone, purpose, digest, expiresAt });

test('issue: one send per interval under concurrency, at most maxPerWindow in a sliding window', async () => {
  const phone = '+8613900000001';
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.sms.issue(code(phone, `d${i}`, 10_000_000), 1_000_000, limits)));
  assert.equal(results.filter((r) => r === null).length, 1);
  assert.ok(results.filter((r) => r !== null).every((r) => r === 'tooSoon'));
  assert.equal(await store.sms.issue(code(phone, 'x', 10_000_000), 1_059_999, limits), 'tooSoon');
  assert.equal(await store.sms.issue(code(phone, 'x', 10_000_000), 1_060_000, limits), null);
  assert.equal(await store.sms.issue(code(phone, 'x', 10_000_000), 1_120_000, limits), null);
  assert.equal(await store.sms.issue(code(phone, 'x', 10_000_000), 1_180_000, limits), 'dailyLimit');
  // The first send leaves the window: one more is allowed.
  assert.equal(await store.sms.issue(code(phone, 'y', 10_000_000), 1_600_001, limits), null);
});

test('consume: once, only live, only its purposes; wrong guesses void the number’s codes', async () => {
  const phone = '+8613900000002';
  assert.equal(await store.sms.issue(code(phone, 'right', 2_000_000, 'login'), 1_000_000, limits), null);
  assert.equal(await store.sms.consume('app1', phone, ['reset'], 'right', 1_000_001, 10), null);
  const both = await Promise.all(Array.from({ length: 5 }, () => store.sms.consume('app1', phone, ['login', 'sms'], 'right', 1_000_001, 10)));
  assert.deepEqual(both.filter((c) => c !== null), [{ phone, purpose: 'login' }]);

  assert.equal(await store.sms.issue(code(phone, 'late', 1_100_000), 1_070_000, limits), null);
  assert.equal(await store.sms.consume('app1', phone, ['sms'], 'late', 1_100_000, 10), null);

  assert.equal(await store.sms.issue(code(phone, 'guessed', 9_000_000), 1_200_000, limits), null);
  for (let i = 0; i < 3; i++) assert.equal(await store.sms.consume('app1', phone, ['sms'], `wrong${i}`, 1_200_001, 3), null);
  assert.equal(await store.sms.consume('app1', phone, ['sms'], 'guessed', 1_200_002, 3), null);

  // Without a number: the digest must match exactly one live code.
  assert.equal(await store.sms.issue(code('+8613900000003', 'shared', 9_000_000, 'verify'), 1_000_000, limits), null);
  assert.equal(await store.sms.issue(code('+8613900000004', 'shared', 9_000_000, 'verify'), 1_000_000, limits), null);
  assert.equal(await store.sms.consume('app1', null, ['verify'], 'shared', 1_000_001, 10), null);
  assert.equal(await store.sms.issue(code('+8613900000005', 'alone', 9_000_000, 'verify'), 1_000_000, limits), null);
  assert.deepEqual(await store.sms.consume('app1', null, ['verify'], 'alone', 1_000_001, 10), { phone: '+8613900000005', purpose: 'verify' });
});

test('guesses are counted per key in a sliding window', async () => {
  assert.equal(await store.sms.guesses('app1', '*k', 1000, 100), 0);
  assert.equal(await store.sms.recordGuess('app1', '*k', 1000, 100), 1);
  assert.equal(await store.sms.recordGuess('app1', '*k', 1050, 100), 2);
  assert.equal(await store.sms.guesses('app1', '*k', 1101, 100), 1);
  assert.equal(await store.sms.guesses('app1', '*other', 1101, 100), 0);
});
