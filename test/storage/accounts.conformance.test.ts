// Conformance of the AccountStore (src/storage/account-store.ts): users with their secrets and sessions,
// compare-and-set of the password, and the lockout verbs (beginLoginAttempt counts an attempt before its
// secret is checked, atomically with the lock check, #13 point 2). Runs on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../src/objects/types.ts';
import { SqlAccountStore } from '../../src/storage/sql/account-store.ts';
import { freshApp, objectOf, sessionSeal, unique, useStore } from './stores.ts';

const store = useStore();

/** The session's user as userBySession reads it, without the row's version. */
const sessionUser = (appId: string, digest: string) => store().accounts.userBySession(appId, digest).then((seen) => seen && seen.object);

async function newUser(appId: string, data: StoredObject['data'], hash = 'hash-1') {
  const user = objectOf('_User', data);
  const session = sessionSeal(unique('s'));
  const outcome = await store().identities.insertUser(appId, user, { passwordHash: hash, session });
  assert.deepEqual(outcome, { ok: true, object: user });
  return { user, session };
}

test('identities.insertUser (the one way users are created): stored with its hash and session; found by id, username, email and phone, never across applications', async () => {
  const appId = await freshApp(store());
  const { user, session } = await newUser(appId, { username: 'ann', email: 'ann@x.org', mobilePhoneNumber: '+8613900000001' });
  const expected = { user, passwordHash: 'hash-1', sessionCipher: session.cipher };
  assert.deepEqual(await store().accounts.findUser(appId, { userId: user.objectId }), expected);
  assert.deepEqual(await store().accounts.findUser(appId, { field: 'username', value: 'ann' }), expected);
  assert.deepEqual(await store().accounts.findUser(appId, { field: 'email', value: 'ann@x.org' }), expected);
  assert.deepEqual(await store().accounts.findUser(appId, { field: 'mobilePhoneNumber', value: '+8613900000001' }), expected);
  assert.deepEqual(await sessionUser(appId, session.digest), user);
  // The user is an object like any other to the object verbs.
  assert.deepEqual(await store().getObject({ appId, className: '_User', objectId: user.objectId }, null), user);
  const other = await freshApp(store());
  assert.equal(await store().accounts.findUser(other, { userId: user.objectId }), null);
  assert.equal(await store().accounts.findUser(other, { field: 'username', value: 'ann' }), null);
  assert.equal(await sessionUser(other, session.digest), null);
});

test('findUser and userBySession: missing users, other values, case and implausible ids are null', async () => {
  const appId = await freshApp(store());
  await newUser(appId, { username: 'bob', email: 'bob@x.org' });
  assert.equal(await store().accounts.findUser(appId, { userId: 'missing' }), null);
  assert.equal(await store().accounts.findUser(appId, { userId: 'bad\u0000id' }), null);
  assert.equal(await store().accounts.findUser(appId, { userId: '' }), null);
  assert.equal(await store().accounts.findUser(appId, { field: 'username', value: 'Bob' }), null);
  assert.equal(await store().accounts.findUser(appId, { field: 'email', value: 'bob' }), null);
  assert.equal(await store().accounts.findUser(appId, { field: 'mobilePhoneNumber', value: 'bob@x.org' }), null);
  assert.equal(await sessionUser(appId, 'digest-none'), null);
  // A username stored on another class is no login.
  await store().insertObject(appId, objectOf('Profile', { username: 'carol' }));
  assert.equal(await store().accounts.findUser(appId, { field: 'username', value: 'carol' }), null);
});

