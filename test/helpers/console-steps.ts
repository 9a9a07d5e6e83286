// Chromium steps the console's browser tests share: a page at a width, a screenshot, a sign-in by form.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { artifacts, launchChromium, type Browser } from './chromium.ts';
import { operatorPassword } from './console.ts';

export const shots = join(artifacts, 'console');

/** A page at that size in a browser of its own (kept in `browsers` for closing). */
export async function pageAt(browsers: Browser[], width: number, height: number): Promise<Page> {
  const browser = await launchChromium({ width, height });
  browsers.push(browser);
  const page = await browser.context.newPage();
  // A step that cannot happen fails with its locator named instead of waiting for the test's timeout.
  page.setDefaultTimeout(30_000);
  return page;
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

/** Signs in through the form, with a TOTP code when given. */
export async function signInWithForm(page: Page, url: string, name: string, code = ''): Promise<void> {
  await page.goto(`${url}/console/sign-in`);
  await page.getByLabel('Operator name').fill(name);
  await page.getByLabel('Password').fill(operatorPassword);
  if (code) await page.getByLabel(/Authenticator code/).fill(code);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState();
}
