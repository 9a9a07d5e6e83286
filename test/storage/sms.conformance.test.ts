// Conformance of the SmsStore (src/storage/sms-store.ts): issuing respects the per-number limits under
// concurrency and stores nothing when refused; a code is consumed once, only while live, only for its
// purposes; wrong guesses void a number's codes; guesses are counted per key. Runs on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SmsLimits } from '../../src/storage/sms-store.ts';
import { freshApp, unique, useStore } from './stores.ts';

const store = useStore();
const limits: SmsLimits = { minIntervalMs: 60_000, maxPerWindow: 3, windowMs: 600_000 };
const code = (appId: string, phone: string, digest: string, expiresAt: number, purpose = 'sms') => ({ appId, phone, purpose, digest, expiresAt });
const phone = () => unique('+86139');

test('issue: one send per interval under concurrency, at most maxPerWindow in a sliding window', async () => {
  const appId = await freshApp(store());
  const to = phone();
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store().sms.issue(code(appId, to, `d${i}`, 10_000_000), 1_000_000, limits)));
  assert.equal(results.filter((r) => r === null).length, 1);
  assert.ok(results.filter((r) => r !== null).every((r) => r === 'tooSoon'));
  assert.equal(await store().sms.issue(code(appId, to, 'x', 10_000_000), 1_059_999, limits), 'tooSoon');
  assert.equal(await store().sms.issue(code(appId, to, 'x', 10_000_000), 1_060_000, limits), null);
  assert.equal(await store().sms.issue(code(appId, to, 'x', 10_000_000), 1_120_000, limits), null);
  assert.equal(await store().sms.issue(code(appId, to, 'x', 10_000_000), 1_180_000, limits), 'dailyLimit');
  // The refused send did not count: the first send leaves the window and one more is allowed.
  assert.equal(await store().sms.issue(code(appId, to, 'y', 10_000_000), 1_600_001, limits), null);
  // Limits are per number and per application.
  assert.equal(await store().sms.issue(code(appId, phone(), 'z', 10_000_000), 1_600_001, limits), null);
  assert.equal(await store().sms.issue(code(await freshApp(store()), to, 'z', 10_000_000), 1_600_001, limits), null);
});

test('issue: a refused send stores no code; a new code replaces the live one of its purpose only', async () => {
  const appId = await freshApp(store());
  const to = phone();
  assert.equal(await store().sms.issue(code(appId, to, 'first', 9_000_000, 'login'), 1_000_000, limits), null);
  assert.equal(await store().sms.issue(code(appId, to, 'refused', 9_000_000, 'login'), 1_000_001, limits), 'tooSoon');
  assert.equal(await store().sms.consume(appId, to, ['login'], 'refused', 1_000_002, 10), null);
  assert.equal(await store().sms.issue(code(appId, to, 'reset-code', 9_000_000, 'reset'), 1_100_000, limits), null);
  assert.equal(await store().sms.issue(code(appId, to, 'second', 9_000_000, 'login'), 1_200_000, limits), null);
  assert.equal(await store().sms.consume(appId, to, ['login'], 'first', 1_200_001, 10), null, 'replaced');
  assert.deepEqual(await store().sms.consume(appId, to, ['reset'], 'reset-code', 1_200_002, 10), { phone: to, purpose: 'reset' });
  assert.deepEqual(await store().sms.consume(appId, to, ['login'], 'second', 1_200_003, 10), { phone: to, purpose: 'login' });
});

