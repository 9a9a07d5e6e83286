// A password login's two writes to login_attempts on PostgreSQL (the user read with its attempt counted, a right
// login's clear) commit without waiting for the WAL's flush: synchronous_commit is off for their transaction alone
// (src/storage/postgres/account-store.ts, asyncCommit; the trade-off in docs/operations.md). This holds the
// setting each statement leaves in its transaction: off for those two, on for every other lockout write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { storeKind } from '../helpers/databases.ts';
import { freshApp, objectOf, sessionSeal, unique, withOneConnectionStore } from './stores.ts';

const windowMs = 15 * 60 * 1000;

/** synchronous_commit as `write` leaves it in an open transaction on the store's one connection (rolled back after). */
async function commitSetting(db: Kysely<any>, write: () => Promise<unknown>): Promise<string> {
  await sql`BEGIN`.execute(db);
  try {
    await write();
    const { rows } = await sql<{ setting: string }>`SELECT current_setting('synchronous_commit') AS setting`.execute(db);
    return rows[0].setting;
  } finally {
    await sql`ROLLBACK`.execute(db);
  }
}

test("a password login's attempt and its clear commit asynchronously; the other lockout writes as configured", { skip: storeKind !== 'postgres' && 'PostgreSQL only' }, async () => {
  await withOneConnectionStore(async (store, db) => {
    const appId = await freshApp(store);
    const user = objectOf('_User', { username: 'dot' });
    assert.deepEqual(await store.identities.insertUser(appId, user, { passwordHash: 'hash-1', session: sessionSeal(unique('s')) }), { ok: true, object: user });
    const accounts = store.accounts;
    const t0 = 7_000_000;
    assert.equal(await commitSetting(db, () => accounts.findUserCountingAttempt(appId, { field: 'username', value: 'dot' }, t0, windowMs)), 'off');
    // A row to clear (the rolled-back attempt left none), counted and committed by the unchanged statement.
    assert.equal(await commitSetting(db, () => accounts.beginLoginAttempt(appId, user.objectId, t0, windowMs)), 'on');
    assert.equal(await accounts.beginLoginAttempt(appId, user.objectId, t0, windowMs), 1);
    assert.equal(await commitSetting(db, () => accounts.clearLoginFailures(appId, user.objectId)), 'off');
    assert.equal(await commitSetting(db, () => accounts.recordLoginFailure(appId, user.objectId, t0)), 'on');
    // Rolled back: the attempt is still there, then cleared for good.
    assert.equal(await accounts.beginLoginAttempt(appId, user.objectId, t0 + 1, windowMs), 2);
    await accounts.clearLoginFailures(appId, user.objectId);
    assert.equal(await accounts.beginLoginAttempt(appId, user.objectId, t0 + 2, windowMs), 1);
  });
});
