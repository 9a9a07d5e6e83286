// The console's data browser over HTTP (docs/console.md): classes with counts, keyset pages, filters
// (bad JSON a clear 400), create, edit fields and ACL, delete with confirmation, export and import of
// JSON lines, indexes; a viewer reads but changes nothing; CSRF; every change in the audit log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, storeKind, type TestServer } from './helpers/harness.ts';
import { exactCountUpTo } from '../src/http/routes/console-data.ts';
import { adminAndViewer, type ConsoleClient } from './helpers/console.ts';

let t: TestServer;
let ada: ConsoleClient;
let vic: ConsoleClient;
const total = 130;

before(async () => {
  t = await startServer();
  ({ ada, vic } = await adminAndViewer(t.url, t.services.operators));
  for (let i = 0; i < total; i += 26) {
    const made = await Promise.all(Array.from({ length: 26 }, (_, j) => t.master.post('/1.1/classes/Score', { n: i + j, player: `p${(i + j) % 7}`, even: (i + j) % 2 === 0 })));
    for (const res of made) assert.equal(res.status, 201);
  }
});
after(async () => t?.close());

const base = () => `/console/apps/${t.appId}/data`;
const api = () => `/console/api/apps/${t.appId}/classes`;
const form = (c: ConsoleClient, path: string, fields: Record<string, string>) =>
  c.request('POST', path, { form: { _csrf: c.csrf, ...fields }, headers: { origin: t.url } });
const audit = async () => (await ada.request('GET', '/console/api/audit')).body.results as Array<{ actor: string; action: string; target: string; detail: any }>;

test('classes with their object counts, to any operator', async () => {
  const res = await vic.request('GET', api());
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.results.find((c: { name: string }) => c.name === 'Score'), { name: 'Score', count: total, countKind: 'exact' });
  const page = await vic.request('GET', base());
  assert.equal(page.status, 200);
  assert.match(page.text, /<a href="\/console\/apps\/[^"]+\/data\/Score">Score<\/a><\/td><td data-label="Objects" class="count">130<\/td>/);
  assert.ok(!page.text.includes('New class'), 'a viewer is offered no change');
  assert.equal((await vic.request('GET', '/console/api/apps/nope/classes')).status, 404);
});

