// Scheduled pushes (reference §4.2 "Scheduled"): GET/DELETE /1.1/scheduledPushMessages, the cap of
// waiting pushes per application, and /1.1/tables/Notifications/<objectId>.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, testDatabase, ManualClock, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { holdWriteLock, waitForLockWaiters } from './helpers/locks.ts';
import { KeyClient } from './helpers/mail.ts';
import { ChannelClient } from '../src/push/channel/client.ts';

const clock = new ManualClock(Date.now());
let database: TestDatabase;
let server: TestServer;
let device: ChannelClient | undefined;

before(async () => {
  database = await testDatabase();
  server = await startServer({ clock, database });
});
after(async () => {
  await device?.close();
  await server?.close();
  await database?.drop();
});

/** A new application, so each test counts its own scheduled pushes (X-LC-Key: the test moves the clock). */
async function newApp() {
  const keys = await server.services.registry.create('schedule');
  return {
    ...keys,
    client: new KeyClient({ url: server.url, appId: keys.appId, appKey: keys.appKey }),
    master: new KeyClient({ url: server.url, ...keys }),
  };
}

const inMinutes = (minutes: number) => new Date(clock.now() + minutes * 60_000).toISOString();
const quota = (cap: number) => ({
  code: 140,
  error: `${cap} scheduled pushes are already waiting, the most this application may have (10 for a development application, 1000 for a commercial one). Cancel one or wait until one starts.`,
});

test('GET /1.1/scheduledPushMessages lists the pushes waiting for push_time, in the hosted shape', async () => {
  const app = await newApp();
  const at = inMinutes(90);
  const first = await app.master.post('/1.1/push', {
    where: { deviceProfile: 'pro' },
    channels: ['news'],
    push_time: at,
    notification_id: 'weekly1',
    prod: 'dev',
    data: { alert: 'first', title: 'One' },
  });
  assert.equal(first.status, 201, first.text);
  const second = await app.master.post('/1.1/push', { channels: ['sport'], push_time: inMinutes(120), data: { alert: 'second' } });
  const third = await app.master.post('/1.1/push', { push_time: inMinutes(150), data: { alert: 'third' } });
  const immediate = await app.master.post('/1.1/push', { channels: ['news'], data: { alert: 'now' } });
  assert.deepEqual([second.status, third.status, immediate.status], [201, 201, 201]);

  const listed = await app.master.get('/1.1/scheduledPushMessages');
  assert.equal(listed.status, 200, listed.text);
  const results = listed.body.results;
  assert.equal(results.length, 3);
  assert.ok(Number.isInteger(results[0].id) && results[0].id > 0);
  assert.ok(results[0].id < results[1].id && results[1].id < results[2].id, 'numbered in the order they were made');
  assert.deepEqual(results[0], {
    id: results[0].id,
    expire_time: Date.parse(at),
    push_msg: {
      'app-id': app.appId,
      where: { query: { $and: [{ deviceProfile: 'pro' }, { channels: { $in: ['news'] } }] }, sort: { objectId: 1 } },
      prod: 'dev',
      'api-version': '1.1',
      msg: { alert: 'first', title: 'One' },
      id: first.body.objectId,
      notificationId: 'weekly1',
    },
    createdAt: first.body.createdAt,
  });
  assert.deepEqual(results[1].push_msg.where.query, { channels: { $in: ['sport'] } });
  assert.equal(results[1].push_msg.notificationId, null);
  assert.equal(results[1].push_msg.prod, 'prod');
  assert.deepEqual(results[2].push_msg.where.query, {});
  assert.deepEqual(
    results.map((r: { push_msg: { id: string } }) => r.push_msg.id),
    [first.body.objectId, second.body.objectId, third.body.objectId],
  );

  // The numbers stay: listing again gives the same ids.
  assert.deepEqual((await app.master.get('/1.1/scheduledPushMessages')).body, listed.body);
  // Another application sees only its own.
  assert.deepEqual((await server.master.get('/1.1/scheduledPushMessages')).body, { results: [] });
});

test('the scheduled push routes need the master key', async () => {
  const app = await newApp();
  for (const response of [
    await app.client.get('/1.1/scheduledPushMessages'),
    await app.client.delete('/1.1/scheduledPushMessages/1'),
    await app.client.get('/1.1/tables/Notifications/abc'),
  ]) {
    assert.deepEqual([response.status, response.body.code], [403, 403]);
  }
});

