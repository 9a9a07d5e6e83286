// The official JavaScript SDK (npm leancloud-storage) calling the mail flows:
// AV.User.requestEmailVerify and AV.User.requestPasswordReset, with a real SMTP sink.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { initSdk } from './helpers/sdk.ts';
import { assertNoSecretsIn, knownPasswords, uniqueName } from './helpers/accounts.ts';
import { address, startMailServer, type MailTestServer } from './helpers/mail.ts';
import { linkIn, tokenOf } from './fakes/smtp-sink.ts';

let t: MailTestServer;
const tokens: string[] = [];

before(async () => {
  t = await startMailServer();
  initSdk({ appId: t.server.appId, appKey: t.server.appKey, url: t.server.url });
});
after(async () => {
  if (t) assertNoSecretsIn(t.server.logs, tokens);
  await AV.User.logOut();
  await t?.close();
});

async function mailedLink(email: string, n: number): Promise<string> {
  const link = linkIn(await t.sink.waitFor(email, n));
  tokens.push(tokenOf(link));
  return link;
}

test('sign-up mails a link, requestEmailVerify mails another, the link confirms', async () => {
  await t.settings({ verifyEmailOnSignup: true });
  const email = address('sdk');
  const user = new AV.User();
  user.setUsername(uniqueName('sdk'));
  user.setPassword('sdk-first-password');
  user.setEmail(email);
  await user.signUp();
  assert.equal(user.get('emailVerified'), false);
  await mailedLink(email, 1);

  await AV.User.requestEmailVerify(email);
  const second = await mailedLink(email, 2);
  assert.equal((await fetch(second)).status, 200);
  const fetched = await AV.Object.createWithoutData('_User', user.id as string).fetch();
  assert.equal(fetched.get('emailVerified'), true);

  const missing = await AV.User.requestEmailVerify(address('nobody')).then(
    () => null,
    (error: { code: number }) => error,
  );
  assert.equal(missing?.code, 205);
});

test('requestPasswordReset: 205 for an unknown address; the mailed link sets a new password', async () => {
  await t.settings({ verifyEmailOnSignup: false });
  const email = address('sdk-reset');
  const username = uniqueName('sdk');
  knownPasswords.add('sdk-old-password');
  const user = await AV.User.signUp(username, 'sdk-old-password', { email });
  const oldToken = user.getSessionToken();

  const unknown = await AV.User.requestPasswordReset(address('nobody')).then(
    () => null,
    (error: { code: number }) => error,
  );
  assert.equal(unknown?.code, 205);

  await AV.User.requestPasswordReset(email);
  const link = await mailedLink(email, 1);
  knownPasswords.add('sdk-new-password');
  const res = await fetch(link, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password: 'sdk-new-password' }),
  });
  assert.equal(res.status, 200);

  const loggedIn = await AV.User.logIn(username, 'sdk-new-password');
  assert.notEqual(loggedIn.getSessionToken(), oldToken);
  const old = await AV.User.logIn(username, 'sdk-old-password').then(
    () => null,
    (error: { code: number }) => error,
  );
  assert.equal(old?.code, 210);
  const stale = await AV.User.become(oldToken).then(
    () => null,
    (error: { code: number }) => error,
  );
  assert.equal(stale?.code, 211);
});
