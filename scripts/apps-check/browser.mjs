// The browser apps, in Debian's Chromium through playwright-core: Valine's widget, the Hexo/NexT visitor counter
// and a leancloud-storage 4 counter talking to Roost with the app key, and Waline's client talking to Waline's server. The pages come from
// a site on another origin than Roost, so every call is a cross-origin one (CORS preflights included).
import { createServer } from 'node:http';
import { once } from 'node:events';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

function check(condition, message) {
  if (!condition) throw new Error(message);
}

// NexT's leancloud-visitors counter (themes/next source/js/third-party/statistics/lean-analytics.js), reduced to
// one page: find the page's record, increment it or create it, show the count.
const counterScript = `
const Counter = (method, url, data) => fetch(SERVER + '/1.1' + url, {
  method, headers: { 'X-LC-Id': APP_ID, 'X-LC-Key': APP_KEY, 'Content-Type': 'application/json' }, body: JSON.stringify(data),
});
const url = location.pathname;
Counter('get', '/classes/Counter?where=' + encodeURIComponent(JSON.stringify({ url })))
  .then((response) => response.json())
  .then(({ results, code, error }) => {
    if (code === 401) throw error;
    if (results && results.length > 0) {
      const record = results[0];
      return Counter('put', '/classes/Counter/' + record.objectId, { time: { __op: 'Increment', amount: 1 } })
        .then((response) => response.json())
        .then(({ time }) => (time === undefined ? record.time + 1 : time));
    }
    return Counter('post', '/classes/Counter', { title: document.title, url, time: 1 })
      .then((response) => response.json()).then(({ objectId }) => { if (!objectId) throw new Error('not created'); return 1; });
  })
  .then((time) => { document.querySelector('#count').textContent = String(time); })
  .catch((err) => { document.querySelector('#count').textContent = 'error: ' + err; });`;

