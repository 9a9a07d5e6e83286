// emailVerified (SPEC §3.1, §5.4, §8) over HTTP, with a real SMTP server on loopback: every row of
// the state table, the mail and its link, resend, one-week expiry, JSONP, and the 216 login rule.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoSecretsIn, signUp, uniqueName } from './helpers/accounts.ts';
import { address, mailFrom, startMailServer, type MailTestServer } from './helpers/mail.ts';
import { linkIn, tokenOf } from './fakes/smtp-sink.ts';

const day = 24 * 60 * 60 * 1000;
let t: MailTestServer;
const tokens: string[] = [];

before(async () => {
  t = await startMailServer();
});
after(async () => {
  if (t) assertNoSecretsIn(t.server.logs, tokens);
  await t?.close();
});

async function emailVerifiedOf(userId: string): Promise<unknown> {
  const res = await t.master.get(`/1.1/users/${userId}`);
  assert.equal(res.status, 200, res.text);
  return res.body.emailVerified;
}

/** The link of the n-th mail to that address; its token is remembered for the log check. */
async function mailedLink(email: string, n = 1): Promise<string> {
  const link = linkIn(await t.sink.waitFor(email, n));
  tokens.push(tokenOf(link));
  return link;
}

/** Follows a link as a script would (JSON) or as a browser does (HTML). */
async function follow(link: string, as: 'json' | 'html' = 'json', method = 'GET') {
  const accept = as === 'html' ? 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' : 'application/json';
  const response = await fetch(link, { method, headers: { accept } });
  const text = await response.text();
  return { status: response.status, text, body: as === 'json' ? JSON.parse(text) : null, headers: response.headers };
}

describe('SPEC §3.1 row 1: null without verification or without email', () => {
  test('verification off: a user with an email starts with null and gets no mail', async () => {
    await t.settings({ verifyEmailOnSignup: false });
    const email = address();
    const user = await signUp(t.client, { email });
    assert.equal(await emailVerifiedOf(user.objectId), null);
    assert.equal(await t.sink.countAfterQuiet(email), 0);
  });

  test('verification on but no email: null, no mail', async () => {
    await t.settings({ verifyEmailOnSignup: true });
    const user = await signUp(t.client);
    assert.equal(await emailVerifiedOf(user.objectId), null);
    assert.equal(t.sink.mails.filter((m) => m.text.includes(user.username)).length, 0);
  });
});

