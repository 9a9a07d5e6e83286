// The console's application page over HTTP (docs/console.md): keys masked, rotation with a grace
// period (the old key accepted during it, refused after), every setting through the settings API's
// checks, secrets write-only and never shown to a viewer, deletion with the id typed, each change
// audited. On the store this run selects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { ConsoleClient, makeOperator } from './helpers/console.ts';

let t: TestServer;
const clock = new ManualClock();
let ada: ConsoleClient;
let vic: ConsoleClient;

before(async () => {
  t = await startServer({ clock });
  await makeOperator(t.services.operators, 'ada', 'admin');
  await makeOperator(t.services.operators, 'vic', 'viewer');
  ada = new ConsoleClient(t.url);
  vic = new ConsoleClient(t.url);
  await ada.signIn('ada');
  await vic.signIn('vic');
});
after(async () => t?.close());

async function lastAudit() {
  const [entry] = (await ada.request('GET', '/console/api/audit')).body.results;
  return { actor: entry.actor, action: entry.action, target: entry.target, detail: entry.detail };
}

/** The status of a REST read made with this app key. */
async function withAppKey(key: string): Promise<number> {
  const response = await fetch(`${t.url}/1.1/classes/Probe`, { headers: { 'X-LC-Id': t.appId, 'X-LC-Key': key } });
  await response.arrayBuffer();
  return response.status;
}

test('the page shows the keys masked: the last four characters to an admin, nothing to a viewer', async () => {
  const page = await ada.request('GET', `/console/apps/${t.appId}`);
  assert.equal(page.status, 200);
  assert.ok(page.text.includes(`••••••••${t.masterKey.slice(-4)}`));
  const api = await ada.request('GET', `/console/api/apps/${t.appId}`);
  assert.deepEqual([api.body.appKey, api.body.masterKey], [`••••••••${t.appKey.slice(-4)}`, `••••••••${t.masterKey.slice(-4)}`]);
  assert.deepEqual(api.body.contents, { objects: 0, users: 0, installations: 0, roles: 0, classes: 0, leaderboards: 0 });
  const viewed = await vic.request('GET', `/console/api/apps/${t.appId}`);
  assert.deepEqual([viewed.body.appKey, viewed.body.masterKey], ['••••••••', '••••••••']);
  for (const text of [page.text, api.text, viewed.text, (await vic.request('GET', `/console/apps/${t.appId}`)).text]) {
    assert.ok(!text.includes(t.masterKey) && !text.includes(t.appKey));
  }
  const missing = await ada.request('GET', '/console/api/apps/nope');
  assert.deepEqual([missing.status, missing.body], [404, { code: 101, error: 'No application with id nope.' }]);
});

test('rotating the app key: the new key shown once, the old one accepted during the grace and refused after', async () => {
  const oldKey = t.appKey;
  const bad = await ada.change('POST', `/console/api/apps/${t.appId}/rotate`, { kind: 'appKey', grace: '7 days' });
  assert.deepEqual([bad.status, bad.body], [400, { code: 111, error: 'The grace period must be a duration like 7d, 12h, 30m or 0, not "7 days".' }]);
  const rotated = await ada.change('POST', `/console/api/apps/${t.appId}/rotate`, { kind: 'appKey', grace: '30m' });
  assert.equal(rotated.status, 200);
  const newKey = rotated.body.key;
  assert.match(newKey, /^[A-Za-z0-9]{24}$/);
  assert.equal(rotated.body.oldKeyAcceptedUntil, new Date(clock.now() + 30 * 60_000).toISOString());
  assert.deepEqual(await lastAudit(), { actor: 'ada', action: 'app.rotate', target: t.appId, detail: { kind: 'appKey', grace: '30m', acceptedUntil: rotated.body.oldKeyAcceptedUntil } });
  assert.equal(await withAppKey(newKey), 200);
  assert.equal(await withAppKey(oldKey), 200, 'the old key within its grace period');
  const page = await ada.request('GET', `/console/apps/${t.appId}`);
  assert.ok(!page.text.includes(newKey), 'the new key is not shown again');
  assert.match(page.text, new RegExp(`App key <code>••••••••${oldKey.slice(-4)}</code> accepted until`));
  clock.advance(30 * 60_000 + 1);
  assert.equal(await withAppKey(oldKey), 401, 'the old key after its grace period');
  assert.equal(await withAppKey(newKey), 200);
  // The form: the new master key is on the answer's page, once.
  const form = await ada.request('POST', `/console/apps/${t.appId}/rotate`, { form: { _csrf: ada.csrf, kind: 'masterKey', grace: '0' } });
  assert.equal(form.status, 200);
  const shown = /<code class="secret">([A-Za-z0-9]{24})<\/code>/.exec(form.text)?.[1];
  assert.equal(shown, (await t.services.registry.freshApp(t.appId))?.masterKey);
  assert.match(form.text, /The old key is refused from now on\./);
  t.appKey = newKey;
  t.masterKey = shown!;
});

