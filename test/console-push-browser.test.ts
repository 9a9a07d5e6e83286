// Installations and push in real Chromium, at desktop and phone width: search installations, compose
// a push, see the devices it will reach, send it to the fake makers and read its per-route counts in
// the history and the record. Screenshots of each page go to test/artifacts/console/.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { skipBrowser as skip } from './helpers/chromium.ts';
import { makeOperator } from './helpers/console.ts';
import { ConsolePages, h1, shot } from './helpers/console-pages.ts';
import { closeMakers, startMakers, vendorSettings, type Makers } from './helpers/makers.ts';

let t: TestServer;
let makers: Makers;
let pages: ConsolePages;

before(async () => {
  if (skip) return;
  makers = await startMakers();
  t = await startServer({ env: { PUSH_PAGE_SIZE: '10' } });
  pages = new ConsolePages(t.url);
  await makeOperator(t.services.operators, 'ada', 'admin');
  const on = await t.master.put('/1.1/settings', { commercial: true, mixedPush: true, vendors: vendorSettings(makers) });
  assert.equal(on.status, 200, on.text);
  // Each width pushes to devices of its own (a push marks the dead token invalid for the next).
  const devices: Array<Record<string, unknown>> = [
    { installationId: 'own-1', channels: ['sport'] },
    { installationId: 'gone-1', vendor: 'mi', registrationId: 'tok-gone', valid: false, channels: ['sport'] },
  ];
  for (const label of ['desktop', 'phone']) {
    devices.push(
      { installationId: `mi-1-${label}`, vendor: 'mi', registrationId: `tok-mi-1-${label}`, channels: [`news-${label}`] },
      { installationId: `mi-2-${label}`, vendor: 'mi', registrationId: `tok-dead-${label}`, channels: [`news-${label}`] },
      { installationId: `oppo-1-${label}`, vendor: 'oppo', registrationId: `tok-oppo-1-${label}`, channels: [`news-${label}`] },
    );
    makers.mi.invalidTokens.add(`tok-dead-${label}`);
  }
  for (const device of devices) assert.equal((await t.master.post('/1.1/installations', { deviceType: 'android', ...device })).status, 201);
});
after(async () => {
  await pages?.close();
  await t?.close();
  await closeMakers(makers);
});

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]] as const) {
  test(`${label}: installations, then a push to the fake makers with its counts in the history`, { skip }, async () => {
    const page = await pages.signedIn('ada', width, height);
    await page.goto(`${t.url}/console/apps/${t.appId}/installations`);
    assert.equal(await h1(page), 'Installations');
    const invalid = (await t.master.get('/1.1/installations', { query: { where: { valid: false }, count: 1, limit: 0 } })).body.count;
    assert.equal(await page.getByRole('list', { name: 'Installations per state' }).textContent(), `${8 - invalid}valid${invalid}invalid tokens`);
    await page.getByLabel('Search by').selectOption('channel');
    await page.getByLabel('Value').fill('sport');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForLoadState();
    assert.equal(await page.locator('tbody tr').count(), 2);
    await shot(page, `${label}-installations`);

    await page.getByRole('link', { name: 'Push', exact: true }).click();
    await page.waitForLoadState();
    assert.equal(await h1(page), 'Send a push');
    await page.getByLabel('Channels', { exact: true }).check();
    await page.getByLabel('Channels (comma-separated)').fill(`news-${label}`);
    await page.getByLabel('Alert').fill(`Hello from ${label}`);
    await page.getByLabel('Badge').fill('Increment');
    await shot(page, `${label}-push-compose`);
    await page.getByRole('button', { name: 'Check reach' }).click();
    await page.waitForLoadState();
    assert.match((await page.getByRole('status').textContent()) ?? '', /This push will reach 3 devices\./);
    await shot(page, `${label}-push-review`);
    await page.getByRole('button', { name: 'Send to 3 devices' }).click();
    await page.waitForURL(/\/push\?sent=/);
    await t.services.push.drain();
    await page.reload();
    const row = page.locator('tbody tr', { hasText: `Hello from ${label}` });
    assert.match((await row.textContent()) ?? '', /mi 1 sent, 0 failed, 1 invalid/);
    assert.equal(await row.locator('td[data-label="Devices"]').textContent(), '3');
    assert.equal(await row.locator('td[data-label="Invalid tokens"]').textContent(), '1');
    await shot(page, `${label}-push-history`);
    await row.getByRole('link').click();
    await page.waitForLoadState();
    assert.match((await page.locator('table').textContent()) ?? '', /oppo\s*1\s*1\s*0\s*0/);
    await shot(page, `${label}-push-record`);
  });
}