function pages({ roostURL, walineURL, keys, appsDir }) {
  const lib = (path) => readFileSync(join(appsDir, 'node_modules', path));
  const config = `const SERVER = ${JSON.stringify(roostURL)}, APP_ID = ${JSON.stringify(keys.appId)}, APP_KEY = ${JSON.stringify(keys.appKey)};`;
  const html = (title, body) => `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
  return {
    '/Valine.min.js': ['text/javascript', lib('valine/dist/Valine.min.js')],
    '/av-min.js': ['text/javascript', lib('valine/node_modules/leancloud-storage/dist/av-min.js')],
    '/av4-min.js': ['text/javascript', lib('leancloud-storage/dist/av-min.js')],
    // The other common counter (blog themes' own scripts): leancloud-storage 4 in the page, a query, then an
    // Increment saved with fetchWhenSave so the answer carries the new count.
    '/posts/sdk-counted': ['text/html', html('SDK counted page', `<span id="count">…</span><script src="/av4-min.js"></script>
      <script>${config}
      AV.init({ appId: APP_ID, appKey: APP_KEY, serverURL: SERVER });
      const Counter = AV.Object.extend('PageView');
      new AV.Query('PageView').equalTo('url', location.pathname).first()
        .then((counter) => {
          if (!counter) {
            const acl = new AV.ACL(); acl.setPublicReadAccess(true); acl.setPublicWriteAccess(true);
            return new Counter({ url: location.pathname, views: 1 }).setACL(acl).save();
          }
          counter.increment('views');
          return counter.save(null, { fetchWhenSave: true });
        })
        .then((counter) => { document.querySelector('#count').textContent = String(counter.get('views')); })
        .catch((err) => { document.querySelector('#count').textContent = 'error: ' + err; });</script>`)],
    '/waline.umd.js': ['text/javascript', lib('@waline/client/dist/waline.umd.js')],
    '/waline.css': ['text/css', lib('@waline/client/dist/waline.css')],
    '/posts/valine': ['text/html', html('Valine page', `
      <span id="/posts/valine" class="leancloud_visitors" data-flag-title="Valine page"><em class="leancloud-visitors-count"></em></span>
      <div id="vcomments"></div><script src="/Valine.min.js"></script>
      <script>${config} new Valine({ el: '#vcomments', appId: APP_ID, appKey: APP_KEY, serverURLs: SERVER,
        path: '/posts/valine', visitor: true, recordIP: false, avatar: 'mp', pageSize: 2 });</script>`)],
    '/posts/counted': ['text/html', html('Counted page', `<span id="count">…</span><script>${config}${counterScript}</script>`)],
    // NexT's index page reads the counts of all its posts in one query.
    '/': ['text/html', html('Index', `<span id="counts">…</span><script>${config}
      fetch(SERVER + '/1.1/classes/Counter?where=' + encodeURIComponent(JSON.stringify({ url: { $in: ['/posts/counted', '/posts/valine'] } })),
        { headers: { 'X-LC-Id': APP_ID, 'X-LC-Key': APP_KEY, 'Content-Type': 'application/json' } })
        .then((response) => response.json())
        .then(({ results }) => { document.querySelector('#counts').textContent = results.map((r) => r.url + '=' + r.time).sort().join(' '); });</script>`)],
    '/posts/waline': ['text/html', html('Waline page', `<link rel="stylesheet" href="/waline.css"><div id="waline"></div>
      <script src="/waline.umd.js"></script>
      <script>Waline.init({ el: '#waline', serverURL: ${JSON.stringify(walineURL)}, path: '/posts/hello', lang: 'en', pageview: true, comment: true });</script>`)],
  };
}

export async function browserFlows({ flow: runFlow, roostURL, walineURL, keys, appsDir, work }) {
  const files = pages({ roostURL, walineURL, keys, appsDir });
  const site = createServer((req, res) => {
    const file = files[new URL(req.url, 'http://x').pathname];
    if (!file) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': file[0] });
    res.end(file[1]);
  });
  site.listen(0, '127.0.0.1');
  await once(site, 'listening');
  const origin = `http://127.0.0.1:${site.address().port}`;
  const profile = mkdtempSync(join(tmpdir(), 'roost-apps-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  const errors = [];
  context.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  // Valine loads leancloud-storage 3 from jsDelivr; the same file is served from the local install.
  await context.route(/cdn\.jsdelivr\.net\/npm\/leancloud-storage@3\/dist\/av-min\.js/, (route) =>
    route.fulfill({ contentType: 'text/javascript', body: files['/av-min.js'][1] }));
  // Anything else off the machine (avatars, emoji, IP lookup) is refused at once instead of timing out.
  await context.route((url) => !['127.0.0.1', 'cdn.jsdelivr.net'].includes(url.hostname), (route) => route.abort());
  const page = await context.newPage();
  page.setDefaultTimeout(15000);
  const open = async (path) => { await page.goto(`${origin}${path}`); };
  // A failing flow leaves a screenshot of the page in the work folder.
  let shots = 0;
  const flow = (name, body) => runFlow(name, () => body().catch(async (err) => {
    await page.screenshot({ path: join(work, `browser-${++shots}.png`), fullPage: true }).catch(() => {});
    for (const line of errors.splice(0)) console.log(`  browser console: ${line.slice(0, 200)}`);
    throw err;
  }));
  // Valine takes the editor's text 300 ms after the last input event (a debounce), then the click posts it.
  const typeComment = async (text) => {
    await page.fill('#vcomments textarea.veditor', text);
    await page.waitForTimeout(600);
    await page.click('#vcomments .vsubmit');
  };
  const cards = () => page.locator('#vcomments .vcard').count();

  try {
    await flow('valine: widget loads and counts the visit', async () => {
      await open('/posts/valine');
      await page.waitForSelector('#vcomments .vsubmit');
      await page.waitForFunction(() => document.querySelector('.leancloud-visitors-count')?.textContent === '1');
      await open('/posts/valine');
      await page.waitForFunction(() => document.querySelector('.leancloud-visitors-count')?.textContent === '2');
    });

    await flow('valine: post a comment, see it listed and counted', async () => {
      await page.fill('#vcomments input.vnick', 'Valine Visitor');
      await page.fill('#vcomments input.vmail', 'visitor@example.com');
      await typeComment('Hello from Valine');
      await page.waitForFunction(() => document.querySelector('#vcomments .vcard .vcontent')?.textContent.includes('Hello from Valine'));
      await open('/posts/valine');
      await page.waitForFunction(() => document.querySelectorAll('#vcomments .vcard').length === 1);
      const num = await page.locator('#vcomments .vnum').textContent();
      check(num.trim() === '1', `count shows ${num}`);
    });

    await flow('valine: reply is listed under its comment (CQL)', async () => {
      // Valine refuses a second comment within 20 s of the first (a time in localStorage).
      await page.evaluate(() => localStorage.clear());
      await page.click('#vcomments .vcard .vat');
      await page.fill('#vcomments input.vnick', 'Replier');
      await typeComment('A reply from Valine');
      await open('/posts/valine');
      await page.waitForFunction(() => document.querySelector('#vcomments .vcard .vquote .vcard .vcontent')?.textContent.includes('A reply from Valine'));
      check((await cards()) === 2, `${await cards()} cards`);
    });

    await flow('valine: more comments than a page, then "load more"', async () => {
      for (const text of ['Second root', 'Third root']) {
        await page.evaluate(() => localStorage.clear());
        await typeComment(text);
        await page.waitForFunction((t) => document.querySelector('#vcomments')?.textContent.includes(t), text);
      }
      await open('/posts/valine');
      const roots = () => page.locator('#vcomments .vcards > .vcard').count();
      await page.waitForFunction(() => document.querySelectorAll('#vcomments .vcards > .vcard').length === 2);
      check((await page.locator('#vcomments .vnum').textContent()).trim() === '3', 'count is not 3');
      await page.click('#vcomments .vmore');
      await page.waitForFunction(() => document.querySelectorAll('#vcomments .vcards > .vcard').length === 3);
      // The replies of the new page come from a second query (CQL) after the roots are shown.
      await page.waitForFunction(() => document.querySelectorAll('#vcomments .vcards > .vcard')[2].querySelector('.vquote .vcard'));
      const last = await page.locator('#vcomments .vcards > .vcard').nth(2).textContent();
      check(last.includes('Hello from Valine') && last.includes('A reply from Valine'), `last root ${last}, ${await roots()} roots`);
    });

    await flow('hexo/next counter: create, then increment', async () => {
      await open('/posts/counted');
      await page.waitForFunction(() => document.querySelector('#count').textContent !== '…');
      check((await page.locator('#count').textContent()) === '1', `first visit shows ${await page.locator('#count').textContent()}`);
      await open('/posts/counted');
      await page.waitForFunction(() => document.querySelector('#count').textContent !== '…');
      check((await page.locator('#count').textContent()) === '2', `second visit shows ${await page.locator('#count').textContent()}`);
      await open('/');
      await page.waitForFunction(() => document.querySelector('#counts').textContent !== '…');
      const counts = await page.locator('#counts').textContent();
      // The Valine page was opened five times by the flows above.
      check(counts === '/posts/counted=2 /posts/valine=5', `index shows ${counts}`);
    });

    await flow('leancloud-storage 4 counter: create, then Increment with fetchWhenSave', async () => {
      for (const expected of ['1', '2', '3']) {
        await open('/posts/sdk-counted');
        await page.waitForFunction(() => document.querySelector('#count').textContent !== '…');
        const shown = await page.locator('#count').textContent();
        check(shown === expected, `visit ${expected} shows ${shown}`);
      }
    });

    await flow('waline client: lists the comments and posts one', async () => {
      await open('/posts/waline');
      await page.waitForSelector('.wl-card .wl-content');
      const before = await page.locator('.wl-card-item').count();
      await page.fill('.wl-header input[name=nick]', 'Browser');
      await page.fill('.wl-header input[name=mail]', 'browser@example.com');
      await page.fill('.wl-editor', 'Hello from the Waline client');
      await page.click('.wl-btn.primary');
      await page.waitForFunction((n) => document.querySelectorAll('.wl-card-item').length > n, before);
      await open('/posts/waline');
      await page.waitForFunction(() => [...document.querySelectorAll('.wl-content')].some((e) => e.textContent.includes('Hello from the Waline client')));
    });
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    site.close();
  }
}