describe('SPEC §3.1 rows 2 and 4: sign-up with verification on mails a link that confirms', () => {
  test('false and a mail; the link (opened in a browser) makes it true', async () => {
    await t.settings({ verifyEmailOnSignup: true });
    const email = address();
    const username = uniqueName('alice');
    const user = await signUp(t.client, { email, username });
    assert.equal(user.body.emailVerified, false);
    assert.equal(await emailVerifiedOf(user.objectId), false);

    const mail = await t.sink.waitFor(email);
    assert.match(mail.from, /accounts@roost\.test/);
    assert.match(mail.subject, /test/, 'the subject names the application');
    assert.match(mail.text, new RegExp(username));
    const link = await mailedLink(email);
    assert.ok(link.startsWith(`${t.server.url}/1.1/verifyEmail/`), link);
    assert.ok(mail.html.includes(link), 'the HTML body carries the same link');
    assert.ok(mail.raw.includes(mailFrom.split('<')[1].slice(0, -1)));

    const page = await follow(link, 'html');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.text, /Email address confirmed/);
    assert.match(page.text, /<p class="app">test<\/p>/, 'the page names the application');
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.doesNotMatch(page.text, /<script/i);
    assert.equal(await emailVerifiedOf(user.objectId), true);

    // Following it again is still a success while the address is the same.
    const again = await follow(link);
    assert.equal(again.status, 200);
    assert.equal(again.body.objectId, user.objectId);
  });

  // Review of e2b2d15 (#14, accounts): an authData (or SMS) sign-up with an email started at
  // emailVerified false, but only password sign-up mailed the link, so nothing could confirm it.
  test('an authData sign-up with an email mails the link too', async () => {
    await t.settings({ verifyEmailOnSignup: true });
    const email = address();
    const created = await t.client.post('/1.1/users', { authData: { myplatform: { uid: uniqueName('uid') } }, email });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.emailVerified, false);
    const link = await mailedLink(email);
    assert.equal((await follow(link)).status, 200);
    assert.equal(await emailVerifiedOf(created.body.objectId), true);
  });

  test('the JSON endpoint answers {updatedAt, objectId}, by GET and by POST', async () => {
    const email = address();
    const user = await signUp(t.client, { email });
    const link = await mailedLink(email);
    const res = await follow(link, 'json', 'POST');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['objectId', 'updatedAt']);
    assert.equal(res.body.objectId, user.objectId);
    assert.match(res.body.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(await emailVerifiedOf(user.objectId), true);
  });

  test('the /1/ path and JSONP (callback) work as the hosted pages call them', async () => {
    const email = address();
    const user = await signUp(t.client, { email });
    const link = (await mailedLink(email)).replace('/1.1/verifyEmail/', '/1/verifyEmail/');
    const res = await fetch(`${link}?callback=done`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /javascript/);
    const script = await res.text();
    const match = /done\((\{.*\})\);$/.exec(script);
    assert.ok(match, script);
    assert.equal(JSON.parse(match[1]).objectId, user.objectId);

    const bad = await fetch(`${t.server.url}/1.1/verifyEmail/${'x'.repeat(32)}?callback=done`);
    const failure = JSON.parse(/done\((\{.*\})\);$/.exec(await bad.text())![1]);
    assert.equal(failure.code, 1);
    assert.match(failure.error, /invalid/);

    const evil = await fetch(`${link}?callback=${encodeURIComponent('alert(1);x')}`);
    assert.equal(evil.status, 400);
    assert.equal((await evil.json()).code, 107);
  });

  test('an unknown or malformed token: 400 {code, error}, or a failure page in a browser', async () => {
    for (const token of ['x'.repeat(32), 'short', '%00%00', 'a'.repeat(99), '..%2F..']) {
      const res = await follow(`${t.server.url}/1.1/verifyEmail/${token}`);
      assert.equal(res.status, 400, token);
      assert.equal(res.body.code, 1);
    }
    // Longer than the router takes: still {code, error}, and the path is not echoed.
    const long = 'L'.repeat(200);
    const tooLong = await follow(`${t.server.url}/1.1/verifyEmail/${long}`);
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.code, 1);
    assert.ok(!tooLong.text.includes(long));
    const page = await follow(`${t.server.url}/1.1/verifyEmail/${'y'.repeat(32)}`, 'html');
    assert.equal(page.status, 400);
    assert.match(page.text, /This link cannot be used/);
    assert.match(page.text, /role="alert"/);
  });
});

describe('SPEC §3.1 row 3: setting or changing the email while verification is on', () => {
  test('a new address is false and mailed; the old address\'s link no longer confirms', async () => {
    await t.settings({ verifyEmailOnSignup: true });
    const first = address();
    const user = await signUp(t.client, { email: first });
    const oldLink = await mailedLink(first);

    const second = address();
    const res = await user.client.put(`/1.1/users/${user.objectId}`, { email: second });
    assert.equal(res.status, 200, res.text);
    assert.equal(await emailVerifiedOf(user.objectId), false);
    const newLink = await mailedLink(second);

    const stale = await follow(oldLink);
    assert.equal(stale.status, 400);
    assert.match(stale.body.error, /changed/);
    assert.equal(await emailVerifiedOf(user.objectId), false);

    assert.equal((await follow(newLink)).status, 200);
    assert.equal(await emailVerifiedOf(user.objectId), true);

    // A confirmed address changed again is unconfirmed again, and mailed.
    const third = address();
    await user.client.put(`/1.1/classes/_User/${user.objectId}`, { email: third });
    assert.equal(await emailVerifiedOf(user.objectId), false);
    await mailedLink(third);
  });

  test('an email set on a user who had none: false and a mail', async () => {
    const user = await signUp(t.client);
    assert.equal(await emailVerifiedOf(user.objectId), null);
    const email = address();
    await user.client.put(`/1.1/users/${user.objectId}`, { email });
    assert.equal(await emailVerifiedOf(user.objectId), false);
    assert.equal((await follow(await mailedLink(email))).status, 200);
    assert.equal(await emailVerifiedOf(user.objectId), true);
  });

  test('other changes send nothing', async () => {
    const email = address();
    const user = await signUp(t.client, { email });
    await t.sink.waitFor(email);
    await user.client.put(`/1.1/users/${user.objectId}`, { nickname: 'Al' });
    assert.equal(await t.sink.countAfterQuiet(email), 1);
  });
});

