// Conformance of the PushStore (src/storage/push-store.ts): records and req_id dedupe, a job cut into
// pages that are claimed, routed and delivered once each whatever the concurrency, leases that hand a
// dead worker's page to another, counters, receipts, the own channel's mailbox and pruning.
// Runs on the database the run selects. The queue of jobs is shared by every application of the
// database, so each test works at times of its own (era()) and leaves no job or page unfinished.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject, Where } from '../../src/objects/types.ts';
import type { NewPush, PageWork, RoutePage, TargetDevice } from '../../src/push/types.ts';
import type { PageClaim } from '../../src/storage/push-store.ts';
import { routePage } from '../../src/push/routing.ts';
import { freshApp, objectOf, unique, useStore } from './stores.ts';

const store = useStore();
const push = () => store().push;
const all: Where = { op: 'const', value: true };
const leaseMs = 30_000;

let eraStart = 1_700_000_000_000;
/** A time after everything earlier tests did, leases included. */
function era(): number {
  eraStart += 1_000_000_000;
  return eraStart;
}

function newPush(appId: string, at: number, overrides: Partial<NewPush> = {}): NewPush {
  return {
    appId,
    objectId: unique('n'),
    createdAt: at,
    pushTime: at,
    expiresAt: null,
    status: 'in-queue',
    selector: all,
    content: { data: { alert: `hello ${at}` } },
    request: { where: {}, data: { alert: `hello ${at}` } },
    reqId: null,
    dedupeMs: 600_000,
    ...overrides,
  };
}

/** The devices each routing saw, by notification and page. */
const routed = new Map<string, TargetDevice[]>();
const route: RoutePage = (job, devices, settings) => {
  routed.set(`${job.notificationId}/${routed.size}`, devices);
  return routePage(devices, settings);
};

async function installations(appId: string, count: number, data: (i: number) => StoredObject['data'] = () => ({})): Promise<StoredObject[]> {
  const made: StoredObject[] = [];
  for (let i = 0; i < count; i++) {
    const object = objectOf('_Installation', { installationId: unique('dev'), deviceType: 'android', valid: true, ...data(i) });
    assert.ok((await store().insertObject(appId, object)).ok);
    made.push(object);
  }
  return made;
}

/** Claims every page that is due at `now` and routes it: what a worker does before delivering. */
async function claimAndFill(now: number, pageSize = 1000): Promise<PageWork[]> {
  const works: PageWork[] = [];
  for (;;) {
    const claimed = await push().claimPage({ now, pageSize, leaseMs });
    if (!claimed) return works;
    if (claimed.kind !== 'page') continue;
    const work = await push().fillPage(claimed.page, { now, route });
    if (work) works.push(work);
  }
}

/** Delivers routed pages with every maker device sent. */
async function finishAll(works: PageWork[], now: number): Promise<void> {
  for (const work of works) {
    await push().finishPage({ appId: work.job.appId, notificationId: work.job.notificationId, seq: work.seq, vendorResults: [], counts: {}, invalidate: [] }, now);
  }
}

const jobViewOf = (p: NewPush) => ({ appId: p.appId, notificationId: p.objectId, createdAt: p.createdAt, expiresAt: p.expiresAt, content: p.content });

const statusOf = async (appId: string, id: string) => (await push().getNotification(appId, id))?.status;

