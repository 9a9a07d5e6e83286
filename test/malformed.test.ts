// No request, however malformed, may produce a 5xx or a stack trace.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
let existingId: string;
before(async () => {
  server = await startServer();
  existingId = (await server.client.post('/1.1/classes/Fuzz', { n: 1, list: [1], obj: { a: 1 } })).body.objectId;
});
after(async () => {
  await server?.close();
});

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const values: unknown[] = [
  null, true, 0, -1, 1e308, 'x', '', [], {}, [null], { __type: 'Date' }, { __op: 'Increment', amount: 'x' },
  { __op: 'Add' }, { __op: 'Nope' }, { $gt: {} }, { $in: {} }, { $regex: 5 }, { $exists: null }, { $or: 1 },
  { 'a.b': 1 }, { __proto__: 1 }, { constructor: { prototype: 1 } }, { __type: 'Pointer', className: 5 },
  'x'.repeat(10_000), 'nul\u0000byte', { 'k\u0000': 1 },
  // A lone UTF-16 surrogate: PostgreSQL's jsonb refuses it, so it once surfaced as a 500 there.
  'lone\ud800surrogate', '\udc00', { 'k\ud800': 1 }, { __type: 'GeoPoint', latitude: 'n', longitude: [] },
];

function junkBodies(): string[] {
  const bodies = values.flatMap((value) => [JSON.stringify({ field: value }), JSON.stringify(value)]);
  bodies.push(
    JSON.stringify({ ACL: { '*': { read: 1 } } }),
    JSON.stringify({ 'x.y.z': { __op: 'Increment' }, x: 5 }),
    JSON.stringify({ objectId: 5, createdAt: [] }),
    `{"deep":${nested(2000)}}`,
    '\u0000',
    '{"a":1}garbage',
  );
  return bodies;
}

/** A 4xx answer is {code, error} without a stack trace; nothing answers 5xx. */
function assertClientError(label: string, res: { status: number; body: any; text: string }) {
  assert.ok(res.status < 500, `${label} → ${res.status} ${res.text.slice(0, 200)}`);
  if (res.status < 400) return;
  assert.equal(typeof res.body?.code, 'number', `${label} → ${res.text.slice(0, 200)}`);
  assert.equal(typeof res.body?.error, 'string', `${label} → ${res.text.slice(0, 200)}`);
  assert.ok(!/\n\s+at /.test(res.text), 'no stack trace');
}

test('junk bodies on every write route answer 2xx or 4xx with {code, error}', async () => {
  const targets: Array<[string, string]> = [
    ['POST', '/1.1/classes/Fuzz'],
    ['PUT', `/1.1/classes/Fuzz/${existingId}`],
    ['POST', '/1.1/batch'],
    ['PUT', '/1.1/settings'],
    ['POST', '/1.1/users'],
    ['POST', '/1.1/login'],
  ];
  for (const [method, path] of targets) {
    for (const raw of junkBodies()) {
      const client = path === '/1.1/settings' ? server.master : server.client;
      assertClientError(`${method} ${path} ${raw.slice(0, 80)}`, await client.request(method, path, { raw }));
    }
  }
});

test('junk query parameters answer 2xx or 4xx', async () => {
  const params: Array<Record<string, string>> = [
    ...values.map((value) => ({ where: JSON.stringify({ n: value }) })),
    ...values.map((value) => ({ where: JSON.stringify(value) })),
    { where: '{"n":' },
    { order: '-,,--x' },
    { order: 'a.b.c,-$x' },
    { keys: '-' },
    { keys: 'a..b' },
    { limit: 'many' },
    { limit: '1e3' },
    { skip: '-5' },
    { skip: '99999999999999999999' },
    { count: 'maybe' },
    { where: JSON.stringify({ $and: [{ $or: [{ n: { $regex: '[' } }] }] }) },
    { where: '{"$or":['.repeat(500) + '{}' + ']}'.repeat(500) },
    { where: JSON.stringify({ n: { $in: Array.from({ length: 50_000 }, (_, i) => i) } }) },
  ];
  for (const query of params) {
    const res = await server.client.get('/1.1/classes/Fuzz', { query });
    assert.ok(res.status < 500, `${JSON.stringify(query)} → ${res.status} ${res.text.slice(0, 200)}`);
    const update = await server.client.put(`/1.1/classes/Fuzz/${existingId}`, { n: 1 }, { query });
    assert.ok(update.status < 500, `update ${JSON.stringify(query)} → ${update.status} ${update.text.slice(0, 200)}`);
  }
});

