// Conformance of QuotaPauses (src/storage/quota-pause-store.ts) on every implementation: the database's
// (store.quotaPauses), Redis (src/storage/redis/, at 127.0.0.1:6379 as the Redis tests use) and memory.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { MemoryQuotaPauses, type PauseKey, type QuotaPauses } from '../../src/storage/quota-pause-store.ts';
import { RedisQuotaPauses } from '../../src/storage/redis/quota-pause-store.ts';
import { unique, useStore } from './stores.ts';

const store = useStore();
/** Redis expires a pause by its own clock: the pauses' clock is real time, fixed for the file. */
const t0 = Date.now();
const clock = { now: () => t0 };
const prefix = `roost:test:pause:${unique('run')}:`;
let redis: Redis | undefined;
before(() => {
  redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: false, maxRetriesPerRequest: 1 });
});
after(async () => {
  const keys = await redis!.keys(`${prefix}*`);
  if (keys.length > 0) await redis!.del(...keys);
  await redis?.quit();
});

const implementations: Array<{ name: string; open: () => QuotaPauses }> = [
  { name: 'database', open: () => store().quotaPauses },
  { name: 'redis', open: () => new RedisQuotaPauses(redis!, clock, prefix) },
  { name: 'memory', open: () => new MemoryQuotaPauses() },
];

for (const implementation of implementations) {
  describe(`QuotaPauses: ${implementation.name}`, () => {
    const key = (): PauseKey => ({ appId: unique('app'), deviceProfile: '_default', vendor: 'mi' });

    test('none until paused; the pause holds until `until` (exclusive), with its reason', async () => {
      const pauses = implementation.open();
      const k = key();
      assert.equal(await pauses.current(k, t0), null);
      await pauses.pause(k, t0 + 50_000, 'mi 10034 daily quota');
      assert.deepEqual(await pauses.current(k, t0), { until: t0 + 50_000, reason: 'mi 10034 daily quota' });
      assert.deepEqual(await pauses.current(k, t0 + 49_999), { until: t0 + 50_000, reason: 'mi 10034 daily quota' });
      assert.equal(await pauses.current(k, t0 + 50_000), null);
    });

    test('one pause per application, device profile and maker', async () => {
      const pauses = implementation.open();
      const k = key();
      await pauses.pause(k, t0 + 40_000, 'quota');
      assert.equal(await pauses.current({ ...k, vendor: 'oppo' }, t0), null);
      assert.equal(await pauses.current({ ...k, deviceProfile: 'other' }, t0), null);
      assert.equal(await pauses.current({ ...k, appId: unique('app') }, t0), null);
      assert.equal((await pauses.current({ ...k }, t0))?.until, t0 + 40_000);
    });

    test('the later pause is kept, with its reason, whichever comes first; repeats by many nodes agree', async () => {
      const pauses = implementation.open();
      const k = key();
      await pauses.pause(k, t0 + 30_000, 'first');
      await pauses.pause(k, t0 + 20_000, 'earlier');
      assert.deepEqual(await pauses.current(k, t0), { until: t0 + 30_000, reason: 'first' });
      await pauses.pause(k, t0 + 45_000, 'later');
      assert.deepEqual(await pauses.current(k, t0), { until: t0 + 45_000, reason: 'later' });
      const same = key();
      await Promise.all(Array.from({ length: 6 }, () => pauses.pause(same, t0 + 35_000, 'quota')));
      assert.deepEqual(await pauses.current(same, t0), { until: t0 + 35_000, reason: 'quota' });
    });

    test('a pause that already ended pauses nothing', async () => {
      const pauses = implementation.open();
      const k = key();
      await pauses.pause(k, t0 - 1, 'late report');
      assert.equal(await pauses.current(k, t0), null);
    });
  });
}