test('createPush, getNotification, listNotifications (newest first, skip and limit, per application), deleteNotification', async () => {
  const t = era();
  const appId = await freshApp(store());
  const other = await freshApp(store());
  // Scheduled far ahead, so no claim of another test takes them.
  const later = { status: 'scheduled' as const, pushTime: t + 500_000_000 };
  const pushes = [newPush(appId, t + 100, later), newPush(appId, t + 300, later), newPush(appId, t + 200, later), newPush(other, t + 400, later)];
  for (const p of pushes) {
    const outcome = await push().createPush(p);
    assert.deepEqual(outcome, {
      created: true,
      record: {
        appId: p.appId,
        objectId: p.objectId,
        createdAt: p.createdAt,
        updatedAt: p.createdAt,
        status: 'scheduled',
        pushTime: p.pushTime,
        expiresAt: null,
        request: p.request,
        content: p.content,
        counts: {},
      },
    });
    assert.deepEqual(await push().getNotification(p.appId, p.objectId), outcome.record);
  }
  const ids = (records: Array<{ objectId: string }>) => records.map((r) => r.objectId);
  assert.deepEqual(ids(await push().listNotifications(appId, { limit: 10, skip: 0 })), [pushes[1], pushes[2], pushes[0]].map((p) => p.objectId));
  assert.deepEqual(ids(await push().listNotifications(appId, { limit: 1, skip: 1 })), [pushes[2].objectId]);
  assert.deepEqual(ids(await push().listNotifications(other, { limit: 10, skip: 0 })), [pushes[3].objectId]);
  assert.deepEqual(await push().listNotifications(await freshApp(store()), { limit: 10, skip: 0 }), []);
  assert.equal(await push().getNotification(other, pushes[0].objectId), null);
  assert.equal(await push().getNotification(appId, 'missing'), null);

  assert.equal(await push().deleteNotification(other, pushes[0].objectId), false, 'another application');
  for (const p of pushes) assert.equal(await push().deleteNotification(p.appId, p.objectId), true);
  assert.equal(await push().deleteNotification(appId, pushes[0].objectId), false);
  assert.equal(await push().getNotification(appId, pushes[0].objectId), null);
  assert.deepEqual(await push().listNotifications(appId, { limit: 10, skip: 0 }), []);
  assert.deepEqual(await claimAndFill(t + 600_000_000), [], 'a deleted push is never claimed');
});

test('createPush: a req_id repeated within dedupeMs returns the first record, also when repeats race; after it, a new push', async () => {
  const t = era();
  const appId = await freshApp(store());
  const ahead = { status: 'scheduled' as const, pushTime: t + 500_000_000 };
  const first = newPush(appId, t, { ...ahead, reqId: 'r1', dedupeMs: 1000 });
  const created = await push().createPush(first);
  assert.equal(created.created, true);
  const repeat = await push().createPush(newPush(appId, t + 999, { ...ahead, reqId: 'r1', dedupeMs: 1000 }));
  assert.deepEqual(repeat, { created: false, record: created.record });
  assert.equal((await push().listNotifications(appId, { limit: 10, skip: 0 })).length, 1);
  const elsewhere = await push().createPush(newPush(await freshApp(store()), t + 1, { ...ahead, reqId: 'r1' }));
  assert.equal(elsewhere.created, true, 'another application');
  await push().deleteNotification(elsewhere.record.appId, elsewhere.record.objectId);
  assert.equal((await push().createPush(newPush(appId, t + 1000, { ...ahead, reqId: 'r1', dedupeMs: 1000 }))).created, true, 'the window is over');

  const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => push().createPush(newPush(appId, t + 2000 + i, { ...ahead, reqId: 'r2' }))));
  assert.equal(racing.filter((o) => o.created).length, 1);
  assert.equal(new Set(racing.map((o) => ('record' in o ? o.record.objectId : null))).size, 1);
  for (const record of await push().listNotifications(appId, { limit: 100, skip: 0 })) await push().deleteNotification(appId, record.objectId);
});

test('claimPage: null with no due job; due jobs by push time; pages of pageSize installations, the last one marked', async () => {
  const t = era();
  assert.equal(await push().claimPage({ now: t, pageSize: 10, leaseMs }), null);
  const appId = await freshApp(store());
  await installations(appId, 5);
  const second = newPush(appId, t, { pushTime: t + 200 });
  const first = newPush(appId, t, { pushTime: t + 100 });
  const notYet = newPush(appId, t, { pushTime: t + 10_000 });
  for (const p of [second, first, notYet]) await push().createPush(p);
  assert.equal(await push().claimPage({ now: t + 99, pageSize: 2, leaseMs }), null);
  const claims: Array<{ id: string; seq: number; last: boolean }> = [];
  for (;;) {
    const claimed = await push().claimPage({ now: t + 300, pageSize: 2, leaseMs });
    if (!claimed) break;
    assert.equal(claimed.kind, 'page');
    if (claimed.kind === 'page') claims.push({ id: claimed.page.notificationId, seq: claimed.page.seq, last: claimed.last });
  }
  assert.deepEqual(claims, [
    { id: first.objectId, seq: 0, last: false },
    { id: first.objectId, seq: 1, last: false },
    { id: first.objectId, seq: 2, last: true },
    { id: second.objectId, seq: 0, last: false },
    { id: second.objectId, seq: 1, last: false },
    { id: second.objectId, seq: 2, last: true },
  ]);
  assert.equal(await statusOf(appId, first.objectId), 'sending');
  assert.equal(await statusOf(appId, notYet.objectId), 'in-queue');
  // The claimed pages are routed and delivered, then the job that was not due yet.
  for (const claim of claims) {
    const work = await push().fillPage({ appId, notificationId: claim.id, seq: claim.seq }, { now: t + 300, route });
    await finishAll(work ? [work] : [], t + 300);
  }
  await finishAll(await claimAndFill(t + 10_000), t + 10_000);
  for (const p of [first, second, notYet]) assert.equal(await statusOf(appId, p.objectId), 'done');
});

