// The console's app, users and operator pages in real Chromium (playwright-core driving Debian's
// chromium), at desktop and phone width: rotate the app key with a short grace and see the old key
// accepted during it and refused after, change a setting, find and unlock a locked user, enrol TOTP and
// sign in with a code. Screenshots go to test/artifacts/console/. On the store this run selects.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { artifacts, launchChromium, skipBrowser as skip, type Browser } from './helpers/chromium.ts';
import { makeOperator, operatorPassword } from './helpers/console.ts';
import { signUp } from './helpers/accounts.ts';

const shots = join(artifacts, 'console');
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

async function pageAt(width: number, height: number): Promise<Page> {
  const browser = await launchChromium({ width, height });
  browsers.push(browser);
  return browser.context.newPage();
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

async function signIn(page: Page, name: string, code = ''): Promise<void> {
  await page.goto(`${t.url}/console/sign-in`);
  await page.getByLabel('Operator name').fill(name);
  await page.getByLabel('Password').fill(operatorPassword);
  if (code) await page.getByLabel(/Authenticator code/).fill(code);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState();
}

async function withAppKey(appId: string, key: string): Promise<number> {
  const response = await fetch(`${t.url}/1.1/classes/Probe`, { headers: { 'X-LC-Id': appId, 'X-LC-Key': key } });
  await response.arrayBuffer();
  return response.status;
}

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]] as const) {
  test(`${label}: rotate a key with a grace period, change a setting, find and unlock a user`, { skip }, async () => {
    const keys = await t.services.registry.create(`Shop on ${label}`);
    const page = await pageAt(width, height);
    await signIn(page, 'ada');
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

  test(`${label}: enrol TOTP, then sign in with a code`, { skip }, async () => {
    const name = `totp-${label}`;
    await makeOperator(t.services.operators, name, 'viewer');
    const page = await pageAt(width, height);
    await signIn(page, name);
    await page.getByRole('link', { name: 'Your account' }).click();
    await page.getByRole('button', { name: 'Set up TOTP' }).click();
    await page.waitForLoadState();
    assert.equal(await page.locator('.qr svg').count(), 1, 'a QR code');
    const uri = (await page.locator('dd code').nth(1).textContent()) ?? '';
    const totp = OTPAuth.URI.parse(uri) as OTPAuth.TOTP;
    await shot(page, `${label}-totp-enrol`);
    await page.getByLabel('Code from the app').fill(totp.generate({ timestamp: clock.now() }));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForLoadState();
    assert.match((await page.getByRole('status').first().textContent()) ?? '', /TOTP is on/);
    await shot(page, `${label}-totp-on`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.url}/console/sign-in`);

    await signIn(page, name);
    assert.match((await page.getByRole('alert').textContent()) ?? '', /enter the password and the code/);
    await shot(page, `${label}-sign-in-code`);
    clock.advance(30_000);
    await signIn(page, name, totp.generate({ timestamp: clock.now() }));
    await page.waitForURL(`${t.url}/console/apps`);
  });
}