test('odd paths and ids answer 2xx or 4xx', async () => {
  const paths = [
    '/1.1/classes/%00',
    '/1.1/classes/Fuzz/%00',
    '/1.1/classes/Fuzz/' + 'a'.repeat(5000),
    '/1.1/classes/Fuzz/..%2F..%2Fetc',
    '/1.1/classes/' + 'A'.repeat(300),
    '/1.1/classes/Fuzz/,,,',
    '/1.1/users/%ZZ',
    '/1.1/users/%00',
    '/1.1/classes/_User/%00',
  ];
  for (const path of paths) {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await server.client.request(method, path, method === 'GET' ? {} : { body: {} });
      assert.ok(res.status < 500, `${method} ${path.slice(0, 60)} → ${res.status} ${res.text.slice(0, 200)}`);
    }
  }
});

// Regression: a lone UTF-16 surrogate reached PostgreSQL's jsonb and answered 500 there.
test('a string with a lone surrogate is refused with 111 on every store, and nothing is stored', async () => {
  const message = 'Strings must be valid Unicode (a lone surrogate was found).';
  const created = await server.client.request('POST', '/1.1/classes/Surrogate', { raw: '{"name":"a\\ud800b"}' });
  assert.equal(created.status, 400);
  assert.deepEqual(created.body, { code: 111, error: message });
  const query = await server.client.get('/1.1/classes/Surrogate', { query: { where: '{"name":"\\udc00"}' } });
  assert.equal(query.status, 400);
  assert.deepEqual(query.body, { code: 111, error: message });
  const nested = await server.client.request('POST', '/1.1/classes/Surrogate', { raw: '{"obj":{"k\\ud800":1}}' });
  assert.equal(nested.status, 400);
  assert.equal(nested.body.code, 121);
  const stored = await server.master.get('/1.1/classes/Surrogate');
  assert.deepEqual(stored.body, { results: [] });
});

// The routes added after the tests above: installations, push and its records, scheduled pushes,
// SMS, mail requests, account actions and the makers' receipt callback.
test('junk bodies on the installation, push, SMS, mail and callback routes answer 2xx or 4xx', async () => {
  const installation = await server.client.post('/1.1/installations', { installationId: 'fuzz-install-1', deviceType: 'android' });
  const user = await server.client.post('/1.1/users', { username: 'fuzz-user', password: 'fuzz-pass-1' });
  const asUser = server.client.withSession(user.body.sessionToken);
  const targets: Array<[string, string, typeof server.client]> = [
    ['POST', '/1.1/installations', server.client],
    ['PUT', `/1.1/installations/${installation.body.objectId}`, server.client],
    ['POST', '/1.1/classes/_Installation', server.client],
    ['POST', '/1.1/push', server.master],
    ['DELETE', '/1.1/scheduledPushMessages/1', server.master],
    ['POST', '/1.1/requestSmsCode', server.client],
    ['POST', '/1.1/verifySmsCode/123456', server.client],
    ['POST', '/1.1/requestLoginSmsCode', server.client],
    ['POST', '/1.1/usersByMobilePhone', server.client],
    ['POST', '/1.1/requestMobilePhoneVerify', server.client],
    ['POST', '/1.1/verifyMobilePhone/123456', server.client],
    ['POST', '/1.1/requestPasswordResetBySmsCode', server.client],
    ['POST', '/1.1/requestChangePhoneNumber', asUser],
    ['POST', '/1.1/changePhoneNumber', asUser],
    ['PUT', '/1.1/resetPasswordBySmsCode/123456', server.client],
    ['POST', '/1.1/requestEmailVerify', server.client],
    ['POST', '/1.1/requestPasswordReset', server.client],
    ['PUT', `/1.1/users/${user.body.objectId}/updatePassword`, asUser],
    ['PUT', `/1.1/users/${user.body.objectId}/refreshSessionToken`, asUser],
    ['POST', '/push/v1/callback/honor', server.client],
  ];
  for (const [method, path, client] of targets) {
    for (const raw of junkBodies()) assertClientError(`${method} ${path} ${raw.slice(0, 80)}`, await client.request(method, path, { raw }));
  }
});

