// Phone numbers and SMS codes over HTTP (reference §2.1): codes through the outbox provider,
// sign-up-or-login, login by code, phone verification, reset by code; one-time codes, expiry
// on an injected clock, per-number limits (601), wrong codes 603 counting toward the lock (219).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, startServer, type TestServer } from './helpers/harness.ts';
import { signUp } from './helpers/accounts.ts';
import { KeyClient, lastCode, outbox, smsOutboxDir, uniquePhone } from './helpers/sms.ts';

const minute = 60_000;
let server: TestServer;
let clock: ManualClock;
let client: KeyClient;
let master: KeyClient;
const dir = smsOutboxDir();

before(async () => {
  clock = new ManualClock(Date.now());
  server = await startServer({ clock, env: { SMS_OUTBOX_DIR: dir } });
  client = new KeyClient({ url: server.url, appId: server.appId, appKey: server.appKey });
  master = new KeyClient({ url: server.url, appId: server.appId, appKey: server.appKey, masterKey: server.masterKey });
});
after(async () => {
  await server?.close();
});

async function requestCode(phone: string, path = '/1.1/requestSmsCode', extra: Record<string, unknown> = {}): Promise<string> {
  const response = await client.post(path, { mobilePhoneNumber: phone, ...extra });
  assert.equal(response.status, 200, response.text);
  assert.deepEqual(response.body, {});
  return lastCode(dir, phone);
}

test('usersByMobilePhone signs a new number up (username = number, verified) and logs it in after', async () => {
  const phone = uniquePhone();
  const code = await requestCode(phone);
  assert.match(code, /^\d{6}$/);
  const message = outbox(dir).at(-1)!;
  assert.equal(message.ttlMinutes, 10);
  assert.ok(message.text.includes(code));
  const created = await client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: phone, smsCode: code, city: 'Xi’an' });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.username, phone);
  assert.equal(created.body.mobilePhoneNumber, phone);
  assert.equal(created.body.mobilePhoneVerified, true);
  assert.equal(created.body.city, 'Xi’an');
  assert.match(created.body.sessionToken, /^[a-z0-9]{25}$/);

  const reused = await client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: phone, smsCode: code });
  assert.equal(reused.status, 400);
  assert.equal(reused.body.code, 603);

  clock.advance(minute);
  const second = await requestCode(phone);
  const again = await client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: phone, smsCode: second });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.body.objectId, created.body.objectId);
  assert.equal(again.body.sessionToken, created.body.sessionToken);
});

test('numbers are normalised to E.164; without a country code +86 is assumed', async () => {
  const phone = uniquePhone();
  const local = phone.slice(3);
  const spaced = `${local.slice(0, 3)} ${local.slice(3, 7)}-${local.slice(7)}`;
  const code = await client.post('/1.1/requestSmsCode', { mobilePhoneNumber: spaced });
  assert.equal(code.status, 200, code.text);
  const created = await client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: `0086${local}`, smsCode: lastCode(dir, phone) });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.mobilePhoneNumber, phone);
  for (const [body, code] of [[{}, 212], [{ mobilePhoneNumber: 'call me' }, 127], [{ mobilePhoneNumber: '+12' }, 127], [{ mobilePhoneNumber: 5 }, 127]] as const) {
    const response = await client.post('/1.1/requestSmsCode', body);
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.code, code);
  }
  // A password sign-up with a local number stores it in E.164 too, and login by either form finds it.
  const other = uniquePhone();
  const user = await signUp(client, { mobilePhoneNumber: other.slice(3) });
  assert.equal(user.body.mobilePhoneNumber ?? (await user.client.get('/1.1/users/me')).body.mobilePhoneNumber, other);
  const login = await client.post('/1.1/login', { mobilePhoneNumber: other.slice(3), password: user.password });
  assert.equal(login.status, 200, login.text);
});

test('codes expire after 10 minutes and a wrong code is 603', async () => {
  const phone = uniquePhone();
  const code = await requestCode(phone);
  const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
  const bad = await client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: phone, smsCode: wrong });
  assert.deepEqual([bad.status, bad.body.code], [400, 603]);
  for (const smsCode of [undefined, '', '12ab56', 123]) {
    const response = await client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: phone, smsCode });
    assert.equal(response.body.code, 603, String(smsCode));
  }
  clock.advance(10 * minute + 1);
  const expired = await client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: phone, smsCode: code });
  assert.deepEqual([expired.status, expired.body.code], [400, 603]);
});

