// The console's security over HTTP (docs/console.md): nothing answers without an operator's session,
// a viewer changes nothing, every change needs the CSRF token and the same origin, the cookie's flags,
// the sign-in lockout, sign-out, and the audit log. On the store this run selects.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { ConsoleClient, makeOperator, operatorPassword } from './helpers/console.ts';

let t: TestServer;
const clock = new ManualClock();

before(async () => {
  t = await startServer({ clock });
  await makeOperator(t.services.operators, 'ada', 'admin');
  await makeOperator(t.services.operators, 'vic', 'viewer');
});
after(async () => t?.close());

const signedIn = async (name: string) => {
  const c = new ConsoleClient(t.url);
  assert.equal((await c.signIn(name)).status, 200);
  return c;
};

test('without a session no page or API answers: pages redirect to sign-in, the API is 401', async () => {
  const c = new ConsoleClient(t.url);
  for (const path of ['/console', '/console/apps', '/console/operators', '/console/audit']) {
    const res = await c.request('GET', path);
    assert.equal(res.status, 303, path);
    assert.equal(res.headers.get('location'), '/console/sign-in');
  }
  for (const [method, path] of [['GET', '/console/api/apps'], ['GET', '/console/api/operators'], ['GET', '/console/api/audit'], ['GET', '/console/api/session'], ['POST', '/console/api/apps'], ['POST', '/console/api/sign-out'], ['POST', '/console/apps']]) {
    const res = await c.request(method, path, method === 'GET' ? {} : { json: {} });
    assert.equal(res.status, 401, `${method} ${path}`);
    // Not a browser (no Accept: text/html, no form): the API's {code, error}, pages included.
    assert.deepEqual(res.body, { code: 401, error: 'Sign in to the console first.' });
  }
  // A made-up cookie is no session.
  c.cookie = 'roost_console=' + 'x'.repeat(43);
  assert.equal((await c.request('GET', '/console/api/apps')).status, 401);
  const page = await c.request('GET', '/console/sign-in');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
});

test('the session cookie is HttpOnly, SameSite=Strict, scoped to /console, and Secure behind https', async () => {
  const c = await signedIn('ada');
  assert.match(c.setCookie, /^roost_console=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  assert.deepEqual((await c.request('GET', '/console/api/session')).body, {
    operator: { name: 'ada', role: 'admin', createdAt: new Date(clock.now()).toISOString() },
    csrfToken: c.csrf,
  });
  const https = new ConsoleClient(t.url);
  await https.request('POST', '/console/api/sign-in', { json: { name: 'ada', password: operatorPassword }, headers: { 'x-forwarded-proto': 'https' } });
  assert.match(https.setCookie, /; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
  // The token is not what the database keeps, and no log line holds it.
  const token = c.cookie.split('=')[1];
  assert.ok(!t.logs.join('').includes(token));
  clock.advance(12 * 3600_000);
  assert.equal((await c.request('GET', '/console/api/apps')).status, 401, 'a session ends after 12 hours');
});

test('the apps list shows id, name and creation to any operator, and no key', async () => {
  for (const name of ['ada', 'vic']) {
    const c = await signedIn(name);
    const res = await c.request('GET', '/console/api/apps');
    assert.equal(res.status, 200);
    const app = res.body.results.find((a: { appId: string }) => a.appId === t.appId);
    assert.deepEqual(Object.keys(app), ['appId', 'name', 'createdAt']);
    assert.equal(app.name, 'test');
    const page = await c.request('GET', '/console/apps');
    assert.equal(page.status, 200);
    assert.ok(page.text.includes(t.appId));
    for (const text of [res.text, page.text]) {
      assert.ok(!text.includes(t.masterKey) && !text.includes(t.appKey), 'no key in the list');
    }
    assert.equal(page.text.includes('New application'), name === 'ada', 'only an admin is offered the create form');
  }
});

test('every change needs the session CSRF token and the same origin', async () => {
  const c = await signedIn('ada');
  const forbidden = (error: string) => ({ code: 403, error });
  const csrf = 'The CSRF token is missing or wrong: reload the page.';
  assert.deepEqual((await c.request('POST', '/console/api/apps', { json: { name: 'x' } })).body, forbidden(csrf));
  const wrong = await c.request('POST', '/console/api/apps', { json: { name: 'x' }, headers: { 'x-csrf-token': 'a'.repeat(64) } });
  assert.equal(wrong.status, 403);
  assert.deepEqual(wrong.body, forbidden(csrf));
  // Another session's token is no good either.
  const other = await signedIn('ada');
  assert.equal((await c.request('POST', '/console/api/apps', { json: { name: 'x' }, headers: { 'x-csrf-token': other.csrf } })).status, 403);
  const elsewhere = await c.request('POST', '/console/api/apps', { json: { name: 'x' }, headers: { 'x-csrf-token': c.csrf, origin: 'https://evil.example' } });
  assert.deepEqual([elsewhere.status, elsewhere.body], [403, forbidden('The request did not come from the console.')]);
  const crossSite = await c.request('POST', '/console/sign-out', { form: { _csrf: c.csrf }, headers: { 'sec-fetch-site': 'cross-site' } });
  assert.equal(crossSite.status, 403);
  // A form post from the console's own page (its origin, the token as a field) passes.
  const form = await c.request('POST', '/console/apps', { form: { _csrf: c.csrf, name: 'From the form' }, headers: { origin: t.url } });
  assert.equal(form.status, 201);
  assert.match(form.text, /Application From the form created/);
  const created = await c.change('POST', '/console/api/apps', { name: 'Made by ada' });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), ['appId', 'appKey', 'masterKey', 'name']);
  assert.equal((await t.services.registry.get(created.body.appId))?.name, 'Made by ada');
  assert.deepEqual((await c.change('POST', '/console/api/apps', { name: '' })).body, { code: 113, error: 'An application needs a name of 1 to 100 characters.' });
  const audit = (await c.request('GET', '/console/api/audit')).body.results;
  assert.deepEqual(
    { actor: audit[0].actor, action: audit[0].action, target: audit[0].target, detail: audit[0].detail },
    { actor: 'ada', action: 'app.create', target: created.body.appId, detail: { name: 'Made by ada' } },
  );
  assert.ok(!JSON.stringify(audit).includes(created.body.masterKey), 'no secret in the audit log');
});

