// Registration (SPEC §4.1 row 1): required fields, response shape, uniqueness under races, both path families.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { assertNoSecretsIn, uniqueName } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  // No password, hash or token of this file's flows reached a log line.
  if (server) assertNoSecretsIn(server.logs, ['secret-pw-1', 'pw-batch']);
  await server?.close();
});

const isoMs = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test('sign-up answers 201 with Location, the user and a session token', async () => {
  const username = uniqueName();
  const response = await server.client.post('/1.1/users', {
    username,
    password: 'secret-pw-1',
    nickname: 'Ann',
    age: 30,
    tags: ['a', 'b'],
    born: { __type: 'Date', iso: '1990-01-02T03:04:05.000Z' },
  });
  assert.equal(response.status, 201, response.text);
  const body = response.body;
  assert.equal(response.headers.get('location'), `/1.1/classes/_User/${body.objectId}`);
  assert.match(body.objectId, /^[a-z0-9]{24}$/);
  assert.match(body.createdAt, isoMs);
  assert.equal(body.updatedAt, body.createdAt);
  assert.match(body.sessionToken, /^[a-z0-9]{25}$/);
  assert.deepEqual(
    { ...body, objectId: undefined, createdAt: undefined, updatedAt: undefined, sessionToken: undefined },
    {
      username,
      nickname: 'Ann',
      age: 30,
      tags: ['a', 'b'],
      born: { __type: 'Date', iso: '1990-01-02T03:04:05.000Z' },
      emailVerified: null,
      mobilePhoneVerified: false,
      objectId: undefined,
      createdAt: undefined,
      updatedAt: undefined,
      sessionToken: undefined,
    },
  );
  assert.equal('password' in body, false);

  // Custom fields are stored as given.
  const read = await server.master.get(`/1.1/users/${body.objectId}`);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.nickname, 'Ann');
  assert.deepEqual(read.body.born, { __type: 'Date', iso: '1990-01-02T03:04:05.000Z' });
  assert.equal('sessionToken' in read.body, false);
  assert.equal('password' in read.body, false);
});

test('missing and blank username or password', async () => {
  const cases: Array<[Record<string, unknown>, number]> = [
    [{ password: 'pw' }, 200],
    [{ username: null, password: 'pw' }, 200],
    [{ username: '', password: 'pw' }, 217],
    [{ username: '   ', password: 'pw' }, 217],
    [{ username: 12, password: 'pw' }, 217],
    [{ username: uniqueName() }, 201],
    [{ username: uniqueName(), password: '' }, 218],
    [{ username: uniqueName(), password: '  ' }, 218],
    [{ username: uniqueName(), password: 42 }, 218],
  ];
  for (const [body, code] of cases) {
    const response = await server.client.post('/1.1/users', body);
    assert.equal(response.status, 400, `${JSON.stringify(body)} → ${response.text}`);
    assert.equal(response.body.code, code, `${JSON.stringify(body)} → ${response.text}`);
    assert.equal(typeof response.body.error, 'string');
  }
  const notObject = await server.client.post('/1.1/users', [1, 2]);
  assert.equal(notObject.status, 400);
  assert.equal(notObject.body.code, 107);
});

test('usernames are unique and case sensitive; emails and phones are unique', async () => {
  const name = uniqueName('Case');
  const first = await server.client.post('/1.1/users', { username: name, password: 'pw' });
  assert.equal(first.status, 201, first.text);
  const again = await server.client.post('/1.1/users', { username: name, password: 'other' });
  assert.equal(again.status, 400);
  assert.deepEqual(again.body, { code: 202, error: 'Username has already been taken.' });
  const otherCase = await server.client.post('/1.1/users', { username: name.toLowerCase(), password: 'pw' });
  assert.equal(otherCase.status, 201, otherCase.text);

  const email = `${uniqueName()}@example.com`;
  const withEmail = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw', email });
  assert.equal(withEmail.status, 201, withEmail.text);
  const sameEmail = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw', email });
  assert.equal(sameEmail.body.code, 203, sameEmail.text);
  const emailOtherCase = await server.client.post('/1.1/users', {
    username: uniqueName(),
    password: 'pw',
    email: email.toUpperCase(),
  });
  assert.equal(emailOtherCase.status, 201, emailOtherCase.text);

  const phone = `+86${Math.floor(Math.random() * 1e10)}`;
  const withPhone = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw', mobilePhoneNumber: phone });
  assert.equal(withPhone.status, 201, withPhone.text);
  const samePhone = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw', mobilePhoneNumber: phone });
  assert.equal(samePhone.status, 400);
  assert.equal(samePhone.body.code, 214, samePhone.text);

  const badEmail = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw', email: 'not-an-email' });
  assert.equal(badEmail.body.code, 125, badEmail.text);
});