test('keyset pages walk the whole class in order, with no object twice', async () => {
  for (const [sort, dir] of [['createdAt', 'desc'], ['n', 'asc'], ['player', 'desc'], ['objectId', 'asc']]) {
    const seen: number[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string> = { sort, dir, limit: '20' };
      if (next) query.after = next;
      const res = await vic.request('GET', `${api()}/Score?${new URLSearchParams(query)}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.count, total);
      seen.push(...res.body.results.map((o: { n: number }) => o.n));
      next = res.body.next;
      pages++;
    } while (next && pages < 20);
    assert.equal(seen.length, total, `${sort} ${dir}`);
    assert.equal(new Set(seen).size, total, `${sort} ${dir}: no object twice`);
    if (sort === 'n') assert.deepEqual(seen, [...seen].sort((a, b) => a - b));
  }
});

test('filters: field, operator and value; raw where; bad JSON is a 400 with a clear message', async () => {
  const q = (params: Record<string, string>) => vic.request('GET', `${api()}/Score?${new URLSearchParams(params)}`);
  assert.equal((await q({ field: 'n', op: 'gte', value: '100' })).body.count, 30);
  assert.equal((await q({ field: 'player', op: 'eq', value: 'p3' })).body.count, 19);
  assert.equal((await q({ field: 'player', op: 'starts', value: 'p' })).body.count, total);
  assert.equal((await q({ field: 'even', op: 'eq', value: 'true', where: '{"n": {"$lt": 10}}' })).body.count, 5);
  assert.equal((await q({ field: 'nothing', op: 'exists' })).body.count, 0);
  const bad = await q({ where: '{"n": ' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.code, 102);
  assert.match(bad.body.error, /^The where is not valid JSON: /);
  const refused = await q({ where: '{"n": {"$bogus": 1}}' });
  assert.equal(refused.status, 400, 'the API\'s own refusal');
  assert.equal(typeof refused.body.error, 'string');
  const page = await vic.request('GET', `${base()}/Score?where=%7Bnope`, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 400);
  assert.match(page.text, /role="alert">The where is not valid JSON/);
  assert.match(page.text, /<table>|No objects/);
  assert.equal((await vic.request('GET', `${api()}/Score?after=garbage`)).status, 400);
});

test('an admin creates, edits fields and ACL, and deletes with confirmation; each change audited', async () => {
  const created = await form(ada, `${base()}/Score/new`, { fields: '{"n": 1000, "player": "zed", "extra": [1, 2]}', acl: '' });
  assert.equal(created.status, 303);
  const objectPath = created.headers.get('location')!;
  const objectId = objectPath.split('/').pop()!;
  const stored = await t.master.get(`/1.1/classes/Score/${objectId}`);
  assert.equal(stored.body.player, 'zed');

  const page = await vic.request('GET', objectPath, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 200);
  assert.match(page.text, /&#34;player&#34;: &#34;zed&#34;/);
  assert.ok(!page.text.includes('name="fields"'), 'no edit form for a viewer');

  const badJson = await form(ada, objectPath, { fields: '{"n": ', acl: '{}' });
  assert.equal(badJson.status, 400);
  assert.match(badJson.text, /role="alert">The fields are not valid JSON/);
  const badAcl = await form(ada, objectPath, { fields: '{"n": 1}', acl: '{"*": {"read": "yes"}}' });
  assert.equal(badAcl.status, 400);
  assert.match(badAcl.text, /role="alert">Invalid ACL/);

  const edited = await form(ada, objectPath, { fields: '{"n": 1001, "player": "zed"}', acl: '{"*": {"read": true}}' });
  assert.equal(edited.status, 303);
  const after = await t.master.get(`/1.1/classes/Score/${objectId}`, { query: { returnACL: 'true' } });
  assert.equal(after.body.n, 1001);
  assert.equal(after.body.extra, undefined, 'a field left out is deleted');
  assert.deepEqual(after.body.ACL, { '*': { read: true } });

  const ask = await form(ada, `${base()}/Score/delete`, { [`o_${objectId}`]: '1' });
  assert.equal(ask.status, 200);
  assert.match(ask.text, /Delete 1 object of Score\?/);
  assert.equal((await t.master.get(`/1.1/classes/Score/${objectId}`)).status, 200, 'not deleted before the confirmation');
  const done = await form(ada, `${base()}/Score/delete`, { [`o_${objectId}`]: '1', confirm: 'yes' });
  assert.equal(done.status, 303);
  assert.deepEqual((await t.master.get(`/1.1/classes/Score/${objectId}`)).body, {}, 'gone (a class with objects answers a missing one with {})');

  const entries = (await audit()).filter((e) => e.target.includes(objectId) || e.detail?.objectIds?.includes(objectId));
  assert.deepEqual(entries.map((e) => `${e.actor} ${e.action}`).reverse(), ['ada object.create', 'ada object.update', 'ada object.delete']);
  assert.deepEqual(entries[0].detail, { objectIds: [objectId] });
});

test('a viewer changes nothing, and every change needs the CSRF token', async () => {
  const one = (await t.master.get('/1.1/classes/Score', { query: { limit: 1 } })).body.results[0];
  const path = `${base()}/Score/${one.objectId}`;
  for (const [c, fields] of [[vic, { _csrf: vic.csrf }], [ada, {}]] as const) {
    const tries = [
      c.request('POST', path, { form: { ...fields, fields: '{"n": -1}', acl: '' } }),
      c.request('POST', `${base()}/Score/new`, { form: { ...fields, fields: '{"n": -1}' } }),
      c.request('POST', `${base()}/Score/delete`, { form: { ...fields, [`o_${one.objectId}`]: '1', confirm: 'yes' } }),
      c.request('POST', `${base()}/Score/indexes`, { form: { ...fields, name: 'x', keys: '{"n": 1}' } }),
    ];
    for (const res of await Promise.all(tries)) {
      assert.equal(res.status, 403);
      assert.match(res.text, c === vic ? /A viewer cannot change anything/ : /The CSRF token is missing or wrong/);
    }
  }
  const still = await t.master.get(`/1.1/classes/Score/${one.objectId}`);
  assert.equal(still.body.n, one.n);
  assert.equal((await t.master.get('/1.1/classes/Score', { query: { where: { n: -1 }, count: 1, limit: 0 } })).body.count, 0);
});

test('export streams JSON lines that import takes back', async () => {
  const res = await vic.request('GET', `${base()}/Score/export`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="Score.jsonl"/);
  const lines = res.text.trim().split('\n').map((line) => JSON.parse(line));
  assert.equal(lines.length, total);
  assert.deepEqual(Object.keys(lines[0]).sort(), ['ACL', 'createdAt', 'even', 'n', 'objectId', 'player', 'updatedAt'].sort());

  // Into a new class: every line in, then again (the objectIds are there: skipped), then a bad line.
  const upload = (text: string) => {
    const body = new FormData();
    body.set('_csrf', ada.csrf);
    body.set('file', new Blob([text]), 'Score.jsonl');
    // As a browser posts the form: it asks for a page.
    return fetch(`${t.url}${base()}/Copy/import`, { method: 'POST', headers: { cookie: ada.cookie, origin: t.url, accept: 'text/html' }, body }).then(async (r) => ({ status: r.status, text: await r.text() }));
  };
  const first = await upload(res.text);
  assert.equal(first.status, 200, first.text);
  assert.match(first.text, /130 imported, 0 already there, 0 conflicts, 0 bad lines \(of 130\)/);
  const again = await upload(res.text.split('\n').slice(0, 3).join('\n') + '\nnot json\n');
  assert.match(again.text, /0 imported, 3 already there, 0 conflicts, 1 bad lines \(of 4\)/);
  assert.match(again.text, /not JSON/);
  assert.equal((await t.master.get('/1.1/classes/Copy', { query: { count: 1, limit: 0 } })).body.count, total);
  const entry = (await audit()).find((e) => e.action === 'class.import');
  assert.equal(entry?.target, `${t.appId}/Copy`);
  assert.equal(entry?.detail.bad, 1);

  const empty = await fetch(`${t.url}${base()}/Copy/import`, { method: 'POST', headers: { cookie: ada.cookie, origin: t.url, 'x-csrf-token': ada.csrf }, body: new FormData() });
  assert.equal(empty.status, 400);
  assert.deepEqual(await empty.json(), { code: 113, error: 'Choose a non-empty export file to import.' });
});

test('a class above 10,000 objects is counted approximately, and a filter on it only when asked', async () => {
  const lines = Array.from({ length: exactCountUpTo + 5 }, (_, i) => JSON.stringify({ objectId: `big${String(i).padStart(8, '0')}`, n: i, odd: i % 2 === 1 })).join('\n');
  const body = new FormData();
  body.set('file', new Blob([lines]), 'Big.jsonl');
  const imported = await fetch(`${t.url}${base()}/Big/import`, { method: 'POST', headers: { cookie: ada.cookie, origin: t.url, 'x-csrf-token': ada.csrf }, body });
  assert.equal(imported.status, 200);
  assert.equal((await imported.json()).inserted, exactCountUpTo + 5);
  // PostgreSQL answers the planner's estimate (the import refreshed the statistics); SQLite keeps none: "more than".
  const expected = storeKind === 'postgres' ? 'estimate' : 'atLeast';
  const big = (await vic.request('GET', api())).body.results.find((c: { name: string }) => c.name === 'Big');
  assert.equal(big.countKind, expected);
  if (expected === 'estimate') assert.ok(Math.abs(big.count - (exactCountUpTo + 5)) < 1000, `estimate ${big.count}`);
  else assert.equal(big.count, exactCountUpTo);
  const list = await vic.request('GET', base(), { headers: { accept: 'text/html' } });
  assert.match(list.text, expected === 'estimate'
    ? /data\/Big">Big<\/a><\/td><td data-label="Objects" class="count"><abbr title="estimated from the database's statistics">≈ [\d,]+<\/abbr><\/td>/
    : /data\/Big">Big<\/a><\/td><td data-label="Objects" class="count">more than 10,000<\/td>/);

  // The class's page: the same size; a filter is not counted unless asked, and then exactly.
  const page = await vic.request('GET', `${api()}/Big?limit=20`);
  assert.deepEqual([page.body.countKind, page.body.results.length], [expected, 20]);
  const filtered = await vic.request('GET', `${api()}/Big?field=odd&op=eq&value=true&limit=20`);
  assert.deepEqual([filtered.body.count, filtered.body.countKind, filtered.body.results.length], [null, null, 20]);
  const asked = await vic.request('GET', `${api()}/Big?field=odd&op=eq&value=true&limit=20&count=1`);
  assert.deepEqual([asked.body.count, asked.body.countKind], [Math.floor((exactCountUpTo + 5) / 2), 'exact']);
  const html = await vic.request('GET', `${base()}/Big?field=odd&op=eq&value=true`, { headers: { accept: 'text/html' } });
  assert.match(html.text, /<a href="[^"]+field=odd[^"]*&amp;count=1">Count the matches<\/a>/);
  assert.match((await vic.request('GET', `${base()}/Big?field=odd&op=eq&value=true&count=1`, { headers: { accept: 'text/html' } })).text, /5,002 objects match\./);
});

test('indexes: list, create, drop through the index API; audited', async () => {
  const created = await form(ada, `${base()}/Score/indexes`, { name: 'by_n', keys: '{"n": -1}' });
  assert.equal(created.status, 201, created.text);
  assert.match(created.text, /<code>by_n<\/code>/);
  assert.equal((await t.master.get('/1.1/indexes/Score')).body.results[0].name, 'by_n');
  const bad = await form(ada, `${base()}/Score/indexes`, { name: 'by_x', keys: '{"n": 2}' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /role="alert">The direction of &#39;n&#39; is 1 or -1\./);
  const list = await vic.request('GET', `${base()}/Score/indexes`, { headers: { accept: 'text/html' } });
  assert.match(list.text, /by_n/);
  assert.ok(!list.text.includes('Drop…'), 'a viewer is offered no drop');
  const ask = await form(ada, `${base()}/Score/indexes/by_n/drop`, {});
  assert.match(ask.text, /Drop the index by_n of Score\?/);
  const dropped = await form(ada, `${base()}/Score/indexes/by_n/drop`, { confirm: 'yes' });
  assert.equal(dropped.status, 200);
  assert.deepEqual((await t.master.get('/1.1/indexes/Score')).body.results, []);
  const actions = (await audit()).map((e) => `${e.action} ${e.target}`);
  assert.ok(actions.includes(`index.create ${t.appId}/Score/by_n`));
  assert.ok(actions.includes(`index.drop ${t.appId}/Score/by_n`));
});
