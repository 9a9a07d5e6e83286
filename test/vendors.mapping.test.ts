// Message mapping and delivery rules of the phone-maker senders (SPEC §4.3 rules 3, 7–11, badges, §8 limits).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { defaultSettings, type AppSettings } from '../src/apps/settings.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { createVendorDispatch, type VendorDispatchInput } from '../src/push/vendors/dispatch.ts';
import { buildPushMessage, contentTooLarge, customKeys, intentUri, packageNameProblem } from '../src/push/vendors/mapping.ts';
import { oppoClickAction } from '../src/push/vendors/oppo.ts';
import { nextQuotaDay } from '../src/push/vendors/pauses.ts';
import { MemoryQuotaPauses } from '../src/storage/quota-pause-store.ts';
import { parseHonorReceipts, type ReceiptBatch } from '../src/push/vendors/receipts.ts';
import type { VendorName } from '../src/push/vendors/types.ts';
import { registerVendorCallbackRoutes } from '../src/http/routes/vendor-callbacks.ts';
import { startFakeMaker, type FakeMaker } from './fakes/makers.ts';

const clock = new ManualClock(Date.UTC(2026, 10, 22, 3, 0, 0));
const fakes = {} as Record<VendorName, FakeMaker>;

before(async () => {
  for (const vendor of ['HMS', 'mi', 'mz', 'oppo', 'vivo', 'honor'] as const) fakes[vendor] = await startFakeMaker(vendor, { now: () => clock.now() });
});
after(async () => {
  for (const fake of Object.values(fakes)) await fake.close();
});

/** Sends one push to one maker's fake and returns the results and the request the maker saw. */
async function pushTo(
  vendor: VendorName,
  data: Record<string, unknown>,
  options: { settings?: Partial<AppSettings>; credentials?: Record<string, string>; hms?: unknown; devices?: VendorDispatchInput['devices']; expiresAt?: number | null } = {},
) {
  const fake = fakes[vendor];
  fake.reset();
  const settings: AppSettings = {
    ...defaultSettings,
    commercial: true,
    mixedPush: true,
    vendors: { _default: { [vendor]: { ...fake.credentials, ...(options.credentials ?? {}) } } },
    ...(options.settings ?? {}),
  };
  const dispatch = createVendorDispatch({ settingsFor: async () => settings, clock, pauses: new MemoryQuotaPauses(), sleep: async () => {} });
  const results = await dispatch.send({
    appId: 'app1',
    vendor,
    deviceProfile: '_default',
    notificationId: 'note1',
    data,
    hms: options.hms,
    expiresAt: options.expiresAt ?? null,
    devices: options.devices ?? [{ installationObjectId: 'i1', registrationId: 'tok1' }],
  });
  return { results, body: fake.sends[0]?.body as Record<string, any> | undefined, fake };
}

describe('SPEC §4.3 rule 7: the HMS intent URI', () => {
  test('matches the fixed shape character by character', () => {
    const uri = intentUri('cn.leancloud.push', { orderId: 42, msg: 'a b;c#d=é' });
    const expected =
      'intent://cn.leancloud.push/notify_detail#Intent;scheme=lcpushscheme;S.content=' +
      '%7B%22orderId%22%3A42%2C%22msg%22%3A%22a%20b%3Bc%23d%3D%C3%A9%22%7D' +
      ';launchFlags=0x10000000;end';
    for (let i = 0; i < Math.max(uri.length, expected.length); i++) {
      assert.equal(uri[i], expected[i], `character ${i}: ${JSON.stringify(uri.slice(0, i + 1))}`);
    }
    assert.equal(uri, expected);
  });

  test('only custom keys go into S.content', () => {
    const custom = customKeys({ alert: 'a', title: 't', badge: 1, sound: 's', silent: false, hms: {}, android: {}, _profile: 'dev', orderId: 1, action: 'com.x' });
    assert.deepEqual(custom, { orderId: 1, action: 'com.x' });
  });

  test('HMS request: title, body, type 1 with the intent; host from androidIntentHostname', async () => {
    const { results, body } = await pushTo('HMS', { alert: 'Body text', title: 'Title text', orderId: 42 }, { settings: { androidIntentHostname: 'push.example.com' } });
    assert.equal(results[0].status, 'sent');
    const notification = body!.message.android.notification;
    assert.equal(notification.title, 'Title text');
    assert.equal(notification.body, 'Body text');
    assert.deepEqual(notification.click_action, {
      type: 1,
      intent: 'intent://push.example.com/notify_detail#Intent;scheme=lcpushscheme;S.content=%7B%22orderId%22%3A42%7D;launchFlags=0x10000000;end',
    });
    assert.equal(body!.message.android.bi_tag, 'note1');
    assert.deepEqual(body!.message.token, ['tok1']);
  });

  test('default host when androidIntentHostname is unset', async () => {
    const { body } = await pushTo('HMS', { alert: 'x' });
    assert.equal(body!.message.android.notification.click_action.intent, 'intent://cn.leancloud.push/notify_detail#Intent;scheme=lcpushscheme;S.content=%7B%7D;launchFlags=0x10000000;end');
  });
});