test('at least 60 s apart and at most 10 a day per number: 601', async () => {
  const phone = uniquePhone();
  await requestCode(phone);
  const tooSoon = await client.post('/1.1/requestSmsCode', { mobilePhoneNumber: phone });
  assert.equal(tooSoon.status, 429);
  assert.equal(tooSoon.body.code, 601);
  clock.advance(59_000);
  assert.equal((await client.post('/1.1/requestSmsCode', { mobilePhoneNumber: phone })).body.code, 601);
  for (let i = 0; i < 9; i++) {
    clock.advance(minute);
    await requestCode(phone);
  }
  clock.advance(minute);
  const eleventh = await client.post('/1.1/requestSmsCode', { mobilePhoneNumber: phone });
  assert.equal(eleventh.body.code, 601, eleventh.text);
  clock.advance(24 * 60 * minute);
  await requestCode(phone);
  // Other numbers are not affected.
  await requestCode(uniquePhone());
});

test('concurrent requests for one number: one code; one code used twice at once: one success', async () => {
  const phone = uniquePhone();
  clock.advance(minute);
  const sent = await Promise.all(Array.from({ length: 5 }, () => client.post('/1.1/requestSmsCode', { mobilePhoneNumber: phone })));
  assert.equal(sent.filter((r) => r.status === 200).length, 1);
  assert.equal(sent.filter((r) => r.body.code === 601).length, 4);
  const code = lastCode(dir, phone);
  const uses = await Promise.all(Array.from({ length: 5 }, () => client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: phone, smsCode: code })));
  assert.equal(uses.filter((r) => r.status === 201 || r.status === 200).length, 1, uses.map((r) => r.text).join('\n'));
  assert.equal(uses.filter((r) => r.body.code === 603).length, 4);
});

test('login with mobilePhoneNumber and smsCode; unknown numbers get no login code', async () => {
  const phone = uniquePhone();
  const unknown = await client.post('/1.1/requestLoginSmsCode', { mobilePhoneNumber: phone });
  assert.deepEqual([unknown.status, unknown.body.code], [400, 213]);
  const user = await signUp(client, { mobilePhoneNumber: phone });
  const code = await requestCode(phone, '/1.1/requestLoginSmsCode');
  const login = await client.post('/1.1/login', { mobilePhoneNumber: phone, smsCode: code });
  assert.equal(login.status, 200, login.text);
  assert.equal(login.body.objectId, user.objectId);
  assert.equal(login.body.sessionToken, user.sessionToken);
  assert.equal(login.body.mobilePhoneVerified, true);
  const reused = await client.post('/1.1/login', { mobilePhoneNumber: phone, smsCode: code });
  assert.deepEqual([reused.status, reused.body.code], [400, 603]);
});

test('wrong codes count toward the lock: 219 even with the right code, open again after 15 minutes', async () => {
  const phone = uniquePhone();
  const user = await signUp(client, { mobilePhoneNumber: phone });
  clock.advance(minute);
  const code = await requestCode(phone, '/1.1/requestLoginSmsCode');
  const wrong = String((Number(code) + 7) % 1_000_000).padStart(6, '0');
  for (let i = 0; i < 7; i++) {
    const response = await client.post('/1.1/login', { mobilePhoneNumber: phone, smsCode: wrong });
    assert.equal(response.body.code, 603, `attempt ${i + 1}: ${response.text}`);
  }
  const locked = await client.post('/1.1/login', { mobilePhoneNumber: phone, smsCode: code });
  assert.equal(locked.body.code, 219, locked.text);
  const byPassword = await client.post('/1.1/login', { mobilePhoneNumber: phone, password: user.password });
  assert.equal(byPassword.body.code, 219);
  clock.advance(15 * minute + 1);
  const fresh = await requestCode(phone, '/1.1/requestLoginSmsCode');
  const open = await client.post('/1.1/login', { mobilePhoneNumber: phone, smsCode: fresh });
  assert.equal(open.status, 200, open.text);
});

test('requestMobilePhoneVerify and verifyMobilePhone/<code>', async () => {
  const phone = uniquePhone();
  const user = await signUp(client, { mobilePhoneNumber: phone });
  assert.equal((await user.client.get('/1.1/users/me')).body.mobilePhoneVerified, false);
  clock.advance(minute);
  const code = await requestCode(phone, '/1.1/requestMobilePhoneVerify');
  assert.equal(outbox(dir).at(-1)!.purpose, 'verify');
  // The JS SDK sends the code alone; the documented body names the number.
  const verified = await client.post(`/1.1/verifyMobilePhone/${code}`);
  assert.equal(verified.status, 200, verified.text);
  assert.equal(verified.body.objectId, user.objectId);
  assert.ok(verified.body.updatedAt);
  assert.equal((await user.client.get('/1.1/users/me')).body.mobilePhoneVerified, true);
  const again = await client.post(`/1.1/verifyMobilePhone/${code}`, { mobilePhoneNumber: phone });
  assert.deepEqual([again.status, again.body.code], [400, 603]);
  // Verified already: nothing is sent.
  clock.advance(minute);
  const count = outbox(dir).length;
  assert.equal((await client.post('/1.1/requestMobilePhoneVerify', { mobilePhoneNumber: phone })).status, 200);
  assert.equal(outbox(dir).length, count);
});

