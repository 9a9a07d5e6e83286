// Conformance of the OperatorStore (src/storage/operator-store.ts): unique names, failures counted
// atomically up to the lock, sessions found by digest only while they live and ended with their
// operator or its password, and the audit log newest first. Runs on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { OperatorRecord } from '../../src/storage/operator-store.ts';
import { unique, useStore } from './stores.ts';

const store = useStore();
const ops = () => store().operators;

function operator(overrides: Partial<OperatorRecord> = {}): OperatorRecord {
  const name = unique('op');
  return { id: `id-${name}`, name, role: 'admin', passwordHash: '$argon2id$x', createdAt: 1_000, failures: 0, lockedUntil: 0, totp: false, totpSecret: null, totpPending: null, totpLastStep: 0, ...overrides };
}

test('create, then byName and list; a second operator of the same name is taken', async () => {
  const before = await ops().count();
  const op = operator({ role: 'viewer' });
  assert.equal(await ops().create(op), 'created');
  assert.equal(await ops().create({ ...operator(), name: op.name }), 'taken');
  assert.deepEqual(await ops().byName(op.name), op);
  assert.equal(await ops().byName('nobody-of-that-name'), null);
  assert.deepEqual((await ops().list()).find((o) => o.name === op.name), { id: op.id, name: op.name, role: 'viewer', createdAt: 1_000, totp: false });
  assert.equal(await ops().count(), before + 1);
});

test('recordFailure counts every failure of concurrent callers and locks at the limit', async () => {
  const op = operator();
  await ops().create(op);
  const policy = { maxFailures: 5, lockMs: 60_000 };
  const results = await Promise.all(Array.from({ length: 4 }, () => ops().recordFailure(op.id, 10_000, policy)));
  assert.deepEqual(results, [0, 0, 0, 0]);
  assert.equal((await ops().byName(op.name))?.failures, 4);
  assert.equal(await ops().recordFailure(op.id, 10_000, policy), 70_000);
  assert.equal((await ops().byName(op.name))?.lockedUntil, 70_000);
  await ops().clearFailures(op.id);
  assert.deepEqual([(await ops().byName(op.name))?.failures, (await ops().byName(op.name))?.lockedUntil], [0, 0]);
});

test('sessions: found by digest until they expire; deleted one by one, with a new password, with the operator', async () => {
  const op = operator();
  await ops().create(op);
  const digests = [unique('dg'), unique('dg'), unique('dg')];
  for (const digest of digests) await ops().insertSession({ digest, operatorId: op.id, createdAt: 1_000, expiresAt: 5_000 });
  const seen = { id: op.id, name: op.name, role: op.role, createdAt: op.createdAt, totp: false };
  assert.deepEqual(await ops().bySession(digests[0], 4_999), seen);
  assert.equal(await ops().bySession(digests[0], 5_000), null, 'expired');
  await ops().deleteSession(digests[0]);
  assert.equal(await ops().bySession(digests[0], 2_000), null);
  assert.equal(await ops().setPassword(op.name, '$argon2id$new'), true);
  assert.equal(await ops().bySession(digests[1], 2_000), null, 'a new password ends the sessions');
  assert.equal((await ops().byName(op.name))?.passwordHash, '$argon2id$new');
  await ops().insertSession({ digest: digests[2], operatorId: op.id, createdAt: 1_000, expiresAt: 5_000 });
  assert.equal(await ops().delete(op.name), true);
  assert.equal(await ops().bySession(digests[2], 2_000), null, 'deleting the operator ends its sessions');
  assert.equal(await ops().delete(op.name), false);
  assert.equal(await ops().setPassword(op.name, '$argon2id$x'), false);
});

test('the audit log answers the newest entries first, details as written', async () => {
  const actor = unique('actor');
  for (let i = 1; i <= 3; i++) {
    await ops().appendAudit({ id: unique(`a${i}-`), at: 9_000_000_000_000 + i, actor, action: 'app.create', target: `t${i}`, detail: { n: i, name: 'x' } });
  }
  const entries = await ops().listAudit(2);
  assert.deepEqual(entries.map((e) => [e.actor, e.target, e.at, e.detail]), [
    [actor, 't3', 9_000_000_000_003, { n: 3, name: 'x' }],
    [actor, 't2', 9_000_000_000_002, { n: 2, name: 'x' }],
  ]);
});

test('recovery codes: set with the confirmed TOTP, each used once even by concurrent callers, replaced, gone with TOTP or the operator', async () => {
  const op = operator();
  await ops().create(op);
  assert.equal(await ops().replaceRecoveryCodes(op.id, ['d1']), false, 'none without TOTP');
  await ops().setTotpPending(op.id, 'JBSWY3DPEHPK3PXP');
  assert.equal(await ops().confirmTotp(op.id, 'JBSWY3DPEHPK3PXP', 7, ['d1', 'd2', 'd3']), true);
  assert.equal(await ops().recoveryCodesLeft(op.id), 3);
  const raced = await Promise.all(Array.from({ length: 4 }, () => ops().useRecoveryCode(op.id, 'd1')));
  assert.deepEqual(raced.filter(Boolean).length, 1, 'one of four concurrent uses wins');
  assert.equal(await ops().useRecoveryCode('another-operator', 'd2'), false, 'a code is its operator\'s');
  assert.equal(await ops().recoveryCodesLeft(op.id), 2);
  assert.equal(await ops().replaceRecoveryCodes(op.id, ['e1', 'e2']), true);
  assert.equal(await ops().useRecoveryCode(op.id, 'd2'), false, 'replaced codes are gone');
  assert.equal(await ops().useRecoveryCode(op.id, 'e2'), true);
  assert.equal(await ops().resetTotp(op.name), true);
  assert.equal(await ops().recoveryCodesLeft(op.id), 0);
  await ops().setTotpPending(op.id, 'JBSWY3DPEHPK3PXP');
  await ops().confirmTotp(op.id, 'JBSWY3DPEHPK3PXP', 8, ['f1']);
  assert.equal(await ops().delete(op.name), true);
  assert.equal(await ops().recoveryCodesLeft(op.id), 0);
});
