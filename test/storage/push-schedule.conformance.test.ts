// Conformance of the PushScheduleStore (src/storage/push-schedule-store.ts) and the cap PushStore.createPush
// keeps on it: scheduled pushes listed by their number until they start; a cancel and a worker's claim
// never both win; the cap holds when pushes arrive together. Runs on the database the run selects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewPush, RoutePage } from '../../src/push/types.ts';
import type { PageClaim } from '../../src/storage/push-store.ts';
import { freshApp, objectOf, unique, useStore } from './stores.ts';

const store = useStore();
const leaseMs = 30_000;

function scheduled(appId: string, createdAt: number, pushTime: number, overrides: Partial<NewPush> = {}): NewPush {
  return {
    appId,
    objectId: unique('n'),
    createdAt,
    pushTime,
    expiresAt: pushTime + 86_400_000,
    status: 'scheduled',
    selector: { op: 'const', value: true },
    content: { data: { alert: 'later' }, hms: { style: 1 } },
    request: { push_time: new Date(pushTime).toISOString(), data: { alert: 'later' } },
    reqId: null,
    dedupeMs: 0,
    ...overrides,
  };
}

test('list: the application’s scheduled pushes not started yet, by their number, with what they will send', async () => {
  const appId = await freshApp(store());
  const pushes = [scheduled(appId, 100, 9_000_000), scheduled(appId, 200, 5_000_000)];
  for (const p of pushes) await store().push.createPush(p);
  await store().push.createPush(scheduled(await freshApp(store()), 300, 9_000_000));
  await store().push.createPush({ ...scheduled(appId, 400, 400), status: 'in-queue' });
  const listed = await store().pushSchedule.list(appId);
  assert.deepEqual(
    listed.map(({ id: _id, ...rest }) => rest),
    pushes.map((p) => ({ appId, notificationId: p.objectId, createdAt: p.createdAt, pushTime: p.pushTime, expiresAt: p.expiresAt, request: p.request, content: p.content })),
  );
  assert.ok(listed[0].id < listed[1].id);
  assert.deepEqual(await store().pushSchedule.list(await freshApp(store())), []);
  // Each test leaves the queue empty: the jobs are claimed by nobody else once cancelled.
  for (const entry of listed) assert.equal(await store().pushSchedule.cancel(appId, entry.id, 500), 'cancelled');
  await drain(10_000_000);
});

test('cancel: the record stays, cancelled, and is never sent; a second cancel, another app’s number or an unknown one: unknown', async () => {
  const appId = await freshApp(store());
  const [device] = [objectOf('_Installation', { installationId: unique('dev') })];
  await store().insertObject(appId, device);
  const p = scheduled(appId, 100, 1_000);
  await store().push.createPush(p);
  const [entry] = await store().pushSchedule.list(appId);
  assert.equal(await store().pushSchedule.cancel(await freshApp(store()), entry.id, 150), 'unknown');
  assert.equal(await store().pushSchedule.cancel(appId, entry.id + 1000, 150), 'unknown');
  const racing = await Promise.all(Array.from({ length: 5 }, () => store().pushSchedule.cancel(appId, entry.id, 200)));
  assert.deepEqual(racing.sort(), ['cancelled', 'unknown', 'unknown', 'unknown', 'unknown']);
  const record = await store().push.getNotification(appId, p.objectId);
  assert.equal(record?.status, 'cancelled');
  assert.equal(record?.updatedAt, 200);
  assert.deepEqual(await store().pushSchedule.list(appId), []);
  assert.equal(await store().push.claimPage({ now: 2_000, pageSize: 10, leaseMs }), null, 'never claimed');
  assert.deepEqual(await store().push.mailbox(appId, device.data.installationId as string, 2_000, 10), []);
});