describe('SPEC §4.3 rule 9: the hms object passes through', () => {
  test('foreground_show, click_action and target_user_type reach HMS; the targets stay ours', async () => {
    const hms = {
      message: {
        notification: { title: 'T', body: 'B' },
        android: { notification: { foreground_show: false, click_action: { type: 1, action: 'com.example.OPEN' } } },
        token: ['attacker'],
        topic: 'everyone',
      },
      target_user_type: 1,
    };
    const { results, body, fake } = await pushTo('HMS', { alert: 'x' }, { hms });
    assert.equal(results[0].status, 'sent');
    assert.deepEqual(fake.violations, []);
    assert.equal(body!.message.android.notification.foreground_show, false);
    assert.equal(body!.message.android.notification.click_action.action, 'com.example.OPEN');
    assert.deepEqual(body!.message.notification, { title: 'T', body: 'B' });
    assert.equal(body!.message.android.target_user_type, 1);
    assert.deepEqual(body!.message.token, ['tok1']);
    assert.equal(body!.message.topic, undefined);
  });

  test('data.android and data.<vendor> override the content', () => {
    const message = buildPushMessage({
      vendor: 'vivo',
      notificationId: 'n',
      data: { alert: 'base', title: 'base', android: { alert: 'android' }, vivo: { title: 'vivo title', pushMode: 1 } },
      expiresAt: null,
      androidIntentHostname: null,
    });
    assert.equal(message.body, 'android');
    assert.equal(message.title, 'vivo title');
    assert.deepEqual(message.options, { pushMode: 1 });
  });
});

describe('SPEC §4.3 rule 10: OPPO click behaviour', () => {
  test('default 0 (launch the app), custom keys as action_parameters', async () => {
    const { results, body, fake } = await pushTo('oppo', { alert: 'x', title: 't', k: 'v' });
    assert.equal(results[0].status, 'sent');
    assert.deepEqual(fake.violations, []);
    const n = body!.messages[0].notification;
    assert.equal(n.click_action_type, 0);
    assert.equal(n.action_parameters, '{"k":"v"}');
    assert.equal(n.title, 't');
    assert.equal(n.content, 'x');
  });

  test('each click type and its required parameter', async () => {
    const { body } = await pushTo('oppo', { alert: 'x', oppo: { click_action_type: 1, click_action_activity: 'com.example.OPEN' } });
    assert.equal(body!.messages[0].notification.click_action_type, 1);
    assert.equal(body!.messages[0].notification.click_action_activity, 'com.example.OPEN');
    assert.deepEqual(oppoClickAction({ click_action_type: 4, click_action_activity: 'com.example.Main' }), { ok: true, fields: { click_action_type: 4, click_action_activity: 'com.example.Main' } });
    assert.deepEqual(oppoClickAction({ clickActionType: 5, clickActionUrl: 'app://x' }), { ok: true, fields: { click_action_type: 5, click_action_url: 'app://x' } });
    const missing = await pushTo('oppo', { alert: 'x', oppo: { click_action_type: 2 } });
    assert.equal(missing.results[0].status, 'failed');
    assert.match(missing.results[0].error!, /click_action_url/);
    assert.equal(missing.body, undefined);
    const bad = oppoClickAction({ click_action_type: 3 });
    assert.equal(bad.ok, false);
  });

  test('OPPO takes only notification-bar messages: silent is dropped with an error', async () => {
    const { results, fake } = await pushTo('oppo', { alert: 'x', silent: true });
    assert.equal(results[0].status, 'dropped');
    assert.match(results[0].error!, /pass-through/);
    assert.equal(fake.sends.length, 0);
  });
});