test('settings: forms and JSON go through the settings API checks; secrets are write-only and masked', async () => {
  const base = `/console/apps/${t.appId}`;
  const saved = await ada.request('POST', `${base}/settings`, { form: { _csrf: ada.csrf, section: 'accounts', verifyEmailOnSignup: 'on', userQueryPermission: 'on' } });
  assert.deepEqual([saved.status, saved.headers.get('location')], [303, `${base}?done=saved`]);
  let settings = await t.services.registry.freshSettings(t.appId);
  assert.deepEqual([settings?.verifyEmailOnSignup, settings?.userQueryPermission, settings?.forceReloginOnPasswordChange], [true, true, false]);
  assert.deepEqual(await lastAudit(), {
    actor: 'ada', action: 'app.settings', target: t.appId,
    detail: { changed: ['verifyEmailOnSignup', 'preventLoginWithUnverifiedEmail', 'forceReloginOnPasswordChange', 'userQueryPermission'] },
  });
  // The API's own refusal, shown on the page.
  const refused = await ada.request('POST', `${base}/settings`, { form: { _csrf: ada.csrf, section: 'push', mixedPush: 'on' } });
  assert.equal(refused.status, 403);
  assert.match(refused.text, /role="alert">Mixed push is available to commercial applications only/);
  const template = await ada.change('PUT', `/console/api/apps/${t.appId}/settings`, { verifyEmailText: 'no link here' });
  assert.deepEqual([template.status, template.body], [400, { code: 111, error: 'verifyEmailText must contain {{link}}.' }]);
  const unknown = await ada.change('PUT', `/console/api/apps/${t.appId}/settings`, { lockout: true });
  assert.deepEqual(unknown.body, { code: 105, error: 'Unknown setting "lockout".' });

  const secret = 'webhook-secret-value-0123';
  const sms = await ada.request('POST', `${base}/settings`, {
    form: { _csrf: ada.csrf, section: 'sms', provider: 'webhook', webhookUrl: 'https://sms.example/send', webhookSecret: secret, signature: 'Shop', defaultCountryCode: '44' },
  });
  assert.equal(sms.status, 303);
  const vendor = await ada.request('POST', `${base}/settings`, { form: { _csrf: ada.csrf, section: 'vendor', vendor: 'HMS', profile: '_default', appId: 'hms-app', appSecret: 'hms-secret-value-9876' } });
  assert.equal(vendor.status, 303);
  settings = await t.services.registry.freshSettings(t.appId);
  assert.deepEqual(settings?.sms, { provider: 'webhook', webhookUrl: 'https://sms.example/send', webhookSecret: secret, signature: 'Shop', defaultCountryCode: '44' });
  assert.deepEqual(settings?.vendors._default.HMS, { appId: 'hms-app', appSecret: 'hms-secret-value-9876' });
  // Saving again with the secret fields empty keeps the secrets.
  await ada.request('POST', `${base}/settings`, { form: { _csrf: ada.csrf, section: 'sms', provider: 'webhook', webhookUrl: 'https://sms.example/v2', webhookSecret: '', defaultCountryCode: '44' } });
  await ada.request('POST', `${base}/settings`, { form: { _csrf: ada.csrf, section: 'vendor', vendor: 'HMS', profile: '_default', appId: 'hms-app-2', appSecret: '' } });
  settings = await t.services.registry.freshSettings(t.appId);
  assert.deepEqual([settings?.sms.webhookSecret, settings?.sms.webhookUrl, settings?.vendors._default.HMS.appSecret, settings?.vendors._default.HMS.appId],
    [secret, 'https://sms.example/v2', 'hms-secret-value-9876', 'hms-app-2']);

  const adminView = await ada.request('GET', base);
  const viewerView = await vic.request('GET', base);
  const viewerApi = await vic.request('GET', `/console/api/apps/${t.appId}`);
  assert.ok(adminView.text.includes('****0123') && adminView.text.includes('****9876'), 'an admin sees the secrets masked');
  for (const text of [adminView.text, viewerView.text, viewerApi.text]) {
    assert.ok(!text.includes(secret) && !text.includes('hms-secret-value-9876'), 'no secret on a page');
  }
  assert.ok(!viewerView.text.includes('0123') && !viewerView.text.includes('9876'), 'a viewer sees nothing of a secret');
  assert.equal(viewerApi.body.settings.sms.webhookSecret, '••••••••');
  assert.ok(!viewerView.text.includes('<form method="post" action="/console/apps/'), 'a viewer is offered no change');
  const audits = JSON.stringify((await ada.request('GET', '/console/api/audit')).body.results);
  assert.ok(!audits.includes(secret) && !audits.includes('hms-secret'), 'no secret in the audit log');
  assert.ok(audits.includes('"vendors._default.HMS"') || audits.includes('vendors._default.HMS.appSecret'));

  const removed = await ada.request('POST', `${base}/settings`, { form: { _csrf: ada.csrf, section: 'vendorRemove', vendor: 'HMS', profile: '_default' } });
  assert.equal(removed.status, 303);
  assert.deepEqual({ ...(await t.services.registry.freshSettings(t.appId))?.vendors._default }, {});
});