test('consume: once under concurrency, only live, only its purposes, only its application', async () => {
  const appId = await freshApp(store());
  const to = phone();
  assert.equal(await store().sms.issue(code(appId, to, 'right', 2_000_000, 'login'), 1_000_000, limits), null);
  assert.equal(await store().sms.consume(appId, to, ['reset'], 'right', 1_000_001, 10), null);
  assert.equal(await store().sms.consume(await freshApp(store()), to, ['login'], 'right', 1_000_001, 10), null);
  assert.equal(await store().sms.consume(appId, phone(), ['login'], 'right', 1_000_001, 10), null);
  const racing = await Promise.all(Array.from({ length: 8 }, () => store().sms.consume(appId, to, ['login', 'sms'], 'right', 1_000_001, 10)));
  assert.deepEqual(racing.filter((c) => c !== null), [{ phone: to, purpose: 'login' }]);
  assert.equal(await store().sms.consume(appId, to, ['login'], 'right', 1_000_002, 10), null, 'used');

  assert.equal(await store().sms.issue(code(appId, to, 'late', 1_100_000), 1_070_000, limits), null);
  assert.equal(await store().sms.consume(appId, to, ['sms'], 'late', 1_100_000, 10), null, 'expired at expiresAt');
});

test('consume: wrong guesses for a number count against its live codes, dropped after maxAttempts', async () => {
  const appId = await freshApp(store());
  const to = phone();
  assert.equal(await store().sms.issue(code(appId, to, 'guessed', 9_000_000), 1_000_000, limits), null);
  for (let i = 0; i < 2; i++) assert.equal(await store().sms.consume(appId, to, ['sms'], `wrong${i}`, 1_000_001, 3), null);
  assert.deepEqual(await store().sms.consume(appId, to, ['sms'], 'guessed', 1_000_002, 3), { phone: to, purpose: 'sms' }, 'two wrong guesses of three');

  assert.equal(await store().sms.issue(code(appId, to, 'voided', 9_000_000), 1_100_000, limits), null);
  for (let i = 0; i < 3; i++) assert.equal(await store().sms.consume(appId, to, ['sms'], `wrong${i}`, 1_100_001, 3), null);
  assert.equal(await store().sms.consume(appId, to, ['sms'], 'voided', 1_100_002, 3), null);
});

test('consume without a number: the digest must match exactly one live code of the purposes', async () => {
  const appId = await freshApp(store());
  const [a, b, c] = [phone(), phone(), phone()];
  assert.equal(await store().sms.issue(code(appId, a, 'shared', 9_000_000, 'verify'), 1_000_000, limits), null);
  assert.equal(await store().sms.issue(code(appId, b, 'shared', 9_000_000, 'verify'), 1_000_000, limits), null);
  assert.equal(await store().sms.consume(appId, null, ['verify'], 'shared', 1_000_001, 10), null);
  assert.equal(await store().sms.issue(code(appId, c, 'alone', 9_000_000, 'verify'), 1_000_000, limits), null);
  assert.equal(await store().sms.consume(appId, null, ['login'], 'alone', 1_000_001, 10), null);
  const racing = await Promise.all(Array.from({ length: 6 }, () => store().sms.consume(appId, null, ['verify'], 'alone', 1_000_001, 10)));
  assert.deepEqual(racing.filter((r) => r !== null), [{ phone: c, purpose: 'verify' }]);
});

test('recordGuess and guesses: counted per key and application in a sliding window, none lost under concurrency', async () => {
  const appId = await freshApp(store());
  assert.equal(await store().sms.guesses(appId, '*k', 1000, 100), 0);
  assert.equal(await store().sms.recordGuess(appId, '*k', 1000, 100), 1);
  assert.equal(await store().sms.recordGuess(appId, '*k', 1050, 100), 2);
  assert.equal(await store().sms.guesses(appId, '*k', 1099, 100), 2);
  assert.equal(await store().sms.guesses(appId, '*k', 1101, 100), 1);
  assert.equal(await store().sms.guesses(appId, '*other', 1101, 100), 0);
  assert.equal(await store().sms.guesses(await freshApp(store()), '*k', 1101, 100), 0);
  const counts = await Promise.all(Array.from({ length: 10 }, () => store().sms.recordGuess(appId, '*burst', 5000, 100)));
  assert.equal(await store().sms.guesses(appId, '*burst', 5000, 100), 10);
  assert.equal(Math.max(...counts), 10);
});