test('requestPasswordResetBySmsCode and resetPasswordBySmsCode/<code>: new password, old token refused', async () => {
  const phone = uniquePhone();
  const user = await signUp(client, { mobilePhoneNumber: phone });
  clock.advance(minute);
  const code = await requestCode(phone, '/1.1/requestPasswordResetBySmsCode');
  const missing = await client.put(`/1.1/resetPasswordBySmsCode/${code}`, {});
  assert.equal(missing.body.code, 201);
  const reset = await client.put(`/1.1/resetPasswordBySmsCode/${code}`, { password: 'brand-new-pw', mobilePhoneNumber: phone });
  assert.equal(reset.status, 200, reset.text);
  assert.deepEqual(reset.body, {});
  assert.equal((await client.post('/1.1/login', { username: user.username, password: user.password })).body.code, 210);
  const login = await client.post('/1.1/login', { username: user.username, password: 'brand-new-pw' });
  assert.equal(login.status, 200);
  assert.notEqual(login.body.sessionToken, user.sessionToken);
  const stale = await client.put(`/1.1/users/${user.objectId}`, { city: 'x' }, { session: user.sessionToken });
  assert.equal(stale.status, 403);
  const reused = await client.put(`/1.1/resetPasswordBySmsCode/${code}`, { password: 'again-pw' });
  assert.deepEqual([reused.status, reused.body.code], [400, 603]);
  // A reset code is good only for a reset, and the other way round.
  clock.advance(minute);
  const loginCode = await requestCode(phone, '/1.1/requestLoginSmsCode');
  assert.equal((await client.put(`/1.1/resetPasswordBySmsCode/${loginCode}`, { password: 'x-pw', mobilePhoneNumber: phone })).body.code, 603);
});

