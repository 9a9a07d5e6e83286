// A person's path through the mailed links, in a real browser (playwright-core driving Debian's
// chromium): the verification page, and the reset form filled in and submitted. The new password
// then logs in through the API and the old one fails. Screenshots go to test/artifacts/.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { assertNoSecretsIn, knownPasswords, signUp } from './helpers/accounts.ts';
import { address, startMailServer, type MailTestServer } from './helpers/mail.ts';
import { linkIn, tokenOf } from './fakes/smtp-sink.ts';
import { artifacts, launchChromium, skipBrowser as skip, type Browser } from './helpers/chromium.ts';

let t: MailTestServer;
let browser: Browser;
let context: BrowserContext;
const tokens: string[] = [];

before(async () => {
  if (skip) return;
  t = await startMailServer();
  browser = await launchChromium({ width: 800, height: 720 });
  context = browser.context;
});
after(async () => {
  await browser?.close();
  if (t) assertNoSecretsIn(t.server.logs, tokens);
  await t?.close();
});

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

async function mailedLink(email: string, n = 1): Promise<string> {
  const link = linkIn(await t.sink.waitFor(email, n));
  tokens.push(tokenOf(link));
  return link;
}

test('the verification link opens a page that confirms the address', { skip }, async () => {
  await t.settings({ verifyEmailOnSignup: true });
  const email = address('verify');
  const user = await signUp(t.client, { email });
  const page = await context.newPage();
  // The mail as a mail program shows its HTML part.
  await page.setContent((await t.sink.waitFor(email)).html);
  await shot(page, 'mail-verify-email');
  const response = await page.goto(await mailedLink(email));
  assert.equal(response?.status(), 200);
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Email address confirmed');
  assert.match((await page.textContent('main')) ?? '', /test/);
  await shot(page, 'verify-email-success');
  const record = await t.master.get(`/1.1/users/${user.objectId}`);
  assert.equal(record.body.emailVerified, true);

  await page.goto(`${t.server.url}/1.1/verifyEmail/${'z'.repeat(32)}`);
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'This link cannot be used');
  await shot(page, 'verify-email-invalid');
  await page.close();
});

test('the reset link: fill in the form, submit, and the new password logs in', { skip }, async () => {
  await t.settings({ verifyEmailOnSignup: false });
  const email = address('reset');
  const user = await signUp(t.client, { email });
  const res = await t.client.post('/1.1/requestPasswordReset', { email });
  assert.equal(res.status, 200);
  const link = await mailedLink(email);

  const page = await context.newPage();
  await page.setContent(t.sink.to(email)[0].html);
  await shot(page, 'mail-password-reset');
  assert.equal((await page.goto(link))?.status(), 200);
  assert.equal(await page.title(), 'Choose a new password – test');
  await shot(page, 'reset-form');

  // Two different entries: the form comes back with the error, announced to screen readers.
  await page.getByLabel('New password', { exact: true }).fill('first-try-password');
  await page.getByLabel('Repeat the new password').fill('second-try-password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.waitForLoadState();
  assert.match((await page.getByRole('alert').textContent()) ?? '', /do not match/);
  await shot(page, 'reset-form-mismatch');

  const password = `browser-${Math.random().toString(36).slice(2, 10)}`;
  knownPasswords.add(password);
  await page.getByLabel('New password', { exact: true }).fill(password);
  await page.getByLabel('Repeat the new password').fill(password);
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.waitForLoadState();
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Password changed');
  await shot(page, 'reset-success');

  const fresh = await t.client.withSession(undefined).post('/1.1/login', { username: user.username, password });
  assert.equal(fresh.status, 200, fresh.text);
  const old = await t.client.withSession(undefined).post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(old.status, 400);
  assert.equal(old.body.code, 210);

  // The link is spent: opening it again shows why.
  await page.goto(link);
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'This link cannot be used');
  assert.match((await page.getByRole('alert').textContent()) ?? '', /already been used/);
  await shot(page, 'reset-link-used');
  await page.close();
});