test('identities.insertUser (the one way users are created): username, email, phone, objectId unique per application; concurrent sign-ups of one name: one wins', async () => {
  const appId = await freshApp(store());
  const { user } = await newUser(appId, { username: 'dan', email: 'dan@x.org', mobilePhoneNumber: '+8613900000002' });
  const cases: Array<[StoredObject, string]> = [
    [objectOf('_User', { username: 'dan' }), 'username'],
    [objectOf('_User', { username: 'dan2', email: 'dan@x.org' }), 'email'],
    [objectOf('_User', { username: 'dan3', mobilePhoneNumber: '+8613900000002' }), 'mobilePhoneNumber'],
    [{ ...objectOf('_User', { username: 'dan4' }), objectId: user.objectId }, 'objectId'],
  ];
  for (const [candidate, field] of cases) {
    const outcome = await store().identities.insertUser(appId, candidate, { passwordHash: 'h', session: sessionSeal(unique('s')) });
    assert.deepEqual(outcome, { ok: false, reason: 'taken', field });
    assert.equal(await store().accounts.findUser(appId, { userId: candidate.objectId }).then((r) => r?.user.data.username), field === 'objectId' ? 'dan' : undefined);
  }
  const racers = Array.from({ length: 10 }, () => objectOf('_User', { username: 'race' }));
  const outcomes = await Promise.all(racers.map((u) => store().identities.insertUser(appId, u, { passwordHash: 'h', session: sessionSeal(unique('s')) })));
  assert.equal(outcomes.filter((o) => o.ok).length, 1);
  for (const o of outcomes.filter((o) => !o.ok)) assert.deepEqual(o, { ok: false, reason: 'taken', field: 'username' });
  assert.equal((await newUser(await freshApp(store()), { username: 'dan' })).user.data.username, 'dan', 'another application');
});

test('setSession: the new session replaces the old at once, with updatedAt when given; false for a missing user', async () => {
  const appId = await freshApp(store());
  const { user, session } = await newUser(appId, { username: 'eve' });
  const next = sessionSeal(unique('s'));
  assert.equal(await store().accounts.setSession(appId, user.objectId, next), true);
  assert.equal(await sessionUser(appId, session.digest), null);
  assert.deepEqual(await sessionUser(appId, next.digest), user);
  assert.equal((await store().accounts.findUser(appId, { userId: user.objectId }))?.sessionCipher, next.cipher);
  // With updatedAt (refreshSessionToken) the user's updatedAt moves too; nothing else of it changes.
  const refreshed = sessionSeal(unique('s'));
  const updatedAt = user.updatedAt + 1000;
  assert.equal(await store().accounts.setSession(appId, user.objectId, refreshed, updatedAt), true);
  assert.deepEqual(await sessionUser(appId, refreshed.digest), { ...user, updatedAt });
  assert.equal(await store().accounts.setSession(appId, 'missing', sessionSeal(unique('s'))), false);
  assert.equal(await store().accounts.setSession(await freshApp(store()), user.objectId, sessionSeal(unique('s'))), false);
  // A user deleted through the object verbs has no session left.
  assert.ok((await store().deleteObject({ appId, className: '_User', objectId: user.objectId }, () => null)).ok);
  assert.equal(await sessionUser(appId, refreshed.digest), null);
  assert.equal(await store().accounts.setSession(appId, user.objectId, sessionSeal(unique('s'))), false);
});

test('setPassword: stores the hash and updatedAt, optionally a new session; expectedHash is a compare-and-set', async () => {
  const appId = await freshApp(store());
  const { user, session } = await newUser(appId, { username: 'fay' });
  assert.equal(await store().accounts.setPassword(appId, user.objectId, { passwordHash: 'hash-2', updatedAt: 5_000_000 }), true);
  let found = await store().accounts.findUser(appId, { userId: user.objectId });
  assert.equal(found?.passwordHash, 'hash-2');
  assert.equal(found?.user.updatedAt, 5_000_000);
  assert.deepEqual(await sessionUser(appId, session.digest).then((u) => u?.objectId), user.objectId, 'no session given: the old one stays');

  assert.equal(await store().accounts.setPassword(appId, user.objectId, { passwordHash: 'hash-x', updatedAt: 5_000_001, expectedHash: 'hash-1' }), false);
  assert.equal(await store().accounts.setPassword(appId, user.objectId, { passwordHash: 'hash-x', updatedAt: 5_000_001, expectedHash: null }), false);
  found = await store().accounts.findUser(appId, { userId: user.objectId });
  assert.equal(found?.passwordHash, 'hash-2');
  assert.equal(found?.user.updatedAt, 5_000_000, 'a refused change stores nothing');

  const next = sessionSeal(unique('s'));
  assert.equal(await store().accounts.setPassword(appId, user.objectId, { passwordHash: 'hash-3', updatedAt: 5_000_002, expectedHash: 'hash-2', session: next }), true);
  assert.equal(await sessionUser(appId, session.digest), null);
  assert.equal((await sessionUser(appId, next.digest))?.objectId, user.objectId);

  // Two changes from the same old password at once: one wins.
  const racing = await Promise.all(
    Array.from({ length: 8 }, (_, i) => store().accounts.setPassword(appId, user.objectId, { passwordHash: `hash-r${i}`, updatedAt: 5_000_003, expectedHash: 'hash-3' })),
  );
  assert.equal(racing.filter(Boolean).length, 1);
  assert.equal((await store().accounts.findUser(appId, { userId: user.objectId }))?.passwordHash, `hash-r${racing.indexOf(true)}`);

  assert.equal(await store().accounts.setPassword(appId, 'missing', { passwordHash: 'h', updatedAt: 1 }), false);
});