test('claimPage: an expired job is closed unsent; a job with no installation is done without a page', async () => {
  const t = era();
  const empty = await freshApp(store());
  const expiring = await freshApp(store());
  await installations(expiring, 2);
  const none = newPush(empty, t);
  const expired = newPush(expiring, t, { pushTime: t + 10, expiresAt: t + 50 });
  await push().createPush(none);
  await push().createPush(expired);
  const claimedNone = await push().claimPage({ now: t + 100, pageSize: 10, leaseMs });
  assert.equal(claimedNone?.kind, 'paged');
  assert.equal(claimedNone?.kind === 'paged' && claimedNone.job.notificationId, none.objectId);
  assert.equal(await statusOf(empty, none.objectId), 'done');
  const claimedExpired = await push().claimPage({ now: t + 100, pageSize: 10, leaseMs });
  assert.deepEqual(claimedExpired, {
    kind: 'expired',
    job: { appId: expiring, notificationId: expired.objectId, createdAt: t, expiresAt: t + 50, content: expired.content },
  });
  assert.equal(await statusOf(expiring, expired.objectId), 'expired');
  assert.equal(await push().claimPage({ now: t + 100, pageSize: 10, leaseMs }), null);
});

test('claimPage: a job whose installations cannot be selected is closed with the error; the next job is claimed', async () => {
  const t = era();
  const appId = await freshApp(store());
  await installations(appId, 2);
  // A selector this version cannot compile (as one written by another version would be).
  const broken = newPush(appId, t, { selector: { op: 'within', path: ['n'] } as unknown as Where });
  const next = newPush(appId, t + 1);
  for (const p of [broken, next]) await push().createPush(p);
  const claimed = await push().claimPage({ now: t + 100, pageSize: 10, leaseMs });
  assert.deepEqual(claimed?.kind === 'failed' ? claimed.job : claimed, jobViewOf(broken));
  assert.equal(await statusOf(appId, broken.objectId), 'done');
  const record = await push().getNotification(appId, broken.objectId);
  assert.deepEqual(Object.keys(record!.counts), ['error:the installations could not be selected: Unknown where node "within".']);
  const works = await claimAndFill(t + 100);
  assert.deepEqual(works.map((w) => [w.job.notificationId, w.channel.length]), [[next.objectId, 2]]);
  await finishAll(works, t + 100);
  assert.equal(await statusOf(appId, next.objectId), 'done');
});