describe('SPEC §4.3 rule 11: vivo click parameters', () => {
  test('skipType 4 with the intent of the target page and its data', async () => {
    const { results, body, fake } = await pushTo('vivo', { alert: 'x', title: 't', orderId: 42 }, { settings: { androidIntentHostname: 'push.example.com' } });
    assert.equal(results[0].status, 'sent');
    assert.deepEqual(fake.violations, []);
    assert.equal(body!.skipType, 4);
    assert.equal(body!.skipContent, 'intent://push.example.com/detail#Intent;scheme=mixpushscheme;S.content=%7B%22orderId%22%3A42%7D;launchFlags=0x10000000;end');
    assert.equal(body!.notifyType, 4);
  });

  test('data.vivo parameters pass through (pushMode, classification, skipType)', async () => {
    const { body } = await pushTo('vivo', { alert: 'x', vivo: { pushMode: 1, classification: 1, skipType: 1 } });
    assert.equal(body!.pushMode, 1);
    assert.equal(body!.classification, 1);
    assert.equal(body!.skipType, 1);
  });
});

describe('badges per maker', () => {
  test('HMS: set_num / add_num with the configured badgeClass; none without a class', async () => {
    let { body } = await pushTo('HMS', { alert: 'x', badge: 5 }, { credentials: { badgeClass: 'com.example.Main' } });
    assert.deepEqual(body!.message.android.notification.badge, { set_num: 5, class: 'com.example.Main' });
    ({ body } = await pushTo('HMS', { alert: 'x', badge: 'Increment' }, { credentials: { badgeClass: 'com.example.Main' } }));
    assert.deepEqual(body!.message.android.notification.badge, { add_num: 1, class: 'com.example.Main' });
    ({ body } = await pushTo('HMS', { alert: 'x', badge: 5 }));
    assert.equal(body!.message.android.notification.badge, undefined);
  });

  test('Honor: the badge parameter set by the server', async () => {
    let { body, fake } = await pushTo('honor', { alert: 'x', badge: 'Increment', honor: { badgeClass: 'com.example.Main' } });
    assert.deepEqual(body!.android.notification.badge, { addNum: 1, badgeClass: 'com.example.Main' });
    assert.deepEqual(fake.violations, []);
    ({ body } = await pushTo('honor', { alert: 'x', badge: 3 }, { credentials: { badgeClass: 'com.example.Main' } }));
    assert.deepEqual(body!.android.notification.badge, { setNum: 3, badgeClass: 'com.example.Main' });
  });

  test('mi, oppo, vivo, mz carry no badge (automatic count or red dot)', async () => {
    for (const vendor of ['mi', 'oppo', 'vivo', 'mz'] as const) {
      const { body, results } = await pushTo(vendor, { alert: 'x', badge: 4 });
      assert.equal(results[0].status, 'sent');
      assert.doesNotMatch(JSON.stringify(body), /badge/i, vendor);
    }
  });
});

describe('SPEC §8 limits', () => {
  test('content over 4 KB: a clear error; 4096 bytes pass the check', () => {
    assert.match(contentTooLarge('HMS', 'x'.repeat(4097))!, /4097 bytes.*at most 4096 bytes/);
    assert.equal(contentTooLarge('HMS', 'x'.repeat(4096)), null);
  });

  test('package name over 128 bytes: every device failed with a clear error, nothing sent', async () => {
    assert.equal(packageNameProblem('a'.repeat(128)), null);
    assert.match(packageNameProblem('é'.repeat(65))!, /130 bytes.*at most 128 bytes/);
    const { results, fake } = await pushTo('mi', { alert: 'x' }, { credentials: { packageName: `com.${'a'.repeat(130)}` } });
    assert.equal(results[0].status, 'failed');
    assert.match(results[0].error!, /packageName is 134 bytes/);
    assert.equal(fake.sends.length, 0);
  });
});

