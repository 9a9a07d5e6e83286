// Operators in the console (docs/console.md): an operator's own TOTP (enrol with the key or URI shown
// once, confirm with a code, then asked at sign-in; each code good once; wrong codes count toward the
// lockout), `roost operator totp-reset`'s service, and admins managing operators (create with a password
// shown once, role, new password, remove TOTP, delete; the last admin stays). Each change audited.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as OTPAuth from 'otpauth';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { ConsoleClient, makeOperator, operatorPassword } from './helpers/console.ts';

let t: TestServer;
const clock = new ManualClock();
let ada: ConsoleClient;

before(async () => {
  t = await startServer({ clock });
  await makeOperator(t.services.operators, 'ada', 'admin');
  await makeOperator(t.services.operators, 'vic', 'viewer');
  ada = new ConsoleClient(t.url);
  await ada.signIn('ada');
});
after(async () => t?.close());

function codeAt(secret: string, ms: number): string {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: ms });
}

async function actions(): Promise<string[]> {
  return (await ada.request('GET', '/console/api/audit')).body.results.map((e: { actor: string; action: string; target: string }) => `${e.actor} ${e.action} ${e.target}`);
}

test('TOTP: enrol, confirm with a code, then sign-in needs a right code used once; totp-reset removes it', async () => {
  await makeOperator(t.services.operators, 'tom', 'viewer');
  const tom = new ConsoleClient(t.url);
  await tom.signIn('tom');
  const begun = await tom.change('POST', '/console/api/account/totp');
  assert.equal(begun.status, 200, 'a viewer enrols itself');
  const { secret, uri } = begun.body;
  assert.match(secret, /^[A-Z2-7]{32}$/);
  assert.equal(uri, `otpauth://totp/Roost%20console:tom?issuer=Roost%20console&secret=${secret}&algorithm=SHA1&digits=6&period=30`);
  const page = await tom.request('GET', '/console/account');
  assert.ok(!page.text.includes(secret), 'the key is not shown on a later visit');
  assert.match(page.text, /TOTP is <strong>off<\/strong>/);
  const wrong = await tom.change('POST', '/console/api/account/totp/confirm', { code: '000000' === codeAt(secret, clock.now()) ? '111111' : '000000' });
  assert.deepEqual([wrong.status, wrong.body], [400, { code: 111, error: 'The code is wrong or expired: enter the one the app shows now.' }]);
  const confirmed = await tom.change('POST', '/console/api/account/totp/confirm', { code: codeAt(secret, clock.now()) });
  assert.equal(confirmed.status, 200);
  assert.equal(confirmed.body.totp, true);
  assert.equal(confirmed.body.recoveryCodes.length, 10);
  assert.ok((await actions()).includes('tom operator.totpEnable tom'));

  const c = new ConsoleClient(t.url);
  const needed = await c.signIn('tom');
  assert.deepEqual([needed.status, needed.body], [401, { code: 401, error: 'This operator uses TOTP: enter the password and the code from the authenticator app (or a recovery code).' }]);
  clock.advance(30_000);
  const code = codeAt(secret, clock.now());
  const signIn = (password: string, given: string) => c.request('POST', '/console/api/sign-in', { json: { name: 'tom', password, code: given } });
  assert.deepEqual((await signIn('not the password', code)).body, { code: 401, error: 'The name or the password is wrong.' }, 'the password is checked first');
  assert.equal((await signIn(operatorPassword, code)).status, 200);
  assert.deepEqual((await signIn(operatorPassword, code)).body, { code: 401, error: 'The code is wrong, expired or used already.' }, 'a code is good once');
  clock.advance(30_000);
  assert.equal((await signIn(operatorPassword, codeAt(secret, clock.now() - 30_000))).status, 401, 'a used step stays used, even within the drift window');
  assert.equal((await signIn(operatorPassword, codeAt(secret, clock.now()))).status, 200);
  // The form: the code field.
  clock.advance(30_000);
  const form = await c.request('POST', '/console/sign-in', { form: { name: 'tom', password: operatorPassword, code: codeAt(secret, clock.now()) } });
  assert.deepEqual([form.status, form.headers.get('location')], [303, '/console/apps']);

  // Wrong codes count toward the lockout, like wrong passwords: the fifth in a row locks.
  const wrongCode = '123456' === codeAt(secret, clock.now()) ? '654321' : '123456';
  for (let i = 0; i < 4; i++) assert.equal((await signIn(operatorPassword, wrongCode)).status, 401);
  assert.equal((await signIn(operatorPassword, wrongCode)).status, 429);
  assert.equal((await signIn(operatorPassword, codeAt(secret, clock.now()))).status, 429, 'locked: not even the right code');

  // A lost phone: an admin removes TOTP (the CLI's totp-reset calls the same service); its sessions end.
  assert.equal((await ada.change('POST', '/console/api/operators/tom/totp-reset')).status, 200);
  assert.ok((await actions()).includes('ada operator.totpReset tom'));
  assert.equal((await tom.request('GET', '/console/api/session')).status, 401, 'the sessions ended');
  clock.advance(15 * 60_000);
  assert.equal((await c.signIn('tom')).status, 200, 'the password alone again');
  assert.equal(await t.services.operators.resetTotp('cli:test', 'nobody'), 'unknown');
});

