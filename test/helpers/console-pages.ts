// What the console's browser tests share: a signed-in Chromium page at a width, and screenshots.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { artifacts, launchChromium, type Browser } from './chromium.ts';
import { operatorPassword } from './console.ts';

export const shots = join(artifacts, 'console');

export class ConsolePages {
  private readonly browsers: Browser[] = [];
  readonly url: string;

  constructor(url: string) {
    this.url = url;
    mkdirSync(shots, { recursive: true });
  }

  /** A page of a fresh browser, signed in as `name` through the sign-in form. */
  async signedIn(name: string, width: number, height: number): Promise<Page> {
    const browser = await launchChromium({ width, height });
    this.browsers.push(browser);
    const page = await browser.context.newPage();
    // A missing element fails in seconds, not the 30 s default, so a failure leaves the rest time to run.
    page.setDefaultTimeout(8000);
    await page.goto(`${this.url}/console/sign-in`);
    await page.getByLabel('Operator name').fill(name);
    await page.getByLabel('Password').fill(operatorPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${this.url}/console/apps`);
    return page;
  }

  async close(): Promise<void> {
    for (const browser of this.browsers) await browser.close();
  }
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

export const h1 = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
