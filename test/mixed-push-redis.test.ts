// With REDIS_URL the daily-quota pause lives in Redis, where every node sees it (src/push/mixed-push.ts).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { ManualClock, startServer, type TestServer } from './helpers/harness.ts';
import { closeMakers, startMakers, vendorSettings, type Makers } from './helpers/makers.ts';
import { nextQuotaDay } from '../src/push/vendors/pauses.ts';

const redisUrl = 'redis://127.0.0.1:6379';
const clock = new ManualClock(Date.now());
let server: TestServer;
let makers: Makers;
let redis: Redis;

before(async () => {
  makers = await startMakers(() => clock.now());
  server = await startServer({ clock, env: { REDIS_URL: redisUrl } });
  redis = new Redis(redisUrl);
});
after(async () => {
  await redis?.quit();
  await server?.close();
  await closeMakers(makers);
});

test('a quota pause is written to Redis (not the database) and stops the maker for the app', async () => {
  const on = await server.master.put('/1.1/settings', { commercial: true, mixedPush: true, vendors: vendorSettings(makers) });
  assert.equal(on.status, 200, on.text);
  const created = await server.client.post('/1.1/installations', { installationId: 'q-1', channels: ['q'], vendor: 'vivo', registrationId: 'tok-q-1' });
  assert.equal(created.status, 201);
  makers.vivo.failNext('quota');
  const push = async () => {
    const response = await server.master.post('/1.1/push', { channels: ['q'], data: { alert: 'q' } });
    assert.equal(response.status, 201);
    await server.services.push.drain();
    return (await server.master.get(`/1.1/notifications/${response.body.objectId}`)).body;
  };
  const first = await push();
  assert.equal(first.routes.vivo.paused, 1);
  const until = nextQuotaDay(clock.now());
  const stored = JSON.parse((await redis.get(`roost:push:pause:${server.appId}:_default:vivo`))!);
  assert.equal(stored.until, until);
  assert.match(stored.reason, /^vivo daily quota reached/);
  assert.equal(await server.store.quotaPauses.current({ appId: server.appId, deviceProfile: '_default', vendor: 'vivo' }, clock.now()), null);

  const sends = makers.vivo.sends.length;
  const second = await push();
  assert.equal(makers.vivo.sends.length, sends);
  assert.deepEqual(second.routes.vivo, { devices: 1, successes: 0, failures: 1, invalidTokens: 0, dropped: 0 });
  await redis.del(`roost:push:pause:${server.appId}:_default:vivo`);
});