test('TOTP recovery codes: shown once at enrolment, kept as digests, each signs in once; renewing voids the old ones', async () => {
  await makeOperator(t.services.operators, 'rita', 'viewer');
  const rita = new ConsoleClient(t.url);
  await rita.signIn('rita');
  const { secret } = (await rita.change('POST', '/console/api/account/totp')).body;
  // The form's answer: the page shows the codes, once.
  const confirmed = await rita.request('POST', '/console/account/totp/confirm', { form: { _csrf: rita.csrf, code: codeAt(secret, clock.now()) }, headers: { origin: t.url } });
  assert.equal(confirmed.status, 200);
  const codes = [...confirmed.text.matchAll(/<li><code class="secret">([a-z2-7]{5}-[a-z2-7]{5})<\/code><\/li>/g)].map((m) => m[1]);
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  assert.match(confirmed.text, /TOTP is on: sign-in asks for a code from now on\./);
  const later = await rita.request('GET', '/console/account');
  assert.ok(!codes.some((code) => later.text.includes(code)), 'not shown on a later visit');
  assert.match(later.text, /Recovery codes left: <strong>10<\/strong>/);

  // Stored as digests only: no code in the database.
  const id = (await t.store.operators.byName('rita'))!.id;
  assert.equal(await t.store.operators.recoveryCodesLeft(id), 10);
  assert.equal(await t.store.operators.useRecoveryCode(id, codes[9]), false, 'the code itself is not what is stored');

  const c = new ConsoleClient(t.url);
  const signIn = (code: string) => c.request('POST', '/console/api/sign-in', { json: { name: 'rita', password: operatorPassword, code } });
  // Case, spaces and dashes do not matter; each code signs in once.
  assert.equal((await signIn(` ${codes[0].toUpperCase().replace('-', ' ')} `)).status, 200);
  assert.deepEqual((await signIn(codes[0])).body, { code: 401, error: 'The code is wrong, expired or used already.' }, 'a recovery code is good once');
  assert.equal((await signIn(codes[1])).status, 200);
  assert.equal((await signIn('abcde-fghij')).status, 401, 'an unknown code is refused');
  assert.equal((await signIn('not a code at all')).status, 401);
  assert.match((await rita.request('GET', '/console/account')).text, /Recovery codes left: <strong>8<\/strong>/);
  const used = (await ada.request('GET', '/console/api/audit')).body.results.find((e: { action: string }) => e.action === 'operator.recoveryCodeUsed');
  assert.deepEqual([used.actor, used.target, used.detail], ['rita', 'rita', { left: 8 }]);

  // New codes: the old ones stop working; shown once again.
  const renewed = await rita.change('POST', '/console/api/account/recovery-codes');
  assert.equal(renewed.status, 200);
  assert.equal(renewed.body.recoveryCodes.length, 10);
  assert.equal((await signIn(codes[2])).status, 401, 'an old code no longer works');
  assert.equal((await signIn(renewed.body.recoveryCodes[0])).status, 200);
  assert.ok((await actions()).includes('rita operator.recoveryCodes rita'));
  // The failures so far count toward the lockout as wrong TOTP codes do; a right code cleared them.

  // Without TOTP there are none; removing TOTP removes them.
  assert.equal((await ada.change('POST', '/console/api/operators/rita/totp-reset')).status, 200);
  assert.equal(await t.store.operators.recoveryCodesLeft(id), 0);
  const again = new ConsoleClient(t.url);
  await again.signIn('rita');
  const refused = await again.change('POST', '/console/api/account/recovery-codes');
  assert.deepEqual([refused.status, refused.body], [403, { code: 403, error: 'Recovery codes come with TOTP: set up TOTP first.' }]);
});

