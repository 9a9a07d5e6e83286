// Password reset by mail (SPEC §4.1 row 14, §3.3) over HTTP with a real SMTP server on loopback:
// the mail and its link, the form page, single use under concurrency, expiry, session rotation, lockout.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoSecretsIn, knownPasswords, signUp, type SignedUpUser } from './helpers/accounts.ts';
import { address, startMailServer, type MailTestServer } from './helpers/mail.ts';
import { linkIn, tokenOf } from './fakes/smtp-sink.ts';

const hour = 60 * 60 * 1000;
let t: MailTestServer;
const tokens: string[] = [];

before(async () => {
  t = await startMailServer();
});
after(async () => {
  if (t) assertNoSecretsIn(t.server.logs, tokens);
  await t?.close();
});

function newPassword(label: string): string {
  const password = `new-${label}-${Math.random().toString(36).slice(2, 10)}`;
  knownPasswords.add(password);
  return password;
}

/** Signs up a user with an address and asks for a reset; returns the mailed link. */
async function userWithResetLink(): Promise<{ user: SignedUpUser; email: string; link: string }> {
  const email = address();
  const user = await signUp(t.client, { email });
  const link = await requestLink(email);
  return { user, email, link };
}

async function requestLink(email: string): Promise<string> {
  const before = t.sink.to(email).length;
  const res = await t.client.post('/1.1/requestPasswordReset', { email });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, {});
  const link = linkIn(await t.sink.waitFor(email, before + 1));
  tokens.push(tokenOf(link));
  return link;
}

async function submit(link: string, password: string) {
  const response = await fetch(link, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  });
  return { status: response.status, body: await response.json() };
}

