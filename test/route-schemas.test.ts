// Route schemas (src/http/schema.ts): a wrong-typed field on each declared route answers exactly what the
// hand-written checks the schemas replaced answered (status, code, message), in the same order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import type { Client } from './helpers/client.ts';
import { catalogue } from '../src/lib/errors.ts';

let server: TestServer;
let user: SignedUpUser;
before(async () => {
  server = await startServer();
  user = await signUp(server.client);
});
after(async () => {
  await server?.close();
});

type Case = [body: unknown, status: number, code: number, error: string];
const invalidJson = catalogue.invalidJson.message;

async function expectAll(client: Client, method: string, path: string, cases: Case[], session?: string): Promise<void> {
  for (const [body, status, code, error] of cases) {
    const response = await client.request(method, path, body === undefined ? { session } : { body, session });
    assert.deepEqual([response.status, response.body], [status, { code, error }], `${method} ${path} ${JSON.stringify(body)}`);
  }
}

test('POST /1.1/login: each fault answers as before, in the same order', async () => {
  const identifier = 'Log in with a username, an email or a mobilePhoneNumber.';
  await expectAll(server.client, 'POST', '/1.1/login', [
    [undefined, 400, 107, invalidJson],
    [[], 400, 107, invalidJson],
    ['text', 400, 107, invalidJson],
    [{}, 400, 200, identifier],
    [{ username: null, email: null, password: 'x' }, 400, 200, identifier],
    // Several identifiers: the first one counts, the others are not checked (the Python SDK sends them all).
    [{ username: 'a', email: 5, mobilePhoneNumber: [], password: 'x' }, 400, 211, catalogue.userNotFound.message],
    [{ username: 5, mobilePhoneNumber: 7 }, 400, 217, catalogue.usernameBlank.message],
    [{ email: 'a@b.c', mobilePhoneNumber: [], password: 'x' }, 400, 211, catalogue.userNotFound.message],
    [{ username: 5, password: 'x' }, 400, 217, catalogue.usernameBlank.message],
    [{ username: ' \n', password: 'x' }, 400, 217, catalogue.usernameBlank.message],
    [{ email: 5, password: 'x' }, 400, 125, catalogue.invalidEmail.message],
    [{ mobilePhoneNumber: [], password: 'x' }, 400, 127, catalogue.invalidPhone.message],
    [{ username: 5 }, 400, 217, catalogue.usernameBlank.message],
    [{ username: 'nobody' }, 400, 201, catalogue.passwordMissing.message],
    [{ username: 'nobody', password: null }, 400, 201, catalogue.passwordMissing.message],
    [{ username: 'nobody', password: 5 }, 400, 218, catalogue.passwordBlank.message],
    [{ username: 'nobody', password: '' }, 400, 218, catalogue.passwordBlank.message],
    [{ username: 'nobody', password: 'x' }, 400, 211, catalogue.userNotFound.message],
    [{ username: user.username, password: 'wrong' }, 400, 210, catalogue.passwordMismatch.message],
    // smsCode without a password is the SMS login, checked by its own flow.
    [{ smsCode: '123456' }, 400, 212, catalogue.phoneMissing.message],
    [{ smsCode: '1', password: 'x' }, 400, 200, identifier],
  ]);
  const ok = await server.client.request('POST', '/1.1/login', { body: { username: user.username, password: user.password, extra: [1] } });
  assert.equal(ok.status, 200);
});

test('object writes: a body that is not an object is 107, after who may write the class or the user', async () => {
  const notObjects: Case[] = [[[], 400, 107, invalidJson], ['text', 400, 107, invalidJson], [5, 400, 107, invalidJson]];
  for (const path of ['/1.1/classes/Scored', '/1.1/classes/_User', '/1.1/users', '/1.1/installations', '/1.1/roles']) {
    await expectAll(server.client, 'POST', path, [...notObjects, [null, 400, 107, invalidJson]]);
  }
  for (const path of ['/1.1/classes/Scored/someId', '/1.1/installations/someId', '/1.1/roles/someId']) {
    await expectAll(server.master, 'PUT', path, notObjects);
  }
  // An update without a body is not refused for it.
  const empty = await server.master.request('PUT', '/1.1/classes/Scored/someId');
  assert.deepEqual([empty.status, empty.body], [400, { code: 1, error: "Could not find object by id 'someId' for class 'Scored'." }]);
  for (const path of [`/1.1/users/${user.objectId}`, `/1.1/classes/_User/${user.objectId}`]) {
    await expectAll(server.client, 'PUT', path, [[[], 403, 206, catalogue.sessionMissing.message]]);
    await expectAll(server.client, 'PUT', path, notObjects, user.sessionToken);
    // The condition is read before the session is asked for, as the update always did.
    const badWhere = await server.client.request('PUT', path, { body: [], query: { where: '[' } });
    assert.deepEqual([badWhere.status, badWhere.body], [400, { code: 107, error: 'where is not valid JSON.' }]);
  }
  const refused = await server.client.request('PUT', '/1.1/classes/_File/someId', { body: [] });
  assert.deepEqual([refused.status, refused.body.code], [403, 119]);
  const unsupported = await server.client.request('POST', '/1.1/classes/_Conversation', { body: [] });
  assert.deepEqual([unsupported.status, unsupported.body], [400, { code: 1, error: 'Not supported yet: instant messaging (_Conversation).' }]);
});