test('admins manage operators: create (password shown once), role, new password, delete; the last admin stays', async () => {
  const created = await ada.change('POST', '/console/api/operators', { name: 'newbie', role: 'viewer' });
  assert.equal(created.status, 201);
  assert.equal(created.body.name, 'newbie');
  const newbie = new ConsoleClient(t.url);
  assert.equal((await newbie.signIn('newbie', created.body.password)).status, 200);
  assert.deepEqual((await ada.change('POST', '/console/api/operators', { name: 'newbie' })).body, { code: 137, error: 'An operator of that name exists.' });
  assert.deepEqual((await ada.change('POST', '/console/api/operators', { name: 'bad name!' })).body, { code: 111, error: 'A name is 1 to 64 letters, digits or . _ @ -.' });

  assert.equal((await ada.change('POST', '/console/api/operators/newbie/role', { role: 'admin' })).status, 200);
  const listed = (await ada.request('GET', '/console/api/operators')).body.results.find((o: { name: string }) => o.name === 'newbie');
  assert.deepEqual([listed.role, listed.totp], ['admin', false]);
  assert.deepEqual((await ada.change('POST', '/console/api/operators/newbie/role', { role: 'root' })).body, { code: 111, error: 'The role is admin or viewer.' });

  const reset = await ada.change('POST', '/console/api/operators/newbie/password');
  assert.equal(reset.status, 200);
  assert.equal((await newbie.request('GET', '/console/api/session')).status, 401, 'a new password ends the sessions');
  assert.equal((await newbie.signIn('newbie', reset.body.password)).status, 200);

  // The form shows a generated password once, on its answer.
  const form = await ada.request('POST', '/console/operators', { form: { _csrf: ada.csrf, name: 'formed', role: 'viewer' } });
  assert.equal(form.status, 201);
  const shown = /<code class="secret">([^<]+)<\/code>/.exec(form.text)?.[1];
  assert.ok(shown && (await new ConsoleClient(t.url).signIn('formed', shown)).status === 200);
  assert.ok(!(await ada.request('GET', '/console/operators')).text.includes(shown));

  const self = await ada.change('DELETE', '/console/api/operators/ada');
  assert.deepEqual([self.status, self.body], [403, { code: 403, error: 'An operator cannot delete itself.' }]);
  assert.equal((await ada.change('DELETE', '/console/api/operators/formed')).status, 200);
  assert.equal((await ada.change('DELETE', '/console/api/operators/formed')).status, 404);
  // newbie (admin) demotes ada, then cannot demote itself: the last admin.
  assert.equal((await newbie.change('POST', '/console/api/operators/ada/role', { role: 'viewer' })).status, 200);
  const last = await newbie.change('POST', '/console/api/operators/newbie/role', { role: 'viewer' });
  assert.deepEqual([last.status, last.body], [403, { code: 403, error: 'The last admin stays an admin: make another operator admin first.' }]);
  assert.equal((await newbie.change('POST', '/console/api/operators/ada/role', { role: 'admin' })).status, 200);
  const log = await actions();
  for (const line of ['ada operator.create newbie', 'ada operator.role newbie', 'ada operator.passwd newbie', 'ada operator.delete formed', 'newbie operator.role ada']) {
    assert.ok(log.includes(line), line);
  }
  assert.ok(!JSON.stringify(log).includes(reset.body.password), 'no password in the audit log');
});

test('a viewer manages no operator and sees no manage form', async () => {
  const vic = new ConsoleClient(t.url);
  await vic.signIn('vic');
  for (const [method, path] of [['POST', '/console/api/operators'], ['POST', '/console/api/operators/ada/role'], ['POST', '/console/api/operators/ada/password'], ['POST', '/console/api/operators/ada/totp-reset'], ['DELETE', '/console/api/operators/ada']]) {
    const res = await vic.change(method, path, { name: 'x', role: 'admin' });
    assert.deepEqual([res.status, res.body], [403, { code: 403, error: 'A viewer cannot change anything.' }], `${method} ${path}`);
  }
  const page = await vic.request('GET', '/console/operators');
  assert.equal(page.status, 200);
  assert.ok(!page.text.includes('Manage ') && !page.text.includes('New operator'));
  const noToken = await vic.request('POST', '/console/api/account/totp', { json: {} });
  assert.equal(noToken.status, 403, 'enrolment needs the CSRF token too');
});
