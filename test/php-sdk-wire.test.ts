// What the LeanCloud PHP SDK (leancloud/php-sdk 0.14.2) sends and its own suite expects from the hosted service
// (scripts/php-sdk-suite.sh; docs/compatibility.md "The PHP SDK"). Each test pins one difference its first run
// against Roost found: signatures in seconds (every request but the first failed with 401), users/me's
// `session_token` parameter, codes 1 and 304 on operations the hosted service refused, a client-chosen file key
// without the master key, and changePhoneNumber checking its code before the session.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp } from './helpers/accounts.ts';
import { smsOutboxDir, uniquePhone } from './helpers/sms.ts';

let server: TestServer;
before(async () => {
  server = await startServer({ env: { SMS_OUTBOX_DIR: smsOutboxDir() } });
});
after(async () => {
  await server?.close();
});

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const unauthorized = { code: 401, error: 'Unauthorized.' };

/** A GET signed as Client::buildHeaders signs: md5(time() . key), time() in seconds. */
async function signedInSeconds(seconds: number, key: string, flag = '') {
  const response = await fetch(`${server.url}/1.1/classes/Thing`, {
    headers: { 'X-LC-Id': server.appId, 'X-LC-Sign': `${md5(seconds + key)},${seconds}${flag}` },
  });
  return { status: response.status, body: await response.json() };
}

test('a signature whose timestamp is in seconds (the PHP SDK signs with time()) is accepted, within the same window', async () => {
  const now = Math.floor(Date.now() / 1000);
  assert.deepEqual(await signedInSeconds(now, server.appKey), { status: 200, body: { results: [] } });
  assert.deepEqual(await signedInSeconds(now - 14 * 60, server.masterKey, ',master'), { status: 200, body: { results: [] } });
  for (const stale of [now - 16 * 60, now + 16 * 60]) {
    assert.deepEqual(await signedInSeconds(stale, server.appKey), { status: 401, body: unauthorized });
  }
  assert.deepEqual(await signedInSeconds(now, 'not-the-key'), { status: 401, body: unauthorized });
});

test('users/me checks its session_token parameter, before the X-LC-Session header (User::isAuthenticated)', async () => {
  const user = await signUp(server.client);
  const other = await signUp(server.client);
  const byParameter = await server.client.withSession(undefined).get('/1.1/users/me', { query: { session_token: user.sessionToken } });
  assert.equal(byParameter.status, 200, byParameter.text);
  assert.equal(byParameter.body.objectId, user.objectId);
  assert.equal(byParameter.body.sessionToken, user.sessionToken);
  // The parameter wins over another user's header, and an unknown one is 211 though the header is good.
  assert.equal((await other.client.get('/1.1/users/me', { query: { session_token: user.sessionToken } })).body.objectId, user.objectId);
  const unknown = await other.client.get('/1.1/users/me', { query: { session_token: 'non-existent-token' } });
  assert.deepEqual([unknown.status, unknown.body], [400, { code: 211, error: 'Could not find user.' }]);
  // Elsewhere the parameter means nothing: the header's user is the caller.
  const object = await other.client.post('/1.1/classes/Note', { ACL: { [other.objectId]: { read: true, write: true } } });
  const read = await other.client.get(`/1.1/classes/Note/${object.body.objectId}`, { query: { session_token: user.sessionToken } });
  assert.equal(read.status, 200, read.text);
});

test('an unknown __op is code 1 (LeanAPITest::testSetHashValue); nothing is written', async () => {
  const created = await server.client.post('/1.1/classes/TestObject', { name: 'alice', attr: { age: 12 } });
  const path = `/1.1/classes/TestObject/${created.body.objectId}`;
  const refused = await server.client.put(path, { attr: { __op: 'add', objects: { favColor: 'Orange' } } });
  assert.deepEqual([refused.status, refused.body], [400, { code: 1, error: "Unsupported operation 'add'." }]);
  assert.deepEqual((await server.client.get(path)).body.attr, { age: 12 });
});

test('a Batch of array operations is code 304 (LeanAPITest::testBatchOperationOnArray); a relation Batch still works', async () => {
  const created = await server.client.post('/1.1/classes/TestObject', { name: 'Batch test', tags: [] });
  const path = `/1.1/classes/TestObject/${created.body.objectId}`;
  const ops = [
    { __op: 'Add', objects: ['javascript', 'frontend'] },
    { __op: 'Remove', objects: ['frontend', 'css'] },
  ];
  const refused = await server.client.put(path, { tags: { __op: 'Batch', ops } });
  const message = 'A Batch operation may hold only AddRelation and RemoveRelation.';
  assert.deepEqual([refused.status, refused.body], [400, { code: 304, error: message }]);
  const mixed = await server.client.put(path, {
    likes: { __op: 'Batch', ops: [{ __op: 'AddRelation', objects: [{ __type: 'Pointer', className: 'Post', objectId: 'p1' }] }, ops[0]] },
  });
  assert.deepEqual([mixed.status, mixed.body], [400, { code: 304, error: message }]);
  assert.deepEqual((await server.client.get(path)).body.tags, []);
  const pointer = (objectId: string) => ({ __type: 'Pointer', className: 'Post', objectId });
  const relation = await server.client.put(path, {
    likes: { __op: 'Batch', ops: [{ __op: 'AddRelation', objects: [pointer('p1'), pointer('p2')] }, { __op: 'RemoveRelation', objects: [pointer('p1')] }] },
  });
  assert.equal(relation.status, 200, relation.text);
});

test('fileTokens with a chosen key needs the master key, in the hosted words (FileTest::testSaveWithSpecifiedKeyWithoutMasterKey)', async () => {
  const body = { name: 'test.txt', key: 'abc', mime_type: 'text/plain', metaData: { size: 12, owner: 'unknown' } };
  const refused = await server.client.post('/1.1/fileTokens', body);
  assert.deepEqual([refused.status, refused.body], [400, { code: 1, error: 'Unsupported file key. Please use masterKey to set file key.' }]);
  const master = await server.master.post('/1.1/fileTokens', body);
  assert.equal(master.status, 200, master.text);
  assert.equal((await server.client.post('/1.1/fileTokens', { ...body, key: null })).status, 200);
});

test('changePhoneNumber checks the code before the session: a wrong one is 603 signed out too (UserTest::testChangePhoneNumber)', async () => {
  const signedOut = server.client.withSession(undefined);
  const wrong = await signedOut.post('/1.1/changePhoneNumber', { mobilePhoneNumber: uniquePhone(), code: '992989' });
  assert.deepEqual([wrong.status, wrong.body.code], [400, 603]);
  const user = await signUp(server.client);
  const withSession = await user.client.post('/1.1/changePhoneNumber', { mobilePhoneNumber: uniquePhone(), code: '992989' });
  assert.deepEqual([withSession.status, withSession.body.code], [400, 603]);
});