describe('SPEC §3.1 row 5 and §8: requestEmailVerify, one week per link', () => {
  test('a resend mails a new link; every link works within its own week', async () => {
    await t.settings({ verifyEmailOnSignup: true });
    const email = address();
    const user = await signUp(t.client, { email });
    const first = await mailedLink(email, 1);

    t.clock.advance(3 * day);
    const res = await t.client.post('/1.1/requestEmailVerify', { email });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {});
    const second = await mailedLink(email, 2);
    assert.notEqual(first, second);

    // One week and a minute after the first mail: the first link has expired, the second has not.
    t.clock.advance(4 * day + 60_000);
    const expired = await follow(first);
    assert.equal(expired.status, 400);
    assert.match(expired.body.error, /expired/);
    const page = await follow(first, 'html');
    assert.match(page.text, /expired/);
    assert.equal(await emailVerifiedOf(user.objectId), false);
    assert.equal((await follow(second)).status, 200);
    assert.equal(await emailVerifiedOf(user.objectId), true);
  });

  test('an earlier link still works just before its week ends', async () => {
    const email = address();
    const user = await signUp(t.client, { email });
    const first = await mailedLink(email, 1);
    await t.client.post('/1.1/requestEmailVerify', { email });
    await mailedLink(email, 2);
    t.clock.advance(7 * day - 60_000);
    assert.equal((await follow(first)).status, 200);
    assert.equal(await emailVerifiedOf(user.objectId), true);
  });

  test('errors: no such user 205, no email 204, a malformed one 125, not an object 107', async () => {
    const cases: Array<[unknown, number]> = [
      [{ email: address('nobody') }, 205],
      [{}, 204],
      [{ email: '' }, 204],
      [{ email: 'not-an-address' }, 125],
      [{ email: 42 }, 125],
      [[1, 2], 107],
    ];
    for (const [body, code] of cases) {
      const res = await t.client.post('/1.1/requestEmailVerify', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, code, JSON.stringify(body));
    }
  });

  test('an address already confirmed is not mailed again', async () => {
    const email = address();
    await signUp(t.client, { email });
    assert.equal((await follow(await mailedLink(email))).status, 200);
    const res = await t.client.post('/1.1/requestEmailVerify', { email });
    assert.equal(res.status, 200);
    assert.equal(await t.sink.countAfterQuiet(email), 1);
  });

  test('at most five mails an hour to one user; the next hour allows more', async () => {
    const email = address();
    await signUp(t.client, { email });
    await t.sink.waitFor(email);
    for (let i = 0; i < 4; i++) assert.equal((await t.client.post('/1.1/requestEmailVerify', { email })).status, 200);
    const limited = await t.client.post('/1.1/requestEmailVerify', { email });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 429);
    t.clock.advance(60 * 60 * 1000 + 1);
    assert.equal((await t.client.post('/1.1/requestEmailVerify', { email })).status, 200);
    await t.sink.waitFor(email, 6);
  });
});

describe('SPEC §5.4: preventLoginWithUnverifiedEmail', () => {
  test('216 only once the password was right; a confirmed address logs in', async () => {
    await t.settings({ verifyEmailOnSignup: true, preventLoginWithUnverifiedEmail: true });
    const email = address();
    const user = await signUp(t.client, { email });
    const wrong = await t.client.post('/1.1/login', { username: user.username, password: 'not-the-password' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.code, 210);
    const right = await t.client.post('/1.1/login', { email, password: user.password });
    assert.equal(right.status, 400);
    assert.equal(right.body.code, 216);
    assert.equal(right.body.sessionToken, undefined);

    assert.equal((await follow(await mailedLink(email))).status, 200);
    const after = await t.client.post('/1.1/login', { username: user.username, password: user.password });
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body.emailVerified, true);
    assert.ok(after.body.sessionToken);
    await t.settings({ preventLoginWithUnverifiedEmail: false });
  });
});