test('setPassword: expectedHash null matches a user without a password (a third-party or SMS sign-up)', async () => {
  const appId = await freshApp(store());
  const user = objectOf('_User', { username: 'gus' });
  assert.ok((await store().identities.insertUser(appId, user, { passwordHash: null, session: sessionSeal(unique('s')) })).ok);
  assert.equal((await store().accounts.findUser(appId, { userId: user.objectId }))?.passwordHash, null);
  assert.equal(await store().accounts.setPassword(appId, user.objectId, { passwordHash: 'h2', updatedAt: 2, expectedHash: 'h1' }), false);
  assert.equal(await store().accounts.setPassword(appId, user.objectId, { passwordHash: 'h1', updatedAt: 2, expectedHash: null }), true);
  assert.equal((await store().accounts.findUser(appId, { userId: user.objectId }))?.passwordHash, 'h1');
});

// ── lockout ─────────────────────────────────────────────────────────────────

const windowMs = 15 * 60_000;
const begin = (appId: string, userId: string, now: number, on = store()) => on.accounts.beginLoginAttempt(appId, userId, now, windowMs);

test('beginLoginAttempt: seven attempts are counted, the eighth refused until a window after the last', async () => {
  const appId = await freshApp(store());
  const userId = unique('u');
  const t0 = 1_000_000;
  for (let i = 0; i < 7; i++) assert.equal(await begin(appId, userId, t0 + i * 1000), i + 1, `attempt ${i + 1}`);
  const last = t0 + 6000;
  assert.equal(await begin(appId, userId, last + 1), null);
  assert.equal(await begin(appId, userId, last + windowMs - 1), null);
  // Refused attempts recorded nothing: the lock ends a window after the last counted one.
  assert.equal(await begin(appId, userId, last + windowMs), 1);
});

test('beginLoginAttempt: the window slides, so seven attempts never within one window lock nothing; counts are per user and application', async () => {
  const appId = await freshApp(store());
  const userId = unique('u');
  for (let i = 0; i < 6; i++) assert.ok(await begin(appId, userId, i * 60_000));
  // In the window (1 min, 16 min]: the attempts at 2 to 5 minutes and this one.
  assert.equal(await begin(appId, userId, 16 * 60_000), 5);
  assert.equal(await begin(appId, userId, 16 * 60_000 + 1), 6);
  assert.equal(await begin(appId, userId, 16 * 60_000 + 2), 7);
  assert.equal(await begin(appId, userId, 16 * 60_000 + 3), null);
  assert.equal(await begin(appId, unique('u'), 16 * 60_000 + 3), 1);
  assert.equal(await begin(await freshApp(store()), userId, 16 * 60_000 + 3), 1);
});

test('recordLoginFailure counts without a check, also while locked; clearLoginFailures forgets every attempt', async () => {
  const appId = await freshApp(store());
  const userId = unique('u');
  for (let i = 0; i < 6; i++) await store().accounts.recordLoginFailure(appId, userId, 100 + i);
  assert.equal(await begin(appId, userId, 200), 7);
  assert.equal(await begin(appId, userId, 201), null);
  // The lock lasts a window after the last failure.
  await store().accounts.recordLoginFailure(appId, userId, 10_000);
  assert.equal(await begin(appId, userId, 10_000 + windowMs - 1), null);
  await store().accounts.clearLoginFailures(appId, userId);
  assert.equal(await begin(appId, userId, 10_001), 1);
  await store().accounts.clearLoginFailures(appId, unique('nobody'));
});

