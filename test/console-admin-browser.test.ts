// The console's app, users and operator pages in real Chromium (playwright-core driving Debian's
// chromium), at desktop and phone width: rotate the app key with a short grace and see the old key
// accepted during it and refused after, change a setting, find and unlock a locked user (TOTP:
// test/console-totp-browser.test.ts). Screenshots go to test/artifacts/console/. On the store this run selects.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { skipBrowser as skip, type Browser } from './helpers/chromium.ts';
import { pageAt, shot, shots, signInWithForm } from './helpers/console-steps.ts';
import { makeOperator } from './helpers/console.ts';
import { signUp } from './helpers/accounts.ts';

let t: TestServer;
const clock = new ManualClock();
const browsers: Browser[] = [];

before(async () => {
  if (skip) return;
  mkdirSync(shots, { recursive: true });
  t = await startServer({ clock });
  await makeOperator(t.services.operators, 'ada', 'admin');
});
after(async () => {
  for (const browser of browsers) await browser.close();
  await t?.close();
});


async function withAppKey(appId: string, key: string): Promise<number> {
  const response = await fetch(`${t.url}/1.1/classes/Probe`, { headers: { 'X-LC-Id': appId, 'X-LC-Key': key } });
  await response.arrayBuffer();
  return response.status;
}

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]] as const) {
  test(`${label}: rotate a key with a grace period, change a setting, find and unlock a user`, { skip }, async () => {
    const keys = await t.services.registry.create(`Shop on ${label}`);
    const page = await pageAt(browsers, width, height);
    await signInWithForm(page, t.url, 'ada');
    await page.getByRole('link', { name: `Shop on ${label}` }).click();
    await page.waitForURL(`${t.url}/console/apps/${keys.appId}`);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), `Shop on ${label}`);
    assert.ok(!(await page.content()).includes(keys.appKey), 'the key is masked');
    await shot(page, `${label}-app`);

    // Rotate the app key with a 2-minute grace.
    await page.getByLabel('Key', { exact: true }).selectOption('appKey');
    await page.getByLabel('Old key accepted for').fill('2m');
    await page.getByRole('button', { name: 'Rotate' }).click();
    await page.waitForLoadState();
    const status = page.getByRole('status').first();
    assert.match((await status.textContent()) ?? '', /New app key/);
    const newKey = (await page.locator('code.secret').textContent()) ?? '';
    assert.match(newKey, /^[A-Za-z0-9]{24}$/);
    await shot(page, `${label}-app-rotated`);
    assert.equal(await withAppKey(keys.appId, newKey), 200);
    assert.equal(await withAppKey(keys.appId, keys.appKey), 200, 'the old key during the grace period');
    clock.advance(2 * 60_000 + 1);
    assert.equal(await withAppKey(keys.appId, keys.appKey), 401, 'the old key after it');

    // A setting: users may query users.
    await page.goto(`${t.url}/console/apps/${keys.appId}`);
    await page.getByLabel(/Users may query other users/).check();
    await page.getByRole('button', { name: 'Save sign-in settings' }).click();
    await page.waitForLoadState();
    assert.match((await page.getByRole('status').first().textContent()) ?? '', /Settings saved/);
    assert.equal((await t.services.registry.freshSettings(keys.appId))?.userQueryPermission, true);
    await page.getByRole('button', { name: 'Save SMS settings' }).scrollIntoViewIfNeeded();
    await shot(page, `${label}-app-saved`);

    // A user locked by wrong passwords, found by email and unlocked.
    const app = { url: t.url, appId: keys.appId, appKey: newKey };
    const { Client } = await import('./helpers/client.ts');
    const client = new Client(app);
    const email = `locked-${label}@example.com`;
    const user = await signUp(client, { email });
    for (let i = 0; i < 7; i++) await client.post('/1.1/login', { username: user.username, password: 'wrong password' });
    assert.equal((await client.post('/1.1/login', { username: user.username, password: user.password })).body.code, 219);
    await page.getByRole('link', { name: 'Users' }).click();
    await page.waitForURL(`${t.url}/console/apps/${keys.appId}/users`);
    await shot(page, `${label}-users`);
    await page.getByLabel(/Username, email, phone number or objectId/).fill(email);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.waitForLoadState();
    await shot(page, `${label}-users-found`);
    await page.getByRole('link', { name: user.username }).click();
    await page.waitForURL(`${t.url}/console/apps/${keys.appId}/users/${user.objectId}`);
    assert.match((await page.locator('dl.keys').textContent()) ?? '', /Locked until/);
    await shot(page, `${label}-user-locked`);
    await page.getByRole('button', { name: 'Unlock sign-in' }).click();
    await page.waitForLoadState();
    assert.match((await page.getByRole('status').first().textContent()) ?? '', /Sign-in is unlocked/);
    await shot(page, `${label}-user-unlocked`);
    assert.equal((await client.post('/1.1/login', { username: user.username, password: user.password })).status, 200);

    await page.getByRole('link', { name: 'Operators' }).click();
    await page.waitForURL(`${t.url}/console/operators`);
    await shot(page, `${label}-operators-manage`);
  });
}
