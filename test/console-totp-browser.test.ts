// Operators' TOTP in real Chromium at desktop and phone width: enrol (QR, key), confirm with a code,
// sign out, and sign in again with the password and a code. Screenshots go to test/artifacts/console/.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as OTPAuth from 'otpauth';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { skipBrowser as skip, type Browser } from './helpers/chromium.ts';
import { pageAt, shot, shots, signInWithForm } from './helpers/console-steps.ts';
import { makeOperator } from './helpers/console.ts';

let t: TestServer;
const clock = new ManualClock();
const browsers: Browser[] = [];

before(async () => {
  if (skip) return;
  mkdirSync(shots, { recursive: true });
  t = await startServer({ clock });
});
after(async () => {
  for (const browser of browsers) await browser.close();
  await t?.close();
});

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]] as const) {
  test(`${label}: enrol TOTP, then sign in with a code`, { skip }, async () => {
    const name = `totp-${label}`;
    await makeOperator(t.services.operators, name, 'viewer');
    const page = await pageAt(browsers, width, height);
    await signInWithForm(page, t.url, name);
    await page.getByRole('link', { name: 'Account', exact: true }).click();
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
    const codes = await page.locator('ul.codes code').allTextContents();
    assert.equal(codes.length, 10, 'the recovery codes, shown once');
    await shot(page, `${label}-totp-on`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.url}/console/sign-in`);

    await signInWithForm(page, t.url, name);
    assert.match((await page.getByRole('alert').textContent()) ?? '', /enter the password and the code/);
    await shot(page, `${label}-sign-in-code`);
    clock.advance(30_000);
    await signInWithForm(page, t.url, name, totp.generate({ timestamp: clock.now() }));
    await page.waitForURL(`${t.url}/console/apps`);

    // A lost phone: a recovery code in the code field, once.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.url}/console/sign-in`);
    await signInWithForm(page, t.url, name, codes[3]);
    await page.waitForURL(`${t.url}/console/apps`);
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    assert.match((await page.locator('main').textContent()) ?? '', /Recovery codes left: 9/);
    await shot(page, `${label}-totp-codes-left`);
  });
}
