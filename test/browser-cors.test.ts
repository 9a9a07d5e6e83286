// A web page on another origin calls Roost through the LeanCloud SDK's browser build, in real Chromium
// (playwright-core driving Debian's chromium), as a blog's comment widget does (#15 point 8): sign up,
// save, update (PUT) and delete (DELETE), each behind a CORS preflight. Then the app's web security
// domains leave the page's origin out and the SDK sees the 403. Screenshot: test/artifacts/browser-cors.png.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startServer, type TestServer } from './helpers/harness.ts';
import { artifacts, launchChromium, skipBrowser as skip, type Browser } from './helpers/chromium.ts';

// Two names the browser resolves to this machine: the blog's pages and Roost are different sites, and
// neither is localhost (which the domain list always allows).
const blogHost = 'blog.example';
const apiHost = 'api.example';

let server: TestServer;
let pages: Server;
let browser: Browser;
let page: Page;
let blogOrigin: string;
let apiUrl: string;

const sdk = readFileSync(join('node_modules', 'leancloud-storage', 'dist', 'av-min.js'));

const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>Comments</title>
<style>body{font:14px sans-serif;margin:20px} pre{background:#f4f4f4;padding:8px;white-space:pre-wrap}</style>
<script src="/av-min.js"></script></head>
<body><h1>A blog post</h1><p>Comments below are stored through the LeanCloud SDK.</p><pre id="log">(nothing yet)</pre></body></html>`;

function servePages(): Promise<Server> {
  const pageServer = createServer((request, response) => {
    if (request.url === '/av-min.js') {
      response.writeHead(200, { 'Content-Type': 'application/javascript' }).end(sdk);
    } else if (request.url === '/') {
      response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    } else {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => pageServer.listen(0, '127.0.0.1', () => resolve(pageServer)));
}

before(async () => {
  if (skip) return;
  server = await startServer();
  pages = await servePages();
  const pagePort = (pages.address() as { port: number }).port;
  blogOrigin = `http://${blogHost}:${pagePort}`;
  apiUrl = `http://${apiHost}:${new URL(server.url).port}`;
  browser = await launchChromium({ width: 900, height: 700, args: [`--host-resolver-rules=MAP ${blogHost} 127.0.0.1, MAP ${apiHost} 127.0.0.1`] });
  page = await browser.context.newPage();
  const response = await page.goto(`${blogOrigin}/`);
  assert.equal(response?.status(), 200);
  await page.evaluate(
    ({ appId, appKey, serverURL }) => {
      const AV = (window as any).AV;
      AV.init({ appId, appKey, serverURL, production: true });
    },
    { appId: server.appId, appKey: server.appKey, serverURL: apiUrl },
  );
});
after(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await server?.close();
});

/** What the page did, added to it for the screenshot. */
async function show(lines: string[]): Promise<void> {
  await page.evaluate((text) => {
    const log = document.getElementById('log')!;
    log.textContent = log.textContent === '(nothing yet)' ? text : `${log.textContent}\n\n${text}`;
  }, lines.join('\n'));
}

/** The request lines Roost logged since `from`: method, path, status. */
function requestsSince(from: number): string[] {
  return server.logs
    .slice(from)
    .flatMap((chunk) => chunk.split('\n').filter(Boolean))
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.msg === 'request')
    .map((entry) => `${entry.method} ${entry.url} ${entry.status}`);
}