test('cancel against a worker’s claim: a job that started answers started; racing, exactly one of them wins', async () => {
  const appId = await freshApp(store());
  await store().insertObject(appId, objectOf('_Installation', { installationId: unique('dev') }));
  const started = scheduled(appId, 100, 1_000);
  await store().push.createPush(started);
  const [entry] = await store().pushSchedule.list(appId);
  const claimed = await store().push.claimPage({ now: 1_000, pageSize: 10, leaseMs });
  assert.ok(claimed?.kind === 'page');
  assert.deepEqual(await store().pushSchedule.list(appId), [], 'started: no longer listed');
  assert.equal(await store().pushSchedule.cancel(appId, entry.id, 1_001), 'started');
  assert.equal((await store().push.getNotification(appId, started.objectId))?.status, 'sending');
  await deliver(claimed.page, 1_002);

  for (let round = 0; round < 5; round++) {
    const p = scheduled(appId, 2_000 + round, 3_000);
    await store().push.createPush(p);
    const [next] = await store().pushSchedule.list(appId);
    const [outcome, claimed] = await Promise.all([
      store().pushSchedule.cancel(appId, next.id, 3_000),
      store().push.claimPage({ now: 3_000, pageSize: 10, leaseMs }),
    ]);
    const status = (await store().push.getNotification(appId, p.objectId))?.status;
    if (outcome === 'cancelled') {
      assert.equal(claimed, null);
      assert.equal(status, 'cancelled');
    } else {
      assert.equal(outcome, 'started');
      assert.ok(claimed?.kind === 'page');
      assert.equal(status, 'sending');
      await deliver(claimed.page, 3_001);
    }
  }
});

test('createPush: a scheduled push over scheduleCap is refused, also when pushes arrive together; numbers are never reused', async () => {
  const appId = await freshApp(store());
  const outcomes = await Promise.all(
    Array.from({ length: 6 }, (_, i) => store().push.createPush(scheduled(appId, 100 + i, 9_000_000, { scheduleCap: 3 }))),
  );
  assert.equal(outcomes.filter((o) => o.created).length, 3);
  for (const o of outcomes.filter((o) => !o.created)) assert.deepEqual(o, { created: false, refused: 'scheduleCap' });
  const listed = await store().pushSchedule.list(appId);
  assert.equal(listed.length, 3);
  // Immediate pushes and other applications are not capped by it.
  assert.equal((await store().push.createPush({ ...scheduled(appId, 200, 200, { scheduleCap: 3 }), status: 'in-queue' })).created, true);
  const elsewhere = await freshApp(store());
  assert.equal((await store().push.createPush(scheduled(elsewhere, 200, 9_000_000, { scheduleCap: 3 }))).created, true);
  // A cancelled push frees its place; the new one gets a new number.
  assert.equal(await store().pushSchedule.cancel(appId, listed[2].id, 300), 'cancelled');
  await store().push.createPush(scheduled(appId, 400, 9_000_000, { scheduleCap: 3 }));
  const after = await store().pushSchedule.list(appId);
  assert.equal(after.length, 3);
  assert.ok(after[2].id > listed[2].id);
  for (const app of [appId, elsewhere]) for (const entry of await store().pushSchedule.list(app)) await store().pushSchedule.cancel(app, entry.id, 500);
  await drain(10_000_000);
});

/** Routes and delivers a claimed page, as a worker would. */
async function deliver(page: PageClaim, now: number): Promise<void> {
  const route: RoutePage = (_job, devices) => ({ channel: devices.map((d) => d.installationId!), vendor: [], counts: {} });
  if (await store().push.fillPage(page, { now, route })) await store().push.finishPage({ ...page, vendorResults: [], counts: {}, invalidate: [] }, now);
}

/** Claims and delivers every page due at `now`, so the next test starts with an empty queue. */
async function drain(now: number): Promise<void> {
  for (;;) {
    const claimed = await store().push.claimPage({ now, pageSize: 100, leaseMs });
    if (!claimed) break;
    if (claimed.kind === 'page') await deliver(claimed.page, now);
  }
}
