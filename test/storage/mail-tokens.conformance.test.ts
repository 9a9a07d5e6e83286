// Conformance of the MailTokenStore (src/storage/mail-token-store.ts): a token is used once however many
// requests race for it, only while it lives; the per-user limit holds under concurrency; revokeAll voids
// the user's unused links of one kind. Runs on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MailTokenKind, MailTokenRow } from '../../src/storage/mail-token-store.ts';
import { unique, useStore } from './stores.ts';

const store = useStore();
const noLimit = { since: 0, max: 1000 };

function token(userId: string, overrides: Partial<MailTokenRow> = {}): MailTokenRow {
  return { digest: unique('dg'), kind: 'verifyEmail', appId: 'app1', userId, email: `${userId}@x.org`, createdAt: 1_000, expiresAt: 10_000, ...overrides };
}

const info = (row: MailTokenRow, usedAt: number | null) => ({ appId: row.appId, userId: row.userId, email: row.email, expiresAt: row.expiresAt, usedAt });

test('insertWithinLimit then find: the token as stored, by kind and digest', async () => {
  const row = token(unique('u'));
  assert.equal(await store().mailTokens.insertWithinLimit(row, noLimit, 0), true);
  assert.deepEqual(await store().mailTokens.find('verifyEmail', row.digest), info(row, null));
  assert.equal(await store().mailTokens.find('passwordReset', row.digest), null);
  assert.equal(await store().mailTokens.find('verifyEmail', 'no-such-digest'), null);
});

test('consume: once however many race for it; then find shows when it was used', async () => {
  const row = token(unique('u'));
  await store().mailTokens.insertWithinLimit(row, noLimit, 0);
  const racing = await Promise.all(Array.from({ length: 10 }, () => store().mailTokens.consume('verifyEmail', row.digest, 2_000)));
  assert.deepEqual(racing.filter((r) => r !== null), [info(row, 2_000)]);
  assert.equal(await store().mailTokens.consume('verifyEmail', row.digest, 2_001), null);
  assert.deepEqual(await store().mailTokens.find('verifyEmail', row.digest), info(row, 2_000));
});

test('consume: null for an expired token (at expiresAt), another kind, or an unknown digest; none is used by trying', async () => {
  const row = token(unique('u'), { kind: 'passwordReset' });
  await store().mailTokens.insertWithinLimit(row, noLimit, 0);
  assert.equal(await store().mailTokens.consume('passwordReset', row.digest, row.expiresAt), null);
  assert.equal(await store().mailTokens.consume('verifyEmail', row.digest, 2_000), null);
  assert.equal(await store().mailTokens.consume('passwordReset', 'no-such-digest', 2_000), null);
  assert.deepEqual(await store().mailTokens.find('passwordReset', row.digest), info(row, null));
  assert.deepEqual(await store().mailTokens.consume('passwordReset', row.digest, row.expiresAt - 1), info(row, row.expiresAt - 1));
});

test('insertWithinLimit: at most max tokens since `since` per user and kind, also when requests come at once', async () => {
  const userId = unique('u');
  const limit = { since: 500, max: 3 };
  const racing = await Promise.all(Array.from({ length: 10 }, () => store().mailTokens.insertWithinLimit(token(userId, { createdAt: 1_000 }), limit, 0)));
  assert.equal(racing.filter(Boolean).length, 3);
  const refused = token(userId, { createdAt: 1_001 });
  assert.equal(await store().mailTokens.insertWithinLimit(refused, limit, 0), false);
  assert.equal(await store().mailTokens.find('verifyEmail', refused.digest), null, 'nothing stored when refused');
  // Other kinds, users and windows have their own count.
  assert.equal(await store().mailTokens.insertWithinLimit(token(userId, { kind: 'passwordReset' }), limit, 0), true);
  assert.equal(await store().mailTokens.insertWithinLimit(token(unique('u')), limit, 0), true);
  assert.equal(await store().mailTokens.insertWithinLimit(token(userId, { createdAt: 2_000 }), { since: 1_500, max: 3 }, 0), true);
});

test('insertWithinLimit forgets the user’s tokens of that kind that expired before forgetBefore, and only those', async () => {
  const userId = unique('u');
  const old = token(userId, { expiresAt: 3_000 });
  const live = token(userId, { expiresAt: 8_000 });
  const otherKind = token(userId, { kind: 'passwordReset', expiresAt: 3_000 });
  const otherUser = token(unique('u'), { expiresAt: 3_000 });
  for (const row of [old, live, otherKind, otherUser]) await store().mailTokens.insertWithinLimit(row, noLimit, 0);
  await store().mailTokens.insertWithinLimit(token(userId), noLimit, 5_000);
  assert.equal(await store().mailTokens.find('verifyEmail', old.digest), null);
  assert.deepEqual(await store().mailTokens.find('verifyEmail', live.digest), info(live, null));
  assert.deepEqual(await store().mailTokens.find('passwordReset', otherKind.digest), info(otherKind, null));
  assert.deepEqual(await store().mailTokens.find('verifyEmail', otherUser.digest), info(otherUser, null));
});

test('revokeAll: the user’s unused tokens of that kind are used at now; used ones keep their time; others untouched', async () => {
  const userId = unique('u');
  const kind: MailTokenKind = 'passwordReset';
  const [a, b, used] = [token(userId, { kind }), token(userId, { kind }), token(userId, { kind })];
  const verify = token(userId);
  const stranger = token(unique('u'), { kind });
  const otherApp = token(userId, { kind, appId: 'app2' });
  for (const row of [a, b, used, verify, stranger, otherApp]) await store().mailTokens.insertWithinLimit(row, noLimit, 0);
  await store().mailTokens.consume(kind, used.digest, 1_500);
  await store().mailTokens.revokeAll(kind, 'app1', userId, 2_000);
  assert.equal(await store().mailTokens.consume(kind, a.digest, 2_001), null);
  assert.deepEqual(await store().mailTokens.find(kind, a.digest), info(a, 2_000));
  assert.deepEqual(await store().mailTokens.find(kind, b.digest), info(b, 2_000));
  assert.deepEqual(await store().mailTokens.find(kind, used.digest), info(used, 1_500));
  assert.deepEqual(await store().mailTokens.find('verifyEmail', verify.digest), info(verify, null));
  assert.deepEqual(await store().mailTokens.find(kind, stranger.digest), info(stranger, null));
  assert.deepEqual(await store().mailTokens.find(kind, otherApp.digest), info(otherApp, null));
  await store().mailTokens.revokeAll(kind, 'app1', unique('nobody'), 2_000);
});