test('the SDK in a page on another origin signs up, saves, updates and deletes; a preflight answer is reused', { skip }, async () => {
  const logFrom = server.logs.length;
  const result = await page.evaluate(async () => {
    const AV = (window as any).AV;
    const user = await AV.User.signUp(`reader${Date.now()}`, 'secret-password');
    const comment = new AV.Object('Comment');
    comment.set('text', 'Nice post!');
    comment.set('views', 1);
    await comment.save();
    comment.increment('views', 1);
    await comment.save(null, { fetchWhenSave: true });
    (window as any).comment = comment;
    return { user: user.getUsername(), id: comment.id as string, views: comment.get('views') as number };
  });
  assert.match(result.id, /^[0-9a-zA-Z]+$/);
  assert.equal(result.views, 2);
  const path = `/1.1/classes/Comment/${result.id}`;
  // Two plain updates go to the same URL: the browser asks once and keeps the answer (max-age). The SDK
  // sends its DELETE without the PUTs' trailing "?", another URL to the browser's cache, so it asks again.
  const cachedFrom = server.logs.length;
  const later = await page.evaluate(async () => {
    const AV = (window as any).AV;
    const comment = (window as any).comment;
    comment.set('text', 'Edited once');
    await comment.save();
    comment.set('text', 'Edited twice');
    await comment.save();
    await comment.destroy();
    let afterDelete = 'found';
    try {
      await new AV.Query('Comment').get(comment.id);
    } catch (error: any) {
      afterDelete = `${error.code}`;
    }
    return { afterDelete, serverDate: (await AV.Cloud.getServerDate()).toISOString() as string };
  });
  assert.equal(later.afterDelete, '101');
  assert.ok(Math.abs(Date.parse(later.serverDate) - Date.now()) < 60_000, later.serverDate);
  const cached = requestsSince(cachedFrom);
  assert.deepEqual(cached.slice(0, 5), [`OPTIONS ${path} 204`, `PUT ${path} 200`, `PUT ${path} 200`, `OPTIONS ${path} 204`, `DELETE ${path} 200`]);
  const requests = requestsSince(logFrom);
  // Each request was preflighted (the SDK sends X-LC-* headers and JSON), then answered.
  for (const expected of [
    'OPTIONS /1.1/users 204',
    'POST /1.1/users 201',
    'OPTIONS /1.1/classes/Comment 204',
    'POST /1.1/classes/Comment 201',
    `OPTIONS ${path} 204`,
    `PUT ${path} 200`,
    `DELETE ${path} 200`,
    `GET ${path} 404`,
    'OPTIONS /1.1/date 204',
    'GET /1.1/date 200',
  ]) {
    assert.ok(requests.includes(expected), `${expected} in\n${requests.join('\n')}`);
  }
  assert.equal((await server.master.get(path)).status, 404);
  await show([`page origin ${blogOrigin}, Roost at ${apiUrl}`, `signed up ${result.user}`, `saved, updated (views ${result.views}), edited twice and deleted Comment ${result.id}`, ...requests]);
});

test('with web security domains that leave the page out, the SDK sees the 403; listing the page lets it in again', { skip }, async () => {
  assert.equal((await server.master.put('/1.1/settings', { webSecurityDomains: [`https://${blogHost}`, 'https://shop.example'] })).status, 200);
  const save = () =>
    page.evaluate(async () => {
      const AV = (window as any).AV;
      const comment = new AV.Object('Comment');
      try {
        await comment.save({ text: 'from the blog' });
        return { saved: comment.id as string };
      } catch (error: any) {
        return { code: error.code as number, message: error.message as string };
      }
    });
  const refused = await save();
  const expected = `Access denied by api domain white list.The request origin header is '${blogOrigin}'.`;
  assert.deepEqual(refused, { code: 403, message: `${expected} [403 POST ${apiUrl}/1.1/classes/Comment]` });
  await show([`page origin ${blogOrigin}`, 'webSecurityDomains: https://blog.example, https://shop.example', `save() → AVError ${refused.code}: ${refused.message}`]);
  await page.screenshot({ path: join(artifacts, 'browser-cors.png'), fullPage: true });

  assert.equal((await server.master.put('/1.1/settings', { webSecurityDomains: [blogOrigin] })).status, 200);
  const allowed = await save();
  assert.ok('saved' in allowed && typeof allowed.saved === 'string', JSON.stringify(allowed));
  await server.master.put('/1.1/settings', { webSecurityDomains: null });
});