describe('dispatcher rules', () => {
  test('mixed push off: failed, nothing sent', async () => {
    const { results, fake } = await pushTo('mi', { alert: 'x' }, { settings: { mixedPush: false } });
    assert.equal(results[0].status, 'failed');
    assert.match(results[0].error!, /mixed push is off/);
    assert.equal(fake.sends.length, 0);
  });

  test('a missing credential field is named', async () => {
    const { results } = await pushTo('vivo', { alert: 'x' }, { credentials: { appKey: '' } });
    assert.equal(results[0].status, 'failed');
    assert.equal(results[0].error, 'vendors._default.vivo is missing appKey');
  });

  test('an expired push is not sent', async () => {
    const { results, fake } = await pushTo('HMS', { alert: 'x' }, { expiresAt: clock.now() - 1 });
    assert.equal(results[0].status, 'failed');
    assert.equal(fake.sends.length, 0);
  });

  test('time to live follows expiresAt', async () => {
    const { body } = await pushTo('HMS', { alert: 'x' }, { expiresAt: clock.now() + 90_000 });
    assert.equal(body!.message.android.ttl, '90s');
  });

  test('two installations with one registration id: one target, two results', async () => {
    const { results, fake } = await pushTo('mi', { alert: 'x' }, {
      devices: [
        { installationObjectId: 'a', registrationId: 'same' },
        { installationObjectId: 'b', registrationId: 'same' },
      ],
    });
    assert.deepEqual(results.map((r) => [r.installationObjectId, r.status]), [['a', 'sent'], ['b', 'sent']]);
    assert.deepEqual(fake.sends[0].tokens, ['same']);
  });

  test('the quota day ends at midnight China time', () => {
    assert.equal(nextQuotaDay(Date.UTC(2026, 10, 22, 3, 0, 0)), Date.UTC(2026, 10, 22, 16, 0, 0));
    assert.equal(nextQuotaDay(Date.UTC(2026, 10, 22, 16, 0, 0)), Date.UTC(2026, 10, 23, 16, 0, 0));
    assert.equal(nextQuotaDay(Date.UTC(2026, 10, 22, 15, 59, 59)), Date.UTC(2026, 10, 22, 16, 0, 0));
  });
});

describe('Honor receipts (SPEC §6)', () => {
  const payload = {
    statuses: [
      { biTag: 'note1', appId: '104400001', token: 't1', status: 0, timestamp: 1763780000000, requestId: 'r1' },
      { biTag: 'note1', appId: '104400001', token: 't2', status: 2, timestamp: 1763780000000, requestId: 'r1' },
      { biTag: 'note1', appId: '104400001', token: 't3', status: 102, timestamp: 1763780000000, requestId: 'r1' },
      { biTag: 'note2', appid: '104400001', token: 't4', status: 0, timestamp: 1763780000000, requestId: 'r2' },
    ],
  };

  test('parsed into delivery counts and tokens to invalidate', () => {
    const parsed = parseHonorReceipts(payload);
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.batch.counts, [
      { notificationId: 'note1', delivered: 1, undelivered: 1, invalidTokens: 1 },
      { notificationId: 'note2', delivered: 1, undelivered: 0, invalidTokens: 0 },
    ]);
    assert.deepEqual(parsed.batch.invalidTokens, ['t2']);
    assert.equal(parsed.batch.receipts[3].vendorAppId, '104400001');
    assert.equal(parseHonorReceipts({ nope: 1 }).ok, false);
  });

  test('POST /push/v1/callback/honor hands the batch to onReceipt', async () => {
    const app = Fastify();
    const seen: ReceiptBatch[] = [];
    registerVendorCallbackRoutes(app, { onReceipt: async (batch) => void seen.push(batch) });
    const ok = await app.inject({ method: 'POST', url: '/push/v1/callback/honor', payload });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { errno: '0', errmsg: 'success' });
    assert.equal(seen[0].receipts.length, 4);
    const bad = await app.inject({ method: 'POST', url: '/push/v1/callback/honor', payload: { statuses: 'x' } });
    assert.notEqual(bad.statusCode, 200);
    await app.close();
  });
});

describe('quota pauses', () => {
  test('RedisQuotaPauses keeps one expiring key per app, profile and maker', async () => {
    const { RedisQuotaPauses } = await import('../src/storage/redis/quota-pause-store.ts');
    const store = new Map<string, { value: string; expires: number }>();
    const redis = {
      async get(key: string) {
        const entry = store.get(key);
        return entry && entry.expires > clock.now() ? entry.value : null;
      },
      async set(key: string, value: string, _mode: 'PX', ms: number) {
        store.set(key, { value, expires: clock.now() + ms });
        return 'OK';
      },
    };
    const pauses = new RedisQuotaPauses(redis, clock);
    const key = { appId: 'a', deviceProfile: '_default', vendor: 'mi' as const };
    assert.equal(await pauses.current(key, clock.now()), null);
    const until = nextQuotaDay(clock.now());
    await pauses.pause(key, until, 'mi 10034');
    assert.deepEqual(await pauses.current(key, clock.now()), { until, reason: 'mi 10034' });
    assert.equal(await pauses.current({ ...key, vendor: 'vivo' }, clock.now()), null);
    assert.equal(await pauses.current(key, until), null);
  });
});
