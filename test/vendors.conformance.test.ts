// One conformance suite run against every phone-maker sender with its local fake (STYLE item 7).
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultSettings, type AppSettings } from '../src/apps/settings.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { createVendorDispatch, type VendorDispatch, type VendorDispatchInput } from '../src/push/vendors/dispatch.ts';
import { nextQuotaDay } from '../src/push/vendors/pauses.ts';
import { MemoryQuotaPauses } from '../src/storage/quota-pause-store.ts';
import { vendors, type VendorName } from '../src/push/vendors/types.ts';
import { startFakeMaker, type FakeMaker } from './fakes/makers.ts';

const passThrough: Record<VendorName, boolean> = { HMS: true, mi: true, honor: true, mz: false, oppo: false, vivo: false };
const tokenAuth: Record<VendorName, boolean> = { HMS: true, honor: true, oppo: true, vivo: true, mi: false, mz: false };

function devices(count: number, prefix = 'tok'): VendorDispatchInput['devices'] {
  return Array.from({ length: count }, (_, i) => ({ installationObjectId: `inst${i}`, registrationId: `${prefix}${i}` }));
}

for (const vendor of vendors) {
  describe(`${vendor} sender against its fake`, () => {
    let fake: FakeMaker;
    let clock: ManualClock;
    let pauses: MemoryQuotaPauses;
    let sleeps: number[];
    let dispatch: VendorDispatch;
    let settings: AppSettings;

    const push = (count: number, data: Record<string, unknown> = { alert: 'Hello', title: 'Roost', orderId: 42 }, extra: Partial<VendorDispatchInput> = {}) =>
      dispatch.send({ appId: 'app1', vendor, deviceProfile: '_default', notificationId: 'note1', data, expiresAt: null, devices: devices(count), ...extra });

    before(async () => {
      clock = new ManualClock(Date.UTC(2026, 10, 22, 3, 0, 0));
      fake = await startFakeMaker(vendor, { now: () => clock.now() });
    });
    after(() => fake.close());
    beforeEach(() => {
      fake.reset();
      pauses = new MemoryQuotaPauses();
      sleeps = [];
      settings = { ...defaultSettings, commercial: true, mixedPush: true, vendors: { _default: { [vendor]: fake.credentials } } };
      dispatch = createVendorDispatch({
        settingsFor: async () => settings,
        clock,
        pauses,
        sleep: async (ms) => {
          sleeps.push(ms);
        },
      });
    });

    test('sends, and every device gets a result', async () => {
      const results = await push(3);
      assert.deepEqual(results.map((r) => r.status), ['sent', 'sent', 'sent']);
      assert.deepEqual(results.map((r) => r.installationObjectId), ['inst0', 'inst1', 'inst2']);
      assert.deepEqual(fake.violations, []);
      assert.deepEqual(fake.sends.flatMap((s) => s.tokens).sort(), ['tok0', 'tok1', 'tok2']);
    });

    test('auth: one token request for many sends; refreshed before expiry and after an auth error', async () => {
      for (let i = 0; i < 5; i++) assert.ok((await push(2)).every((r) => r.status === 'sent'));
      assert.equal(fake.authCalls, tokenAuth[vendor] ? 1 : 0);
      assert.equal(fake.sends.length >= 5, true);
      if (!tokenAuth[vendor]) return; // mi: static key header; mz: every request signed (both checked by the fake)
      clock.advance(50 * 60_000); // well within every token's life (HMS and Honor: 1 h)
      assert.ok((await push(1)).every((r) => r.status === 'sent'));
      assert.equal(fake.authCalls, 1);
      // Into the last minutes of the token's life (1 h, or 24 h for OPPO and vivo): renewed first.
      clock.advance((vendor === 'HMS' || vendor === 'honor' ? 7 : 23 * 60 + 7) * 60_000);
      assert.ok((await push(1)).every((r) => r.status === 'sent'));
      assert.equal(fake.authCalls, 2, 'refreshed before expiry');
      assert.equal(fake.rejectedTokens, 0, 'never sent an expired token');
      fake.revokeTokens(); // the maker forgets the token: the sender must re-authenticate once
      assert.ok((await push(1)).every((r) => r.status === 'sent'));
      assert.equal(fake.authCalls, 3);
      assert.deepEqual(fake.violations, []);
    });

    test('batches at the maker limit of 1000', async () => {
      const results = await push(2501);
      assert.equal(results.length, 2501);
      assert.ok(results.every((r) => r.status === 'sent'));
      const sizes = fake.sends.map((s) => s.tokens.length).sort((a, b) => b - a);
      assert.deepEqual(sizes, [1000, 1000, 501]);
      assert.deepEqual(fake.violations, []);
    });

    test('invalid tokens reported by the maker become invalidToken; the others are sent', async () => {
      fake.invalidTokens.add('tok1');
      fake.invalidTokens.add('tok3');
      const results = await push(5);
      assert.deepEqual(results.map((r) => r.status), ['sent', 'invalidToken', 'sent', 'invalidToken', 'sent']);
    });

    test('a per-device failure fails only that device', { skip: !['mz', 'oppo', 'honor'].includes(vendor) && `${vendor} reports no per-target failures besides invalid tokens` }, async () => {
      fake.failingTokens.add('tok2');
      fake.invalidTokens.add('tok0');
      const results = await push(4);
      assert.deepEqual(results.map((r) => r.status), ['invalidToken', 'sent', 'failed', 'sent']);
      assert.ok(results[2].error);
    });

    test('a maker that finds every token invalid', async () => {
      fake.invalidTokens.add('tok0');
      const results = await push(1);
      assert.deepEqual(results.map((r) => r.status), ['invalidToken']);
    });

    test('retries with backoff on a transient error and on flow control', async () => {
      fake.failNext('transient');
      fake.failNext('flowControl');
      const results = await push(3);
      assert.ok(results.every((r) => r.status === 'sent'), JSON.stringify(results));
      assert.equal(sleeps.length, 2);
      assert.ok(sleeps[1] > sleeps[0], `backoff grows: ${sleeps}`);
    });

    test('gives up after the last try with an error per device', async () => {
      fake.failNext('transient', 10);
      const results = await push(2);
      assert.ok(results.every((r) => r.status === 'failed' && /gave up/.test(r.error ?? '')), JSON.stringify(results));
      assert.equal(sleeps.length, 3);
    });

    test('daily quota pauses this maker for this application until the next day', { skip: !['mi', 'oppo', 'vivo'].includes(vendor) && `${vendor} has no documented daily-quota error` }, async () => {
      fake.failNext('quota');
      const first = await push(2);
      assert.ok(first.every((r) => r.status === 'failed' && /quota/.test(r.error ?? '')), JSON.stringify(first));
      const pause = await pauses.current({ appId: 'app1', deviceProfile: '_default', vendor }, clock.now());
      assert.equal(pause?.until, nextQuotaDay(clock.now()));
      const calls = fake.sends.length;
      const second = await push(2);
      assert.ok(second.every((r) => r.status === 'failed' && /paused until/.test(r.error ?? '')));
      assert.equal(fake.sends.length, calls, 'no request while paused');
      // another application is not paused
      const other = await dispatch.send({ appId: 'app2', vendor, deviceProfile: '_default', notificationId: 'n2', data: { alert: 'x' }, expiresAt: null, devices: devices(1) });
      assert.equal(other[0].status, 'sent');
      clock.set(nextQuotaDay(clock.now()) + 1);
      assert.ok((await push(2)).every((r) => r.status === 'sent'));
    });

    test(`silent: ${passThrough[vendor] ? 'sent as pass-through' : 'not sent, dropped with an error'}`, async () => {
      const results = await push(2, { alert: 'quiet', silent: true, orderId: 7 });
      if (!passThrough[vendor]) {
        assert.ok(results.every((r) => r.status === 'dropped' && /pass-through/.test(r.error ?? '')));
        assert.equal(fake.sends.length, 0);
        return;
      }
      assert.ok(results.every((r) => r.status === 'sent'), JSON.stringify(results));
      assert.deepEqual(fake.violations, []);
      const body = fake.sends[0].body as Record<string, any>;
      if (vendor === 'HMS') {
        assert.equal(body.message.android.notification, undefined);
        assert.deepEqual(JSON.parse(body.message.data), { orderId: 7 });
      } else if (vendor === 'mi') {
        assert.equal(body.pass_through, '1');
        assert.deepEqual(body.payload, { orderId: 7 });
      } else {
        assert.equal(body.android.notification, undefined);
        assert.deepEqual(JSON.parse(body.data), { orderId: 7 });
      }
    });

    test('missing credentials: every device failed with a clear error', async () => {
      settings = { ...settings, vendors: { other: { [vendor]: fake.credentials } } };
      const results = await push(2);
      assert.ok(results.every((r) => r.status === 'failed' && r.error?.includes(`vendors._default.${vendor}`)), JSON.stringify(results));
      assert.equal(fake.sends.length, 0);
    });

    test('content over 4 KB is refused before the maker', async () => {
      const results = await push(1, { alert: 'big', blob: 'x'.repeat(5000) });
      assert.equal(results[0].status, 'failed');
      assert.match(results[0].error ?? '', /4096 bytes/);
      assert.equal(fake.sends.length, 0);
    });
  });
}
