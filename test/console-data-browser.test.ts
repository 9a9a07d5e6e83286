// The data browser in real Chromium (playwright-core driving Debian's chromium), at desktop and phone
// width: browse a class, page, filter (and a bad where), open and edit an object, delete it after the
// confirmation, export, create an index. Screenshots of each page go to test/artifacts/console/.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startServer, type TestServer } from './helpers/harness.ts';
import { skipBrowser as skip } from './helpers/chromium.ts';
import { makeOperator } from './helpers/console.ts';
import { ConsolePages, h1, shot } from './helpers/console-pages.ts';

let t: TestServer;
let pages: ConsolePages;

before(async () => {
  if (skip) return;
  t = await startServer();
  pages = new ConsolePages(t.url);
  await makeOperator(t.services.operators, 'ada', 'admin');
  for (let i = 0; i < 120; i += 20) {
    const made = await Promise.all(Array.from({ length: 20 }, (_, j) =>
      t.master.post('/1.1/classes/Product', { name: `Product ${i + j}`, price: (i + j) * 5, tags: ['shop', `t${(i + j) % 3}`], owner: { __type: 'Pointer', className: '_User', objectId: 'u1' } })));
    for (const res of made) assert.equal(res.status, 201, res.text);
  }
  await t.master.post('/1.1/classes/Review', { stars: 5, text: 'Great' });
});
after(async () => {
  await pages?.close();
  await t?.close();
});

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]] as const) {
  test(`${label}: browse a class, filter, edit an object, delete it, export`, { skip }, async () => {
    const page = await pages.signedIn('ada', width, height);
    await page.goto(`${t.url}/console/apps/${t.appId}/data`);
    assert.equal(await h1(page), 'Classes');
    assert.match((await page.locator('table').textContent()) ?? '', /Product\s*1(19|20)/, 'the desktop run deleted one');
    await shot(page, `${label}-data-classes`);

    await page.getByRole('link', { name: 'Product', exact: true }).click();
    assert.equal(await h1(page), 'Product');
    // A phone pages by 20 (50 stacked cards make a screenshot 13 000 px tall).
    const perPage = label === 'phone' ? 20 : 50;
    if (label === 'phone') {
      await page.getByLabel('Per page').selectOption('20');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForLoadState();
    }
    assert.equal(await page.locator('tbody tr').count(), perPage);
    await shot(page, `${label}-data-objects`);
    await page.getByRole('link', { name: 'Next page' }).click();
    await page.waitForLoadState();
    assert.equal(await page.locator('tbody tr').count(), perPage);

    await page.getByLabel('Field').fill('price');
    await page.getByLabel('Operator').selectOption('gte');
    await page.getByLabel('Value').fill('550');
    await page.getByLabel('Sort by').selectOption('price');
    await page.getByLabel('Order').selectOption('asc');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForLoadState();
    assert.match((await page.locator('main').textContent()) ?? '', /10 objects match\./);
    assert.match((await page.locator('tbody tr').first().textContent()) ?? '', /Product 110/);
    await shot(page, `${label}-data-filtered`);

    await page.locator('summary', { hasText: 'Raw where' }).click();
    await page.getByLabel('where', { exact: true }).fill('{"price": ');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForLoadState();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /^The where is not valid JSON/);
    await shot(page, `${label}-data-bad-where`);

    // Open the first object of the filtered list, edit a field and the ACL.
    await page.goto(`${t.url}/console/apps/${t.appId}/data/Product?field=price&op=eq&value=${label === 'desktop' ? 505 : 510}`);
    await page.locator('tbody a').first().click();
    await page.waitForLoadState();
    const objectUrl = page.url();
    assert.match((await page.locator('pre').textContent()) ?? '', /"price": 5(05|10)/);
    await shot(page, `${label}-data-object`);
    const fields = JSON.parse(await page.getByLabel('Fields (JSON)').inputValue());
    fields.price = 1;
    fields.note = `edited on ${label}`;
    await page.getByLabel('Fields (JSON)').fill(JSON.stringify(fields, null, 2));
    await page.getByLabel('ACL (JSON)').fill('{"*": {"read": true}}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(objectUrl);
    assert.match((await page.locator('pre').textContent()) ?? '', new RegExp(`"note": "edited on ${label}"`));
    assert.match((await page.locator('pre').textContent()) ?? '', /"ACL": \{\s*"\*": \{\s*"read": true/);

    await page.getByRole('button', { name: 'Delete this object…' }).click();
    await page.waitForLoadState();
    assert.match((await h1(page)) ?? '', /Delete 1 object of Product\?/);
    await shot(page, `${label}-data-delete-confirm`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL(`${t.url}/console/apps/${t.appId}/data/Product`);
    const objectId = objectUrl.split('/').pop();
    assert.deepEqual((await t.master.get(`/1.1/classes/Product/${objectId}`)).body, {});

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export JSON lines' }).click()]);
    assert.equal(download.suggestedFilename(), 'Product.jsonl');
    const lines = (await readFile((await download.path())!, 'utf8')).trim().split('\n');
    assert.ok(lines.length >= 118 && lines.length <= 119, `${lines.length} lines`);
    assert.ok(lines.every((line) => typeof JSON.parse(line).objectId === 'string'));

    await page.getByRole('link', { name: 'New object' }).click();
    await page.waitForLoadState();
    await shot(page, `${label}-data-new-object`);
    await page.goto(`${t.url}/console/apps/${t.appId}/data/Product/indexes`);
    await page.getByLabel('Name', { exact: true }).fill(`by_price_${label}`);
    await page.getByLabel('Keys (JSON)').fill('{"price": -1}');
    await page.getByRole('button', { name: 'Create index' }).click();
    await page.waitForLoadState();
    assert.match((await page.getByRole('status').textContent()) ?? '', new RegExp(`Index by_price_${label} created`));
    await shot(page, `${label}-data-indexes`);
  });
}