test('DELETE /1.1/scheduledPushMessages/<id> cancels a push that has not started; it is never sent', async () => {
  const app = await newApp();
  await app.client.post('/1.1/installations', { installationId: 'sched-dev-1', deviceType: 'android', channels: ['later'] });
  device = new ChannelClient({ url: server.url, appId: app.appId, appKey: app.appKey, installationId: 'sched-dev-1' });
  await device.connect();

  const cancelled = await app.master.post('/1.1/push', { channels: ['later'], push_time: inMinutes(2), data: { alert: 'cancelled' } });
  const kept = await app.master.post('/1.1/push', { channels: ['later'], push_time: inMinutes(2), data: { alert: 'kept' } });
  const [job, keptJob] = (await app.master.get('/1.1/scheduledPushMessages')).body.results;

  const answer = await app.master.delete(`/1.1/scheduledPushMessages/${job.id}`);
  assert.deepEqual([answer.status, answer.body], [200, {}]);
  assert.deepEqual(
    (await app.master.get('/1.1/scheduledPushMessages')).body.results.map((r: { id: number }) => r.id),
    [keptJob.id],
  );
  const again = await app.master.delete(`/1.1/scheduledPushMessages/${job.id}`);
  assert.deepEqual([again.status, again.body], [404, { code: 101, error: `No scheduled push with id "${job.id}".` }]);
  for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
    const response = await app.master.delete(`/1.1/scheduledPushMessages/${bad}`);
    assert.deepEqual([response.status, response.body.code], [404, 101], bad);
  }

  clock.advance(2 * 60_000 + 1);
  await server.services.push.drain();
  await device.waitForMessages(1);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(device.messages.map((m) => m.data.alert), ['kept']);
  const record = await app.master.get(`/1.1/notifications/${cancelled.body.objectId}`);
  assert.deepEqual([record.body.status, record.body.devices], ['cancelled', 0]);
  assert.equal((await app.master.get(`/1.1/notifications/${kept.body.objectId}`)).body.status, 'done');

  // A job that started can no longer be cancelled, and has left the list.
  const started = await app.master.delete(`/1.1/scheduledPushMessages/${keptJob.id}`);
  assert.deepEqual(
    [started.status, started.body],
    [404, { code: 101, error: `Scheduled push ${keptJob.id} has started sending; it can no longer be cancelled.` }],
  );
  assert.deepEqual((await app.master.get('/1.1/scheduledPushMessages')).body, { results: [] });
});

test('a development application may have 10 scheduled pushes waiting, a commercial one more', async () => {
  const app = await newApp();
  for (let i = 0; i < 10; i++) {
    const response = await app.master.post('/1.1/push', { push_time: inMinutes(10), data: { alert: `n${i}` } });
    assert.equal(response.status, 201, response.text);
  }
  const refused = await app.master.post('/1.1/push', { push_time: inMinutes(10), data: { alert: 'eleventh' } });
  assert.deepEqual([refused.status, refused.body], [400, quota(10)]);
  // Immediate pushes are not scheduled, so not capped; a refused one left no record.
  assert.equal((await app.master.post('/1.1/push', { data: { alert: 'now' } })).status, 201);
  assert.equal((await app.master.get('/1.1/notifications')).body.results.length, 11);

  const [first] = (await app.master.get('/1.1/scheduledPushMessages')).body.results;
  assert.equal((await app.master.delete(`/1.1/scheduledPushMessages/${first.id}`)).status, 200);
  assert.equal((await app.master.post('/1.1/push', { push_time: inMinutes(10), data: { alert: 'after a cancel' } })).status, 201);
  assert.deepEqual((await app.master.post('/1.1/push', { push_time: inMinutes(10), data: { alert: 'x' } })).body, quota(10));

  assert.equal((await app.master.put('/1.1/settings', { commercial: true })).status, 200);
  const commercial = await app.master.post('/1.1/push', { push_time: inMinutes(10), data: { alert: 'commercial' } });
  assert.equal(commercial.status, 201, commercial.text);
  assert.equal((await app.master.get('/1.1/scheduledPushMessages')).body.results.length, 11);
});

// The cap is counted and taken in one serialised step, as the mail limit.
test('twenty scheduled pushes at once: exactly ten are accepted', async () => {
  const app = await newApp();
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => app.master.post('/1.1/push', { push_time: inMinutes(30), data: { alert: `burst ${i}` } })),
  );
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [...Array(10).fill(201), ...Array(10).fill(400)], JSON.stringify(answers.map((r) => r.body)));
  assert.equal((await app.master.get('/1.1/scheduledPushMessages')).body.results.length, 10);
});

// PostgreSQL: another session holds push_notifications (reads pass) until both requests for the tenth
// place wait at their insert or at each other, so each has had its chance to count nine.
test('PostgreSQL: two requests for the last place, both past the count: one is accepted', { skip: process.env.DATABASE_URL ? false : 'PostgreSQL only (SQLite transactions already run one at a time)' }, async () => {
  const app = await newApp();
  for (let i = 0; i < 9; i++) assert.equal((await app.master.post('/1.1/push', { push_time: inMinutes(30), data: { alert: `n${i}` } })).status, 201);
  const release = await holdWriteLock(database, 'push_notifications');
  const pending = Promise.all([1, 2].map((i) => app.master.post('/1.1/push', { push_time: inMinutes(30), data: { alert: `last ${i}` } })));
  await waitForLockWaiters(database, 'push_notifications', 2).finally(release);
  const answers = await pending;
  assert.deepEqual(answers.map((r) => r.status).sort(), [201, 400], JSON.stringify(answers.map((r) => r.body)));
  assert.equal((await app.master.get('/1.1/scheduledPushMessages')).body.results.length, 10);
});

test('GET /1.1/tables/Notifications/<objectId> shows the same record as /1.1/notifications/<objectId>', async () => {
  const app = await newApp();
  const created = await app.master.post('/1.1/push', { push_time: inMinutes(5), data: { alert: 'table' } });
  const viaTables = await app.master.get(`/1.1/tables/Notifications/${created.body.objectId}`);
  const viaNotifications = await app.master.get(`/1.1/notifications/${created.body.objectId}`);
  assert.equal(viaTables.status, 200);
  assert.deepEqual(viaTables.body, viaNotifications.body);
  assert.equal(viaTables.body.status, 'scheduled');
  const missing = await app.master.get('/1.1/tables/Notifications/nosuchrecord');
  assert.deepEqual([missing.status, missing.body.code], [404, 101]);
});
