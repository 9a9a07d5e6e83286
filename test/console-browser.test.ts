// The console in real Chromium (playwright-core driving Debian's chromium): sign in with the keyboard,
// see the apps list, create an application and see its keys once, read the audit log, sign out; at
// desktop and phone width. Screenshots go to test/artifacts/console/.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startServer, type TestServer } from './helpers/harness.ts';
import { artifacts, launchChromium, skipBrowser as skip, type Browser } from './helpers/chromium.ts';
import { makeOperator, operatorPassword } from './helpers/console.ts';

const shots = join(artifacts, 'console');
let t: TestServer;
const browsers: Browser[] = [];

before(async () => {
  if (skip) return;
  mkdirSync(shots, { recursive: true });
  t = await startServer();
  await t.services.registry.create('Shop (production)');
  await makeOperator(t.services.operators, 'ada', 'admin');
  await makeOperator(t.services.operators, 'vic', 'viewer');
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

/** Waits for the page's autofocus to settle on the field of that id. */
async function focused(page: Page, id: string): Promise<void> {
  await page.waitForFunction((wanted) => document.activeElement?.id === wanted, id, { timeout: 5000 });
}

/** Signs in with the keyboard only: the name field has the focus, Tab to the password, Enter. */
async function signIn(page: Page, name: string, password = operatorPassword): Promise<void> {
  await focused(page, 'name');
  await page.keyboard.type(name);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  await page.keyboard.press('Enter');
  await page.waitForLoadState();
}

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]] as const) {
  test(`${label}: sign in, see the apps, create one, read the audit log, sign out`, { skip }, async () => {
    const page = await pageAt(width, height);
    const opened = await page.goto(`${t.url}/console`);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in', 'without a session the console opens at sign-in');
    assert.equal(opened?.status(), 200);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in');
    await shot(page, `${label}-sign-in`);

    await signIn(page, 'ada', 'not the password');
    assert.equal(await page.getByRole('alert').textContent(), 'The name or the password is wrong.');
    await shot(page, `${label}-sign-in-wrong`);
    // The name is kept and the password field has the focus.
    await focused(page, 'password');
    await page.keyboard.type(operatorPassword);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${t.url}/console/apps`);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Applications');
    const table = await page.locator('table').textContent();
    assert.match(table ?? '', /Shop \(production\)/);
    assert.ok(table?.includes(t.appId));
    assert.ok(!(await page.content()).includes(t.masterKey), 'no key on the list');
    // The session cookie is out of a script's reach.
    assert.equal(await page.evaluate(() => document.cookie), '');
    await shot(page, `${label}-apps`);

    await page.getByLabel('Name', { exact: true }).fill(`Made on ${label}`);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForLoadState();
    const status = page.getByRole('status');
    assert.match((await status.textContent()) ?? '', new RegExp(`Application Made on ${label} created`));
    assert.match((await status.textContent()) ?? '', /Master key/);
    await shot(page, `${label}-app-created`);
    // Reloading the list does not show the keys again.
    await page.goto(`${t.url}/console/apps`);
    assert.equal(await page.getByRole('status').count(), 0);

    await page.getByRole('link', { name: 'Operators' }).click();
    await page.waitForURL(`${t.url}/console/operators`);
    assert.match((await page.locator('table').textContent()) ?? '', /vic\s*viewer/);
    await shot(page, `${label}-operators`);

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL(`${t.url}/console/audit`);
    assert.match((await page.locator('tbody tr').first().textContent()) ?? '', /ada.*app\.create/s);
    await shot(page, `${label}-audit`);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.url}/console/sign-in`);
    await page.goto(`${t.url}/console/apps`);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in', 'signed out: back to sign-in');
  });
}

test('a viewer sees the list without the create form', { skip }, async () => {
  const page = await pageAt(1280, 800);
  await page.goto(`${t.url}/console/sign-in`);
  await signIn(page, 'vic');
  await page.waitForURL(`${t.url}/console/apps`);
  assert.equal(await page.getByRole('button', { name: 'Create' }).count(), 0);
  assert.match((await page.locator('header').textContent()) ?? '', /vic \(viewer\)/);
  await shot(page, 'desktop-viewer-apps');
});