async function submitForm(link: string, fields: Record<string, string>) {
  const response = await fetch(link, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

async function login(username: string, password: string) {
  return t.client.withSession(undefined).post('/1.1/login', { username, password });
}

describe('POST /1.1/requestPasswordReset', () => {
  test('mails a link to Roost\'s reset page; the mail names the application and the user', async () => {
    const email = address();
    const user = await signUp(t.client, { email });
    const link = await requestLink(email);
    assert.ok(link.startsWith(`${t.server.url}/1/resetPassword/`), link);
    const mail = t.sink.to(email)[0];
    assert.match(mail.subject, /Reset your test password/);
    assert.match(mail.text, new RegExp(user.username));
    assert.match(mail.text, /24 hours/);
    assert.ok(mail.html.includes(link));
  });

  test('errors: no user with that address 205, no address 204, a malformed one 125', async () => {
    const cases: Array<[unknown, number]> = [
      [{ email: address('nobody') }, 205],
      [{}, 204],
      [{ email: null }, 204],
      [{ email: 'nope' }, 125],
      ['text', 107],
    ];
    for (const [body, code] of cases) {
      const res = await t.client.post('/1.1/requestPasswordReset', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, code, JSON.stringify(body));
    }
  });

  test('a mail server that refuses the mail: 503, and the request can be repeated', async () => {
    const email = address();
    await signUp(t.client, { email });
    t.sink.refuse = true;
    try {
      const res = await t.client.post('/1.1/requestPasswordReset', { email });
      assert.equal(res.status, 503);
      assert.equal(res.body.code, 503);
    } finally {
      t.sink.refuse = false;
    }
    await requestLink(email);
  });

  // Regression: the hourly limit counted, then inserted, so requests at the same instant all passed the count.
  test('twenty requests at once: exactly five are mailed, the rest get 429', async () => {
    const email = address();
    await signUp(t.client, { email });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.client.post('/1.1/requestPasswordReset', { email })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [...Array(5).fill(200), ...Array(15).fill(429)], JSON.stringify(answers.map((a) => a.body)));
    for (const answer of answers.filter((a) => a.status === 429)) assert.equal(answer.body.code, 429);
    assert.equal(await t.sink.countAfterQuiet(email), 5);
  });
});

describe('the reset link', () => {
  test('opens a form page (the token is not used by looking)', async () => {
    const { user, link } = await userWithResetLink();
    for (let i = 0; i < 2; i++) {
      const response = await fetch(link, { headers: { accept: 'text/html' } });
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.match(html, /<p class="app">test<\/p>/);
      assert.match(html, /<form method="post">/);
      assert.match(html, /<label for="password">New password<\/label>/);
      assert.match(html, /autocomplete="new-password"/);
      assert.ok(html.includes(user.username));
      assert.doesNotMatch(html, /<script/i);
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
    }
  });

  test('sets the password once; the old session token is rejected afterwards (SPEC §3.3)', async () => {
    const { user, link } = await userWithResetLink();
    const password = newPassword('once');
    const res = await submit(link, password);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, {});

    const old = await login(user.username, user.password);
    assert.equal(old.status, 400);
    assert.equal(old.body.code, 210);
    const fresh = await login(user.username, password);
    assert.equal(fresh.status, 200);
    assert.notEqual(fresh.body.sessionToken, user.sessionToken);

    const stale = await user.client.put(`/1.1/users/${user.objectId}`, { nickname: 'x' });
    assert.equal(stale.status, 403);
    const me = await user.client.get('/1.1/users/me');
    assert.equal(me.status, 400);
    assert.equal(me.body.code, 211);
    const current = await t.client.withSession(fresh.body.sessionToken).put(`/1.1/users/${user.objectId}`, { nickname: 'y' });
    assert.equal(current.status, 200);

    const again = await submit(link, newPassword('again'));
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 1);
    assert.match(again.body.error, /already been used/);
    assert.equal((await login(user.username, password)).status, 200);
  });

  test('two (and five) concurrent submissions: exactly one succeeds', async () => {
    for (const n of [2, 5]) {
      const { user, link } = await userWithResetLink();
      const passwords = Array.from({ length: n }, (_, i) => newPassword(`race${i}`));
      const results = await Promise.all(passwords.map((password) => submit(link, password)));
      const winners = results.flatMap((r, i) => (r.status === 200 ? [passwords[i]] : []));
      assert.equal(winners.length, 1, JSON.stringify(results));
      for (const r of results) if (r.status !== 200) assert.equal(r.body.code, 1);
      for (const password of passwords) {
        assert.equal((await login(user.username, password)).status, password === winners[0] ? 200 : 400);
      }
    }
  });

  test('expires after 24 hours', async () => {
    const early = await userWithResetLink();
    const late = await userWithResetLink();
    t.clock.advance(24 * hour - 60_000);
    assert.equal((await submit(early.link, newPassword('early'))).status, 200);
    t.clock.advance(2 * 60_000);
    const res = await submit(late.link, newPassword('late'));
    assert.equal(res.status, 400);
    assert.match(res.body.error, /expired/);
    const page = await fetch(late.link, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 400);
    assert.match(await page.text(), /expired/);
    assert.equal((await login(late.user.username, late.user.password)).status, 200);
  });

  test('clears the login lock', async () => {
    const { user, link } = await userWithResetLink();
    for (let i = 0; i < 7; i++) await login(user.username, 'wrong password');
    assert.equal((await login(user.username, user.password)).body.code, 219);
    const password = newPassword('unlock');
    assert.equal((await submit(link, password)).status, 200);
    assert.equal((await login(user.username, password)).status, 200);
  });

  test('a successful reset voids the other links; a changed address voids its link', async () => {
    const { user, email, link: first } = await userWithResetLink();
    const second = await requestLink(email);
    assert.equal((await submit(second, newPassword('second'))).status, 200);
    assert.match((await submit(first, newPassword('first'))).body.error, /already been used/);

    const other = await userWithResetLink();
    const session = (await login(other.user.username, other.user.password)).body.sessionToken;
    await t.client.withSession(session).put(`/1.1/users/${other.user.objectId}`, { email: address('moved') });
    const res = await submit(other.link, newPassword('moved'));
    assert.equal(res.status, 400);
    assert.match(res.body.error, /changed/);
    void user;
  });

  test('the HTML form: a mismatch or a blank password shows the form again; success shows a page', async () => {
    const { user, link } = await userWithResetLink();
    const mismatch = await submitForm(link, { password: 'one-password', confirm: 'another' });
    assert.equal(mismatch.status, 400);
    assert.match(mismatch.text, /do not match/);
    assert.match(mismatch.text, /role="alert"/);
    assert.match(mismatch.text, /<form method="post">/);
    const blank = await submitForm(link, { password: '   ', confirm: '   ' });
    assert.equal(blank.status, 400);
    assert.match(blank.text, /non-blank/);

    const password = newPassword('form');
    const done = await submitForm(link, { username: user.username, password, confirm: password });
    assert.equal(done.status, 200);
    assert.match(done.text, /Password changed/);
    assert.match(done.headers.get('content-type') ?? '', /text\/html/);
    assert.equal((await login(user.username, password)).status, 200);
    const reused = await submitForm(link, { password, confirm: password });
    assert.equal(reused.status, 400);
    assert.match(reused.text, /already been used/);
  });

  test('JSONP GET with ?password=&callback= (the hosted reset page), on /1/ and /1.1/', async () => {
    const { user, link } = await userWithResetLink();
    const password = newPassword('jsonp');
    const url = `${link.replace('/1/', '/1.1/')}?password=${encodeURIComponent(password)}&callback=cb`;
    const ok = await (await fetch(url)).text();
    assert.match(ok, /cb\(\{\}\);$/);
    assert.equal((await login(user.username, password)).status, 200);
    const used = await (await fetch(url)).text();
    assert.match(used, /cb\(\{"code":1,"error":"The link has already been used/);
  });
});