test('a viewer changes nothing here, even with its CSRF token; without the token nobody does', async () => {
  const base = `/console/api/apps/${t.appId}`;
  const refused = { code: 403, error: 'A viewer cannot change anything.' };
  for (const [method, path, body] of [['PUT', `${base}/settings`, { userQueryPermission: false }], ['POST', `${base}/rotate`, { kind: 'masterKey', grace: '0' }], ['DELETE', base, { confirm: t.appId }]] as const) {
    const res = await vic.change(method, path, body);
    assert.deepEqual([res.status, res.body], [403, refused], `${method} ${path}`);
    const noToken = await ada.request(method, path, { json: body });
    assert.deepEqual([noToken.status, noToken.body], [403, { code: 403, error: 'The CSRF token is missing or wrong: reload the page.' }]);
  }
  const form = await vic.request('POST', `/console/apps/${t.appId}/rotate`, { form: { _csrf: vic.csrf, kind: 'masterKey', grace: '0' } });
  assert.equal(form.status, 403);
  assert.equal((await t.services.registry.freshApp(t.appId))?.masterKey, t.masterKey, 'nothing rotated');
});

test('deleting an application: what it holds said first, then only with its id typed', async () => {
  const created = await ada.change('POST', '/console/api/apps', { name: 'Doomed' });
  const appId = created.body.appId;
  const page = await ada.request('GET', `/console/apps/${appId}`);
  assert.match(page.text, /This deletes <strong>Doomed<\/strong> and everything it holds: 0 objects in 0 classes, 0 users/);
  const wrong = await ada.request('POST', `/console/apps/${appId}/delete`, { form: { _csrf: ada.csrf, confirm: 'Doomed' } });
  assert.equal(wrong.status, 400);
  assert.match(wrong.text, /role="alert">Not deleted: type the application id exactly to confirm\./);
  assert.ok(await t.services.registry.freshApp(appId));
  const done = await ada.request('POST', `/console/apps/${appId}/delete`, { form: { _csrf: ada.csrf, confirm: appId } });
  assert.deepEqual([done.status, done.headers.get('location')], [303, '/console/apps']);
  assert.equal(await t.services.registry.freshApp(appId), null);
  assert.deepEqual(await lastAudit(), {
    actor: 'ada', action: 'app.delete', target: appId,
    detail: { name: 'Doomed', objects: 0, users: 0, installations: 0, roles: 0, classes: 0, leaderboards: 0 },
  });
  const again = await ada.change('DELETE', `/console/api/apps/${appId}`, { confirm: appId });
  assert.deepEqual([again.status, again.body], [404, { code: 101, error: `No application with id ${appId}.` }]);
});