test('fillPage: routes the page’s installations that the selector picks, with the app’s mixedPush as it is now; once', async () => {
  const t = era();
  const appId = await freshApp(store(), { mixedPush: true });
  const other = await freshApp(store(), { mixedPush: true });
  const channel = await installations(appId, 3, (i) => ({ channels: i === 2 ? ['news'] : ['sport'] }));
  const makers = await installations(appId, 2, () => ({ vendor: 'mi', registrationId: unique('tok'), channels: ['sport'] }));
  await installations(other, 2, () => ({ channels: ['sport'] }));
  await store().insertObject(appId, objectOf('Else', { installationId: 'not-an-installation', channels: ['sport'] }));
  const p = newPush(appId, t, { selector: { op: 'eq', path: ['channels'], value: 'sport' } });
  await push().createPush(p);
  const claimed = await push().claimPage({ now: t, pageSize: 100, leaseMs });
  assert.ok(claimed?.kind === 'page' && claimed.last);
  const page = claimed.page;
  routed.clear();
  const fills = await Promise.all(Array.from({ length: 4 }, () => push().fillPage(page, { now: t, route })));
  const won = fills.filter((w) => w !== null);
  assert.equal(won.length, 1, 'a page is routed once');
  const work = won[0];
  assert.equal(routed.size, 1);
  assert.deepEqual([...routed.values()][0].map((d) => d.objectId), [channel[0], channel[1], ...makers].map((o) => o.objectId).sort());
  assert.deepEqual(work, {
    job: { appId, notificationId: p.objectId, createdAt: t, expiresAt: null, content: p.content },
    seq: 0,
    channel: [channel[0], channel[1]].sort((a, b) => (a.objectId < b.objectId ? -1 : 1)).map((o) => o.data.installationId),
    vendor: makers.map((o) => ({ installationObjectId: o.objectId, vendor: 'mi', deviceProfile: '_default', registrationId: o.data.registrationId })),
  });
  assert.deepEqual((await push().getNotification(appId, p.objectId))?.counts, { devices: 4, 'lc.routed': 2, 'mi.routed': 2 });
  assert.deepEqual((await push().mailbox(appId, channel[0].data.installationId as string, t, 10)).map((m) => m.id), [p.objectId]);
  assert.deepEqual(await push().mailbox(appId, channel[2].data.installationId as string, t, 10), []);
  assert.equal(await push().fillPage(page, { now: t, route }), null);

  // mixedPush off now: the next push sends the makers' devices through the own channel too.
  await store().updateAppSettings(appId, (current) => ({ ...current, mixedPush: false }) as never);
  const next = newPush(appId, t + 1, { selector: { op: 'eq', path: ['channels'], value: 'sport' } });
  await push().createPush(next);
  const [nextWork] = await claimAndFill(t + 1);
  assert.equal(nextWork.channel.length, 4);
  assert.deepEqual(nextWork.vendor, []);
  await finishAll([work, nextWork], t + 2);
  assert.equal(await statusOf(appId, p.objectId), 'done');
});