async function race(field: 'username' | 'email' | 'mobilePhoneNumber', value: string, code: number) {
  const responses = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      server.client.post('/1.1/users', {
        username: field === 'username' ? value : uniqueName(`r${i}`),
        password: `pw-${i}`,
        [field]: value,
      }),
    ),
  );
  const created = responses.filter((r) => r.status === 201);
  const refused = responses.filter((r) => r.status === 400 && r.body.code === code);
  assert.equal(created.length, 1, responses.map((r) => r.text).join('\n'));
  assert.equal(refused.length, 49, responses.map((r) => r.text).join('\n'));
  const found = await server.master.get('/1.1/users', { query: { where: { [field]: value }, count: 1 } });
  assert.equal(found.body.count, 1);
}

test('50 concurrent sign-ups with one username: exactly one 201, the rest 202', async () => {
  await race('username', uniqueName('race'), 202);
});

test('50 concurrent sign-ups with one email: one 201, the rest 203', async () => {
  await race('email', `${uniqueName('race')}@example.com`, 203);
});

test('50 concurrent sign-ups with one phone number: one 201, the rest 214', async () => {
  await race('mobilePhoneNumber', `+1${Math.floor(Math.random() * 1e10)}`, 214);
});

test('the SDK paths: POST /1.1/classes/_User, ?new=true and /1.1/batch reach the same sign-up', async () => {
  const viaClasses = await server.client.post('/1.1/classes/_User?new=true', { username: uniqueName(), password: 'pw', x: 1 });
  assert.equal(viaClasses.status, 201, viaClasses.text);
  assert.equal(viaClasses.headers.get('location'), `/1.1/classes/_User/${viaClasses.body.objectId}`);
  assert.match(viaClasses.body.sessionToken, /^[a-z0-9]{25}$/);
  assert.equal(viaClasses.body.x, 1);
  assert.equal('password' in viaClasses.body, false);

  const name = uniqueName('batch');
  const batch = await server.client.post('/1.1/batch', {
    requests: [
      { method: 'POST', path: '/1.1/users', body: { username: name, password: 'pw-batch' } },
      { method: 'POST', path: '/1.1/classes/_User', body: { username: name, password: 'pw-batch' } },
      { method: 'POST', path: '/1.1/users', body: { username: uniqueName(), password: '' } },
    ],
  });
  assert.equal(batch.status, 200, batch.text);
  assert.match(batch.body[0].success.objectId, /^[a-z0-9]{24}$/);
  assert.match(batch.body[0].success.sessionToken, /^[a-z0-9]{25}$/);
  assert.equal('password' in batch.body[0].success, false);
  assert.deepEqual(batch.body[1], { error: { code: 202, error: 'Username has already been taken.' } });
  assert.equal(batch.body[2].error.code, 218);
  assert.equal(batch.text.includes('pw-batch'), false);
});

test('clients cannot set the verification flags or a session token at sign-up', async () => {
  const flagged = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw', emailVerified: true });
  assert.equal(flagged.status, 403, flagged.text);
  assert.equal(flagged.body.code, 119);
  const byMaster = await server.master.post('/1.1/users', { username: uniqueName(), password: 'pw', emailVerified: true });
  assert.equal(byMaster.status, 201, byMaster.text);
  assert.equal(byMaster.body.emailVerified, true);
  const token = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw', sessionToken: 'mine' });
  assert.equal(token.status, 201, token.text);
  assert.notEqual(token.body.sessionToken, 'mine');
});