test('a viewer cannot change anything, even with its CSRF token', async () => {
  const c = await signedIn('vic');
  const res = await c.change('POST', '/console/api/apps', { name: 'by a viewer' });
  assert.deepEqual([res.status, res.body], [403, { code: 403, error: 'A viewer cannot change anything.' }]);
  const form = await c.request('POST', '/console/apps', { form: { _csrf: c.csrf, name: 'by a viewer' } });
  assert.equal(form.status, 403);
  assert.ok(!(await t.services.registry.list()).some((app) => app.name === 'by a viewer'));
  assert.equal((await c.change('POST', '/console/api/sign-out')).status, 200, 'a viewer signs out');
});

test('sign-out ends the session and clears the cookie', async () => {
  const c = await signedIn('ada');
  const kept = c.cookie;
  const out = await c.request('POST', '/console/sign-out', { form: { _csrf: c.csrf } });
  assert.equal(out.status, 303);
  assert.equal(out.headers.get('location'), '/console/sign-in');
  assert.match(c.setCookie, /^roost_console=; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=0$/);
  c.cookie = kept;
  assert.equal((await c.request('GET', '/console/api/apps')).status, 401, 'the old cookie is no session');
});

test('wrong passwords lock the operator after five; the lock ends after 15 minutes or with a new password', async () => {
  await makeOperator(t.services.operators, 'lou', 'admin');
  const c = new ConsoleClient(t.url);
  const wrong = { code: 401, error: 'The name or the password is wrong.' };
  assert.deepEqual((await c.signIn('nobody')).body, wrong, 'an unknown name answers as a wrong password');
  for (let i = 0; i < 4; i++) assert.deepEqual((await c.signIn('lou', 'not the password')).body, wrong);
  const locked = { code: 429, error: 'Too many failed sign-ins: this operator is locked for a while.' };
  const fifth = await c.signIn('lou', 'not the password');
  assert.deepEqual([fifth.status, fifth.body], [429, locked]);
  assert.deepEqual((await c.signIn('lou')).body, locked, 'the right password is refused while locked');
  const page = await c.request('POST', '/console/sign-in', { form: { name: 'lou', password: operatorPassword } });
  assert.equal(page.status, 429);
  assert.match(page.text, /role="alert">Too many failed sign-ins/);
  clock.advance(15 * 60_000);
  assert.equal((await c.signIn('lou')).status, 200, 'the lock ends');
  for (let i = 0; i < 5; i++) await c.signIn('lou', 'not the password');
  assert.equal((await c.signIn('lou')).status, 429);
  assert.equal(await t.services.operators.setPassword('test', 'lou', 'a brand new password'), 'done');
  assert.equal((await c.signIn('lou', 'a brand new password')).status, 200, 'a new password lifts the lock');
  const actions = (await c.request('GET', '/console/api/audit')).body.results.map((e: { action: string; target: string }) => `${e.action} ${e.target}`);
  assert.ok(actions.includes('operator.locked lou'));
  assert.ok(actions.includes('operator.passwd lou'));
});

test('the sign-in form: a wrong password shows the form again, the right one opens the apps page', async () => {
  const c = new ConsoleClient(t.url);
  const bad = await c.request('POST', '/console/sign-in', { form: { name: 'vic', password: 'nope' } });
  assert.equal(bad.status, 401);
  assert.match(bad.text, /role="alert">The name or the password is wrong\./);
  assert.match(bad.text, /value="vic"/);
  const good = await c.request('POST', '/console/sign-in', { form: { name: 'vic', password: operatorPassword } });
  assert.equal(good.status, 303);
  assert.equal(good.headers.get('location'), '/console/apps');
  assert.equal((await c.request('GET', '/console/sign-in')).status, 303, 'signed in: the sign-in page sends on to the apps');
  const apps = await c.request('GET', '/console/apps');
  assert.equal(apps.status, 200);
  assert.match(apps.text, /vic \(viewer\)/);
});

test('the operators list: names, roles and creation, never a hash', async () => {
  const c = await signedIn('vic');
  const res = await c.request('GET', '/console/api/operators');
  assert.equal(res.status, 200);
  const vic = res.body.results.find((o: { name: string }) => o.name === 'vic');
  assert.deepEqual(Object.keys(vic), ['name', 'role', 'totp', 'createdAt']);
  assert.equal(vic.role, 'viewer');
  const page = await c.request('GET', '/console/operators');
  assert.equal(page.status, 200);
  assert.match(page.text, /<td data-label="Name">ada<\/td><td data-label="Role">admin<\/td>/);
  assert.ok(![res.text, page.text].some((text) => text.includes('$argon2')));
});