test('claimPage and fillPage in parallel workers: every installation routed exactly once', async () => {
  const t = era();
  const appId = await freshApp(store());
  const devices = await installations(appId, 24);
  const p = newPush(appId, t);
  await push().createPush(p);
  const works: PageWork[] = [];
  const worker = async () => {
    for (;;) {
      const claimed = await push().claimPage({ now: t, pageSize: 5, leaseMs });
      if (!claimed) return;
      if (claimed.kind !== 'page') continue;
      const work = await push().fillPage(claimed.page, { now: t, route });
      if (work) works.push(work);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  assert.deepEqual(works.map((w) => w.seq).sort((a, b) => a - b), [0, 1, 2, 3, 4]);
  assert.deepEqual(works.flatMap((w) => w.channel).sort(), devices.map((d) => d.data.installationId as string).sort());
  assert.equal((await push().getNotification(appId, p.objectId))?.counts.devices, 24);
  // All pages delivered at once: the job is done once closeFinished has swept what they left.
  await Promise.all(works.map((w) => finishAll([w], t + 1)));
  await push().closeFinished(t + 2);
  assert.equal(await statusOf(appId, p.objectId), 'done');
  assert.equal(await push().closeFinished(t + 3), 0);
});

test('finishPage: stores the makers’ results and counters, invalidates installations, closes the job at its last page only', async () => {
  const t = era();
  const appId = await freshApp(store(), { mixedPush: true });
  const makers = await installations(appId, 4, () => ({ vendor: 'oppo', registrationId: unique('tok') }));
  const p = newPush(appId, t);
  await push().createPush(p);
  const works = await claimAndFill(t, 2);
  assert.equal(works.length, 2);
  const [w0, w1] = works;
  const bad = w0.vendor[0];
  await push().finishPage(
    {
      appId,
      notificationId: p.objectId,
      seq: w0.seq,
      vendorResults: [{ ...bad, status: 'invalidToken', error: 'unregistered' }],
      counts: { 'oppo.sent': 1, 'oppo.invalidToken': 1, 'error:unregistered': 1 },
      invalidate: [bad.installationObjectId],
    },
    t + 5,
  );
  assert.equal(await statusOf(appId, p.objectId), 'sending', 'a page is still out');
  assert.equal(await push().closeFinished(t + 6), 0);
  assert.equal(await statusOf(appId, p.objectId), 'sending', 'closeFinished leaves a job with a page out');
  const invalid = await store().getObject({ appId, className: '_Installation', objectId: bad.installationObjectId }, null);
  assert.equal(invalid?.data.valid, false);
  assert.equal(invalid?.updatedAt, t + 5);
  const kept = makers.find((m) => m.objectId === w0.vendor[1].installationObjectId);
  assert.equal((await store().getObject({ appId, className: '_Installation', objectId: kept!.objectId }, null))?.data.valid, true);
  await push().finishPage({ appId, notificationId: p.objectId, seq: w1.seq, vendorResults: [], counts: { 'oppo.sent': 2 }, invalidate: [] }, t + 7);
  const record = await push().getNotification(appId, p.objectId);
  assert.equal(record?.status, 'done');
  assert.deepEqual(record?.counts, { devices: 4, 'oppo.routed': 4, 'oppo.sent': 3, 'oppo.invalidToken': 1, 'error:unregistered': 1 });
  assert.equal(await push().claimStalePage({ now: t + 10 * leaseMs, leaseMs, route }), null, 'finished pages are never stale');
});

test('claimStalePage: after its lease, a dead worker’s page goes to another (routed first if it was not), leased anew', async () => {
  const t = era();
  const appId = await freshApp(store(), { mixedPush: true });
  const devices = await installations(appId, 3);
  const maker = (await installations(appId, 1, () => ({ vendor: 'vivo', registrationId: unique('tok') })))[0];
  const p = newPush(appId, t);
  await push().createPush(p);
  // Worker A claims page 0 and dies before routing it; worker B claims page 1, routes it and dies.
  const a = await push().claimPage({ now: t, pageSize: 2, leaseMs });
  const b = await push().claimPage({ now: t, pageSize: 2, leaseMs });
  assert.ok(a?.kind === 'page' && b?.kind === 'page');
  const routedB = await push().fillPage(b.page, { now: t, route });
  assert.ok(routedB);
  assert.equal(await push().claimStalePage({ now: t + leaseMs - 1, leaseMs, route }), null, 'the lease still runs');

  const stale = [await push().claimStalePage({ now: t + leaseMs + 1, leaseMs, route }), await push().claimStalePage({ now: t + leaseMs + 1, leaseMs, route })];
  assert.deepEqual(stale.map((w) => w?.seq).sort(), [0, 1]);
  assert.equal(await push().claimStalePage({ now: t + leaseMs + 2, leaseMs, route }), null, 'each leased anew');
  const byseq = (seq: number) => stale.find((w) => w?.seq === seq)!;
  assert.deepEqual(byseq(b.page.seq), routedB, 'a routed page comes back as it was routed');
  const ids = (list: StoredObject[]) => list.map((d) => d.data.installationId as string);
  assert.deepEqual([...byseq(0).channel, ...byseq(1).channel].sort(), ids(devices).sort());
  assert.deepEqual([...byseq(0).vendor, ...byseq(1).vendor].map((v) => v.installationObjectId), [maker.objectId]);
  assert.equal(await push().fillPage(a.page, { now: t + leaseMs + 3, route }), null, 'routed once: worker A back too late');

  // A device that acknowledged meanwhile is not sent again by the next taker.
  const acked = byseq(0).channel[0] ?? byseq(1).channel[0];
  const seqOfAcked = byseq(0).channel.includes(acked) ? 0 : 1;
  await push().ack([{ appId, installationId: acked, notificationId: p.objectId }], t + leaseMs + 4);
  const again = await push().claimStalePage({ now: t + 3 * leaseMs, leaseMs, route });
  const again2 = await push().claimStalePage({ now: t + 3 * leaseMs, leaseMs, route });
  const retaken = [again, again2].find((w) => w?.seq === seqOfAcked)!;
  assert.ok(!retaken.channel.includes(acked));
  await finishAll([again!, again2!], t + 3 * leaseMs);
  assert.equal(await statusOf(appId, p.objectId), 'done');
});

test('recordCounts: adds to the record’s counters, none lost under concurrency; false when the record is gone', async () => {
  const t = era();
  const appId = await freshApp(store());
  const p = newPush(appId, t, { status: 'scheduled', pushTime: t + 500_000_000 });
  await push().createPush(p);
  const results = await Promise.all(Array.from({ length: 20 }, () => push().recordCounts(appId, p.objectId, { 'mi.paused': 1, 'error:quota': 2 })));
  assert.ok(results.every(Boolean));
  assert.equal(await push().recordCounts(appId, p.objectId, { 'mi.paused': 0 }), true);
  assert.deepEqual((await push().getNotification(appId, p.objectId))?.counts, { 'mi.paused': 20, 'error:quota': 40 });
  assert.equal(await push().recordCounts(appId, 'missing', { x: 1 }), false);
  assert.equal(await push().recordCounts(await freshApp(store()), p.objectId, { x: 1 }), false);
  await push().deleteNotification(appId, p.objectId);
  assert.equal(await push().recordCounts(appId, p.objectId, { x: 1 }), false);
});

test('applyReceipts: counters on known records; valid false on that app’s installations of that maker and token only', async () => {
  const t = era();
  const appId = await freshApp(store());
  const other = await freshApp(store());
  const [dead, alive] = await installations(appId, 2, (i) => ({ vendor: 'mi', registrationId: `tok${i}` }));
  const [otherMaker] = await installations(appId, 1, () => ({ vendor: 'oppo', registrationId: 'tok0' }));
  const [otherApp] = await installations(other, 1, () => ({ vendor: 'mi', registrationId: 'tok0' }));
  const p = newPush(appId, t, { status: 'scheduled', pushTime: t + 500_000_000 });
  await push().createPush(p);
  const result = await push().applyReceipts(
    'mi',
    [
      { notificationId: p.objectId, counts: { 'mi.arrived': 3 }, invalidTokens: ['tok0', 'tok0', 'unknown-token'] },
      { notificationId: 'unknown', counts: { 'mi.arrived': 1 }, invalidTokens: ['tok1'] },
      { notificationId: p.objectId, counts: { 'mi.arrived': 1 }, invalidTokens: [] },
    ],
    t + 9,
  );
  assert.deepEqual(result, { notifications: 2, invalidated: 1 });
  assert.deepEqual((await push().getNotification(appId, p.objectId))?.counts, { 'mi.arrived': 4 });
  const valid = async (appOf: string, o: StoredObject) => (await store().getObject({ appId: appOf, className: '_Installation', objectId: o.objectId }, null))?.data.valid;
  assert.equal(await valid(appId, dead), false);
  assert.equal(await valid(appId, alive), true);
  assert.equal(await valid(appId, otherMaker), true);
  assert.equal(await valid(other, otherApp), true);
  assert.deepEqual(await push().applyReceipts('mi', [], t), { notifications: 0, invalidated: 0 });
  assert.deepEqual(await push().applyReceipts('mi', [{ notificationId: 'unknown', counts: { x: 1 }, invalidTokens: [] }], t), { notifications: 0, invalidated: 0 });
  await push().deleteNotification(appId, p.objectId);
});

test('mailbox and ack: a device’s newest live messages, oldest first; acknowledged once (lc.delivered), then gone', async () => {
  const t = era();
  const appId = await freshApp(store());
  const [device, neighbour] = await installations(appId, 2);
  const id = device.data.installationId as string;
  const older = newPush(appId, t, { content: { data: { alert: 'older' } } });
  const newer = newPush(appId, t + 10, { content: { data: { alert: 'newer' }, channel: 'news' } });
  const expiring = newPush(appId, t + 20, { expiresAt: t + 100 });
  for (const p of [newer, older, expiring]) await push().createPush(p);
  const works = await claimAndFill(t + 30);
  assert.deepEqual(await push().mailbox(appId, id, t + 30, 10), [
    { id: older.objectId, data: { alert: 'older' }, createdAt: t, expiresAt: null },
    { id: newer.objectId, data: { alert: 'newer' }, createdAt: t + 10, expiresAt: null, channel: 'news' },
    { id: expiring.objectId, data: expiring.content.data, createdAt: t + 20, expiresAt: t + 100 },
  ]);
  assert.deepEqual((await push().mailbox(appId, id, t + 30, 2)).map((m) => m.id), [newer.objectId, expiring.objectId], 'the newest, oldest first');
  assert.deepEqual((await push().mailbox(appId, id, t + 100, 10)).map((m) => m.id), [older.objectId, newer.objectId], 'expired at expiresAt');
  assert.deepEqual(await push().mailbox(await freshApp(store()), id, t + 30, 10), []);

  const entry = { appId, installationId: id, notificationId: older.objectId };
  const acks = await Promise.all(Array.from({ length: 5 }, () => push().ack([entry], t + 40)));
  assert.equal(acks.reduce((a, b) => a + b, 0), 1);
  assert.equal(await push().ack([entry], t + 41), 0);
  const both = [
    { appId, installationId: id, notificationId: newer.objectId },
    { appId, installationId: neighbour.data.installationId as string, notificationId: newer.objectId },
    { appId, installationId: 'unknown', notificationId: newer.objectId },
  ];
  assert.equal(await push().ack(both, t + 42), 2);
  assert.deepEqual((await push().mailbox(appId, id, t + 50, 10)).map((m) => m.id), [expiring.objectId]);
  assert.equal((await push().getNotification(appId, older.objectId))?.counts['lc.delivered'], 1);
  assert.equal((await push().getNotification(appId, newer.objectId))?.counts['lc.delivered'], 2);
  await finishAll(works, t + 50);
});

test('prune: drops expired mailbox rows and req_ids older than keepAckedMs; live messages stay', async () => {
  const t = era();
  const appId = await freshApp(store());
  const [device] = await installations(appId, 1);
  const id = device.data.installationId as string;
  const expiring = newPush(appId, t, { expiresAt: t + 100, reqId: 'once', dedupeMs: 1_000_000 });
  const lasting = newPush(appId, t);
  for (const p of [expiring, lasting]) await push().createPush(p);
  await finishAll(await claimAndFill(t), t);
  await push().prune(t + 101, 50, 10);
  assert.equal(await push().ack([{ appId, installationId: id, notificationId: expiring.objectId }], t + 102), 0, 'the expired row is gone');
  assert.deepEqual((await push().mailbox(appId, id, t + 102, 10)).map((m) => m.id), [lasting.objectId]);
  // The req_id was forgotten (older than 50 ms at t + 101), though its dedupe window has not ended.
  const again = await push().createPush(newPush(appId, t + 200, { reqId: 'once', dedupeMs: 1_000_000, status: 'scheduled', pushTime: t + 500_000_000 }));
  assert.equal(again.created, true);
  await push().deleteNotification(appId, again.record.objectId);
});

test('prune keeps a device’s newest mailboxLimit waiting messages and drops its older ones', async () => {
  const t = era();
  const appId = await freshApp(store());
  const [crowded, quiet] = await installations(appId, 2);
  const id = crowded.data.installationId as string;
  const pushes = [0, 1, 2].map((k) => newPush(appId, t + k * 10, { selector: { op: 'eq', path: ['installationId'], value: id } }));
  pushes.push(newPush(appId, t + 30, { selector: { op: 'eq', path: ['installationId'], value: quiet.data.installationId as string } }));
  for (const p of pushes) await push().createPush(p);
  await finishAll(await claimAndFill(t + 40), t + 40);
  await push().prune(t + 40, 1000, 2);
  assert.deepEqual((await push().mailbox(appId, id, t + 40, 10)).map((m) => m.id), [pushes[1].objectId, pushes[2].objectId]);
  assert.deepEqual((await push().mailbox(appId, quiet.data.installationId as string, t + 40, 10)).map((m) => m.id), [pushes[3].objectId]);
});

test('deleteNotification: its mailbox messages, counters and pages go with it', async () => {
  const t = era();
  const appId = await freshApp(store());
  const [device] = await installations(appId, 3);
  const p = newPush(appId, t);
  await push().createPush(p);
  const first = await push().claimPage({ now: t, pageSize: 1, leaseMs });
  assert.ok(first?.kind === 'page');
  await push().fillPage(first.page, { now: t, route });
  const second = await push().claimPage({ now: t, pageSize: 1, leaseMs });
  assert.ok(second?.kind === 'page');
  assert.equal(await push().deleteNotification(appId, p.objectId), true);
  assert.deepEqual(await push().mailbox(appId, device.data.installationId as string, t, 10), []);
  assert.equal(await push().fillPage(second.page as PageClaim, { now: t, route }), null, 'its claimed page is gone');
  assert.equal(await push().claimPage({ now: t, pageSize: 1, leaseMs }), null);
  assert.equal(await push().claimStalePage({ now: t + 10 * leaseMs, leaseMs, route }), null);
  await push().createPush({ ...p, createdAt: t + 1, status: 'scheduled', pushTime: t + 500_000_000 });
  assert.deepEqual((await push().getNotification(appId, p.objectId))?.counts, {}, 'no counter of the deleted record survives');
  await push().deleteNotification(appId, p.objectId);
});