test('PUT /1.1/settings and PUT|POST /1.1/schemas/<class>: the master key, the class, then the body', async () => {
  await expectAll(server.client, 'PUT', '/1.1/settings', [[[], 403, 403, catalogue.masterKeyRequired.message]]);
  const settings = 'Settings must be a JSON object.';
  await expectAll(server.master, 'PUT', '/1.1/settings', [
    [[], 400, 107, settings],
    ['text', 400, 107, settings],
    [null, 400, 107, settings],
    [{ clientPushAllowed: 'yes' }, 400, 111, 'clientPushAllowed must be true or false.'],
  ]);
  const change = 'A schema change is {"<field>": {"type": "…", "className": "…", "default": …}}.';
  for (const method of ['PUT', 'POST']) {
    await expectAll(server.client, method, '/1.1/schemas/Scored', [[[], 403, 403, catalogue.masterKeyRequired.message]]);
    const badClass = await server.master.request(method, '/1.1/schemas/9bad', { body: [] });
    assert.deepEqual([badClass.status, badClass.body.code], [400, 103]);
    await expectAll(server.master, method, '/1.1/schemas/Scored', [
      [[], 400, 107, change],
      [{}, 400, 107, change],
      [5, 400, 107, change],
      [{ score: 5 }, 400, 107, `Field 'score': expected {"type": "…", "className": "…", "default": …}.`],
    ]);
  }
});

test('verifySmsCode and verifyMobilePhone: a body of any shape is read as no number', async () => {
  for (const path of ['/1.1/verifySmsCode/123456', '/1.1/verifyMobilePhone/123456']) {
    await expectAll(server.client, 'POST', path, [
      [undefined, 400, 603, catalogue.invalidSmsCode.message],
      [[], 400, 603, catalogue.invalidSmsCode.message],
      ['text', 400, 603, catalogue.invalidSmsCode.message],
      [{ mobilePhoneNumber: 5 }, 400, 127, 'The mobile phone number is invalid: give it in E.164 form, like +8613800138000.'],
    ]);
  }
});

test('POST /1.1/batch and /1.1/batch/save: the envelope from the schema, each sub-request in turn from the runner', async () => {
  const needs = 'A batch needs a "requests" array.';
  for (const path of ['/1.1/batch', '/1.1/batch/save']) {
    await expectAll(server.client, 'POST', path, [
      [[], 400, 107, needs],
      [{}, 400, 107, needs],
      [{ requests: null }, 400, 107, needs],
      [{ requests: {} }, 400, 107, needs],
      [{ requests: Array(501).fill(5) }, 400, 107, 'A batch may hold at most 500 requests.'],
      // The first bad sub-request is answered, whatever follows it.
      [{ requests: [{ method: 'GET', path: '/1.1/other' }, 5] }, 400, 107, 'requests[0]: path must be a /1.1/classes, /1.1/users, /1.1/installations or /1.1/files path without a query string.'],
      [{ requests: [{ method: 'GET', path: '/1.1/classes/Scored' }, 5] }, 400, 107, 'requests[1]: must be an object.'],
    ]);
  }
});

test('cloudQuery, scan, notifications, scheduled push and index drops: wrong-typed inputs answer as before, after the master key', async () => {
  // A POST body that is not an object is read as none: the statement is the query string's.
  for (const body of [[], 5]) {
    const response = await server.client.request('POST', '/1.1/cloudQuery', { body, query: { cql: 'select * from Scored' } });
    assert.equal(response.status, 200, JSON.stringify(body));
  }
  await expectAll(server.client, 'POST', '/1.1/cloudQuery', [
    [{ cql: 5 }, 400, 300, 'CQL syntax error.Detail: cql is missing.'],
    [{ cql: 'select * from Scored', pvalues: 5 }, 400, 107, 'pvalues must be a JSON array.'],
  ]);
  const forbidden: Array<[string, string, string]> = [
    ['GET', '/1.1/scan/classes/Scored', 'Scan needs the master key.'],
    ['GET', '/1.1/notifications', catalogue.masterKeyRequired.message],
    ['DELETE', '/1.1/scheduledPushMessages/abc', catalogue.masterKeyRequired.message],
    ['DELETE', '/1.1/indexes/9bad/byX', catalogue.masterKeyRequired.message],
  ];
  for (const [method, path, error] of forbidden) {
    const response = await server.client.request(method, path, { query: { limit: 'x' } });
    assert.deepEqual([response.status, response.body], [403, { code: 403, error }], `${method} ${path}`);
  }
  const badJob = await server.master.request('DELETE', '/1.1/scheduledPushMessages/abc');
  assert.deepEqual([badJob.status, badJob.body], [404, { code: 101, error: 'No scheduled push with id "abc".' }]);
  const badLimit = await server.master.request('GET', '/1.1/notifications', { query: { limit: 'x' } });
  assert.deepEqual([badLimit.status, badLimit.body], [400, { code: 102, error: 'limit must be a whole number.' }]);
});
