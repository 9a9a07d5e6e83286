// The overview in real Chromium (docs/console.md, "Overview"): a viewer opens it from the header, sees
// four charts drawn as inline SVG with their legends, and switches the window with the keyboard; at
// 1280 and 390 px. Six hours of history are written into the buckets as nodes would have flushed them.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { skipBrowser as skip } from './helpers/chromium.ts';
import { makeOperator } from './helpers/console.ts';
import { ConsolePages, h1, shot } from './helpers/console-pages.ts';
import type { StatCount } from '../src/storage/stats-store.ts';

let t: TestServer;
let pages: ConsolePages;

before(async () => {
  if (skip) return;
  t = await startServer();
  pages = new ConsolePages(t.url);
  await makeOperator(t.services.operators, 'vic', 'viewer');
  const now = t.clock.now();
  const minute = now - (now % 60_000);
  const counts: StatCount[] = [];
  const routes = ['GET /1.1/classes/:className', 'POST /1.1/classes/:className', 'GET /1.1/users/me', 'POST /1.1/login', 'PUT /1.1/classes/:className/:objectId', 'POST /1.1/installations', 'GET /1.1/date', 'POST /1.1/push'];
  for (let i = 1; i < 6 * 60; i++) {
    const at = minute - i * 60_000;
    // A day's shape: busier towards now, a dip two hours ago, an error burst at four hours.
    const load = Math.round(40 + 30 * Math.sin(i / 40) + (i > 110 && i < 130 ? -30 : 0));
    routes.forEach((route, r) => counts.push({ at, app: t.appId, kind: 'request', label: route, n: Math.max(0, Math.round(load / (r + 1))) }));
    if (i > 235 && i < 250) counts.push({ at, app: t.appId, kind: 'error', label: 'POST /1.1/login', n: 12 });
    if (i % 7 === 0) counts.push({ at, app: t.appId, kind: 'error', label: 'GET /1.1/classes/:className/:objectId', n: 2 });
    counts.push({ at, app: 'none', kind: 'login', label: 'success', n: 3 + (i % 4) });
    if (i > 235 && i < 250) counts.push({ at, app: 'none', kind: 'login', label: 'failure', n: 12 }, { at, app: 'none', kind: 'lockout', label: 'lockout', n: 1 });
    if (i % 30 === 0) {
      counts.push({ at, app: 'none', kind: 'push', label: 'channel', n: 400 }, { at, app: 'none', kind: 'push', label: 'mi', n: 250 }, { at, app: 'none', kind: 'push', label: 'hms', n: 120 });
      counts.push({ at, app: 'none', kind: 'pushFailed', label: 'mi', n: 15 });
    }
  }
  await t.store.stats.add(counts);
  // And some real traffic in the current minute.
  for (let i = 0; i < 5; i++) await t.master.get('/1.1/classes/Thing');
});
after(async () => {
  await pages?.close();
  await t?.close();
});

for (const [label, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]] as const) {
  test(`${label}: a viewer reads the overview's charts and changes the window`, { skip }, async () => {
    const page = await pages.signedIn('vic', width, height);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.waitForURL(`${t.url}/console/overview`);
    assert.equal(await h1(page), 'Overview');
    const charts = page.getByRole('img');
    assert.equal(await charts.count(), 4);
    assert.match((await charts.first().getAttribute('aria-label')) ?? '', /^Requests by route: [\d,]+ requests in all, at most [\d,]+ at \d\d:\d\d\.$/);
    assert.match((await page.locator('#requests ul.legend').textContent()) ?? '', /GET \/1\.1\/classes\/:className/);
    assert.match((await page.locator('#logins ul.legend').textContent()) ?? '', /lockouts\s*14/);
    assert.match((await page.locator('#pushes ul.legend').textContent()) ?? '', /channel\s*4,400/);
    // The plot fills its figure's width at either size (two columns at 1280 px, one at 390).
    const box = await page.locator('#requests svg[role=img]').boundingBox();
    const figure = await page.locator('#requests').boundingBox();
    assert.ok(box && figure && box.width > figure.width * 0.85 && figure.width > (width > 800 ? 400 : 300), `plot ${box?.width} of ${figure?.width}`);
    await shot(page, `${label}-overview`);

    // The window links are reachable with the keyboard.
    await page.getByRole('link', { name: 'Last 7 days' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${t.url}/console/overview?range=7d`);
    assert.equal(await page.getByRole('link', { name: 'Last 7 days' }).getAttribute('aria-current'), 'page');
    assert.match((await charts.first().getAttribute('aria-label')) ?? '', /at \d\d-\d\d \d\dh\.$/);
    await shot(page, `${label}-overview-7d`);
  });
}