test('junk query parameters and ids on the installation, push and scheduled push routes answer 2xx or 4xx', async () => {
  const queries: Array<Record<string, string>> = [
    ...values.map((value) => ({ where: JSON.stringify({ channels: value }) })),
    ...values.map((value) => ({ where: JSON.stringify(value) })),
    { limit: 'many' },
    { limit: '-1' },
    { skip: '99999999999999999999' },
    { order: '-,,--x' },
    { count: 'maybe' },
  ];
  for (const query of queries) {
    for (const path of ['/1.1/installations', '/1.1/classes/_Installation', '/1.1/notifications', '/1.1/scheduledPushMessages']) {
      assertClientError(`GET ${path} ${JSON.stringify(query).slice(0, 80)}`, await server.master.get(path, { query }));
    }
  }
  const ids = ['%00', '%ZZ', 'a'.repeat(5000), '..%2F..%2Fetc', ',,,', '-1', '1e3', '99999999999999999999'];
  for (const id of ids) {
    for (const [method, path] of [
      ['GET', `/1.1/installations/${id}`],
      ['PUT', `/1.1/installations/${id}`],
      ['DELETE', `/1.1/installations/${id}`],
      ['GET', `/1.1/notifications/${id}`],
      ['DELETE', `/1.1/notifications/${id}`],
      ['GET', `/1.1/tables/Notifications/${id}`],
      ['DELETE', `/1.1/scheduledPushMessages/${id}`],
      ['POST', `/1.1/verifySmsCode/${id}`],
      ['PUT', `/1.1/resetPasswordBySmsCode/${id}`],
    ]) {
      const res = await server.master.request(method, path, method === 'GET' ? {} : { body: {} });
      assertClientError(`${method} ${path.slice(0, 60)}`, res);
    }
  }
});

test('junk in each field of installations, push, SMS and settings bodies answers 2xx or 4xx', async () => {
  const phone = '+8613800138000';
  const shapes: Array<[string, string, typeof server.client, (value: unknown) => unknown]> = [
    ['POST', '/1.1/installations', server.client, (v) => ({ installationId: v, deviceType: 'android' })],
    ['POST', '/1.1/installations', server.client, (v) => ({ installationId: 'fuzz-field-1', deviceType: v })],
    ['POST', '/1.1/installations', server.client, (v) => ({ installationId: 'fuzz-field-2', channels: v })],
    ['POST', '/1.1/installations', server.client, (v) => ({ installationId: 'fuzz-field-3', vendor: v, registrationId: v })],
    ['POST', '/1.1/installations', server.client, (v) => ({ installationId: 'fuzz-field-4', deviceProfile: v, valid: v })],
    ...['data', 'where', 'channels', 'push_time', 'expiration_time', 'expiration_interval', 'hms', 'prod', 'req_id', 'notification_id', 'flow_control'].map(
      (field): [string, string, typeof server.client, (value: unknown) => unknown] => [
        'POST',
        '/1.1/push',
        server.master,
        (v) => ({ data: { alert: 'fuzz' }, where: { installationId: 'nobody' }, [field]: v }),
      ],
    ),
    ['POST', '/1.1/push', server.master, (v) => ({ data: { alert: v, title: v, silent: v }, where: { installationId: 'nobody' } })],
    ['POST', '/1.1/requestSmsCode', server.client, (v) => ({ mobilePhoneNumber: v })],
    ['POST', '/1.1/usersByMobilePhone', server.client, (v) => ({ mobilePhoneNumber: phone, smsCode: v })],
    ['POST', '/1.1/verifySmsCode/123456', server.client, (v) => ({ mobilePhoneNumber: v })],
    ...['vendors', 'authProviders', 'sms', 'commercial', 'mixedPush', 'verifyEmailText', 'androidIntentHostname'].map(
      (field): [string, string, typeof server.client, (value: unknown) => unknown] => ['PUT', '/1.1/settings', server.master, (v) => ({ [field]: v })],
    ),
    ['PUT', '/1.1/settings', server.master, (v) => ({ vendors: { _default: { HMS: v } } })],
  ];
  for (const [method, path, client, body] of shapes) {
    for (const value of values) {
      const raw = JSON.stringify(body(value));
      assertClientError(`${method} ${path} ${raw.slice(0, 100)}`, await client.request(method, path, { raw }));
    }
  }
});