test('beginLoginAttempt under concurrency (on two stores of one database where the driver allows): exactly seven counted', async () => {
  const appId = await freshApp(store());
  const userId = unique('u');
  const second = await store.another();
  const stores = second ? [store(), second] : [store()];
  const attempts = await Promise.all(Array.from({ length: 60 }, (_, i) => begin(appId, userId, 10_000 + i, stores[i % stores.length])));
  assert.deepEqual(attempts.filter((a) => a !== null).sort(), [1, 2, 3, 4, 5, 6, 7]);
});

test('findUserCountingAttempt: findUser and beginLoginAttempt at once (one statement on PostgreSQL); no user, nothing counted', async () => {
  const appId = await freshApp(store());
  const { user, session } = await newUser(appId, { username: 'cat', email: 'cat@x.org', mobilePhoneNumber: '+8613900000009' });
  const record = { user, passwordHash: 'hash-1', sessionCipher: session.cipher };
  const find = (field: 'username' | 'email' | 'mobilePhoneNumber', value: string, now: number, app = appId) =>
    store().accounts.findUserCountingAttempt(app, { field, value }, now, windowMs);
  const t0 = 5_000_000;
  const lookups = [['username', 'cat'], ['email', 'cat@x.org'], ['mobilePhoneNumber', '+8613900000009']] as const;
  for (let i = 0; i < 7; i++) {
    const [field, value] = lookups[i % 3];
    assert.deepEqual(await find(field, value, t0 + i), { record, counted: i + 1 }, `attempt ${i + 1}`);
  }
  // Locked: the user still found, nothing counted (the lock ends a window after the seventh).
  assert.deepEqual(await find('username', 'cat', t0 + 7), { record, counted: null });
  assert.equal(await begin(appId, user.objectId, t0 + 6 + windowMs - 1), null);
  assert.deepEqual(await find('email', 'cat@x.org', t0 + 6 + windowMs), { record, counted: 1 });
  // The same count as beginLoginAttempt's, which it shares with.
  assert.equal(await begin(appId, user.objectId, t0 + 6 + windowMs + 1), 2);
  await store().accounts.clearLoginFailures(appId, user.objectId);
  assert.deepEqual(await find('username', 'cat', t0 + 6 + windowMs + 2), { record, counted: 1 });
  // No such user (another value, case, application): null, and no attempt counted for anyone.
  assert.equal(await find('username', 'Cat', t0), null);
  assert.equal(await find('email', 'nobody@x.org', t0), null);
  assert.equal(await find('username', 'cat', t0, await freshApp(store())), null);
  assert.equal(await begin(appId, user.objectId, t0 + 6 + windowMs + 3), 2);
});

test('userBySession: lookups made together (PostgreSQL: one statement per application) answer as each made alone', async () => {
  const appId = await freshApp(store());
  const other = await freshApp(store());
  const users = await Promise.all(['s1', 's2', 's3'].map((name) => newUser(appId, { username: name })));
  const elsewhere = await newUser(other, { username: 's1' });
  const asks: Array<[string, string]> = [
    ...users.map((u): [string, string] => [appId, u.session.digest]),
    ...users.map((u): [string, string] => [appId, u.session.digest]),
    [appId, 'digest-none'],
    [appId, elsewhere.session.digest],
    [other, elsewhere.session.digest],
    [other, users[0].session.digest],
  ];
  const together = await Promise.all(asks.map(([app, digest]) => store().accounts.userBySession(app, digest)));
  for (const [i, [app, digest]] of asks.entries()) {
    const alone = await SqlAccountStore.prototype.userBySession.call(store().accounts as SqlAccountStore, app, digest);
    assert.deepEqual(together[i]?.object, alone?.object, `${app} ${digest}`);
  }
  assert.deepEqual(together.map((u) => u?.object.data.username ?? null), ['s1', 's2', 's3', 's1', 's2', 's3', null, null, 's1', null]);
});
