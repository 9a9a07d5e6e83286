// Real Chromium for the browser tests: playwright-core driving Debian's chromium in a throwaway profile.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';
/** Where the browser tests leave their screenshots (ignored by git). */
export const artifacts = join('test', 'artifacts');
// CI installs chromium (.ci/run); elsewhere a machine without it skips the browser tests rather than failing.
export const skipBrowser: string | false = !existsSync(chromiumPath) && !process.env.CI ? `${chromiumPath} is not installed` : false;

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with its own profile; `args` add switches (e.g. --host-resolver-rules). */
export async function launchChromium(options: { width: number; height: number; args?: string[] }): Promise<Browser> {
  mkdirSync(artifacts, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'roost-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: options.width, height: options.height },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...(options.args ?? []),
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