test('codes given without a number: wrong ones are counted per application, then 429', async () => {
  const phone = uniquePhone();
  const user = await signUp(client, { mobilePhoneNumber: phone });
  clock.advance(15 * minute + 1); // earlier tests' wrong guesses leave the window
  const code = await requestCode(phone, '/1.1/requestPasswordResetBySmsCode');
  const wrong = (i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');
  for (let i = 0; i < 30; i++) {
    const response = await client.put(`/1.1/resetPasswordBySmsCode/${wrong(i)}`, { password: 'guess-pw' });
    assert.equal(response.body.code, 603, response.text);
  }
  const limited = await client.put(`/1.1/resetPasswordBySmsCode/${code}`, { password: 'guess-pw' });
  assert.deepEqual([limited.status, limited.body.code], [429, 429]);
  // Naming the number still works, and the window passes.
  const named = await client.put(`/1.1/resetPasswordBySmsCode/${code}`, { password: 'named-pw', mobilePhoneNumber: phone });
  assert.equal(named.status, 200, named.text);
  assert.equal((await client.post('/1.1/login', { username: user.username, password: 'named-pw' })).status, 200);
  clock.advance(15 * minute + 1);
  assert.equal((await client.put('/1.1/resetPasswordBySmsCode/000000', { password: 'x-pw' })).body.code, 603);
});

test('requestChangePhoneNumber and changePhoneNumber move the session user to a new, verified number', async () => {
  const user = await signUp(client, { mobilePhoneNumber: uniquePhone() });
  const next = uniquePhone();
  const noSession = await client.post('/1.1/requestChangePhoneNumber', { mobilePhoneNumber: next });
  assert.equal(noSession.status, 403);
  const taken = await user.client.post('/1.1/requestChangePhoneNumber', { mobilePhoneNumber: (await signUp(client, { mobilePhoneNumber: uniquePhone() })).body.mobilePhoneNumber ?? '' });
  assert.ok(taken.status === 400, taken.text);
  const code = await (async () => {
    const sent = await user.client.post('/1.1/requestChangePhoneNumber', { mobilePhoneNumber: next, ttl: 6 });
    assert.equal(sent.status, 200, sent.text);
    assert.equal(outbox(dir).at(-1)!.ttlMinutes, 6);
    return lastCode(dir, next);
  })();
  const wrong = await user.client.post('/1.1/changePhoneNumber', { mobilePhoneNumber: next, code: code === '000000' ? '000001' : '000000' });
  assert.equal(wrong.body.code, 603);
  const changed = await user.client.post('/1.1/changePhoneNumber', { mobilePhoneNumber: next, code });
  assert.equal(changed.status, 200, changed.text);
  assert.equal(changed.body.objectId, user.objectId);
  const me = (await user.client.get('/1.1/users/me')).body;
  assert.equal(me.mobilePhoneNumber, next);
  assert.equal(me.mobilePhoneVerified, true);
  assert.equal((await user.client.post('/1.1/changePhoneNumber', { mobilePhoneNumber: next, code })).body.code, 603);
});

test('the webhook provider posts signed messages; a failing gateway is 602', async () => {
  const { createServer } = await import('node:http');
  const { createHmac } = await import('node:crypto');
  const received: Array<{ body: string; signature: string | undefined }> = [];
  let status = 200;
  const gateway = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push({ body, signature: request.headers['x-roost-signature'] as string | undefined });
      response.writeHead(status).end('{}');
    });
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  const port = (gateway.address() as { port: number }).port;
  try {
    const set = await master.put('/1.1/settings', {
      sms: { provider: 'webhook', webhookUrl: `http://127.0.0.1:${port}/sms`, webhookSecret: 'hook-secret', signature: 'Roost Test' },
    });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.sms.webhookSecret, '****cret');
    await new Promise((resolve) => setTimeout(resolve, server.config.appCacheMs + 50));
    const phone = uniquePhone();
    const sent = await client.post('/1.1/requestSmsCode', { mobilePhoneNumber: phone });
    assert.equal(sent.status, 200, sent.text);
    const message = JSON.parse(received.at(-1)!.body);
    assert.equal(message.to, phone);
    assert.match(message.code, /^\d{6}$/);
    assert.ok(message.text.startsWith('Your Roost Test'));
    assert.equal(received.at(-1)!.signature, `sha256=${createHmac('sha256', 'hook-secret').update(received.at(-1)!.body).digest('hex')}`);
    const login = await client.post('/1.1/usersByMobilePhone', { mobilePhoneNumber: phone, smsCode: message.code });
    assert.equal(login.status, 201, login.text);
    status = 500;
    const failed = await client.post('/1.1/requestSmsCode', { mobilePhoneNumber: uniquePhone() });
    assert.deepEqual([failed.status, failed.body.code], [503, 602]);
  } finally {
    await master.put('/1.1/settings', { sms: { provider: 'outbox', webhookUrl: null, webhookSecret: null } });
    await new Promise<void>((resolve) => gateway.close(() => resolve()));
  }
});

test('no SMS code reaches a log line', async () => {
  const text = server.logs.join('');
  for (const message of outbox(dir)) assert.ok(!new RegExp(`(?<!\\d)${message.code}(?!\\d)`).test(text), `code ${message.code} logged`);
  assert.ok(text.includes('<token>'), 'code paths are masked');
});

test('odd SMS requests never get a 5xx; refusals are {code, error}', async () => {
  const routes: Array<[string, string]> = [
    ['POST', '/1.1/requestSmsCode'],
    ['POST', '/1.1/requestLoginSmsCode'],
    ['POST', '/1.1/requestMobilePhoneVerify'],
    ['POST', '/1.1/requestPasswordResetBySmsCode'],
    ['POST', '/1.1/usersByMobilePhone'],
    ['POST', '/1.1/login'],
    ['POST', '/1.1/verifyMobilePhone/123456'],
    ['POST', '/1.1/verifySmsCode/abc'],
    ['PUT', '/1.1/resetPasswordBySmsCode/123456'],
  ];
  const bodies: unknown[] = [
    [],
    'text',
    { mobilePhoneNumber: null },
    { mobilePhoneNumber: ['+8613900000000'] },
    { mobilePhoneNumber: '+86139\u000000000000' },
    { mobilePhoneNumber: 'x'.repeat(10_000) },
    { mobilePhoneNumber: uniquePhone(), smsCode: { $gt: '' } },
    { mobilePhoneNumber: uniquePhone(), ttl: 'ten' },
    { mobilePhoneNumber: uniquePhone(), ttl: 1e9 },
    { mobilePhoneNumber: uniquePhone(), smsCode: '123456', password: 7 },
  ];
  for (const [method, path] of routes) {
    for (const body of bodies) {
      clock.advance(minute);
      const response = await client.request(method, path, { body });
      assert.ok(response.status < 500, `${method} ${path} ${JSON.stringify(body)} → ${response.status} ${response.text}`);
      if (response.status >= 400) assert.equal(typeof response.body.code, 'number');
    }
  }
});
