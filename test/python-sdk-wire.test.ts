// What the LeanCloud Python SDK (leancloud/python-sdk 3.0.2) sends and its own suite expects from the hosted service
// (scripts/python-sdk-suite.sh; docs/compatibility.md "The Python SDK's suite"). Each test pins one difference its
// first run against Roost found: a login carrying every field of the user, flow_control below 1000, $all of one
// value on a scalar field, $box corners as [longitude, latitude], and CQL pvalues encoded twice or not used.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp } from './helpers/accounts.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

test('a login with several identifiers logs in with the first of username, email, mobilePhoneNumber (User.login)', async () => {
  const email = `py-${Date.now()}@example.com`;
  const user = await signUp(server.client, { email });
  // What User.login posts after a first login: every attribute the object holds.
  const every = { username: user.username, password: user.password, email: 'someone-else@example.com', mobilePhoneNumber: '18611111111x', emailVerified: false };
  const login = await server.client.post('/1.1/login', every);
  assert.equal(login.status, 200, login.text);
  assert.equal(login.body.objectId, user.objectId);
  // The email counts when no username is given; the phone number after it is not looked at.
  const byEmail = await server.client.post('/1.1/login', { email: email, mobilePhoneNumber: [], password: user.password });
  assert.deepEqual([byEmail.status, byEmail.body.objectId], [200, user.objectId]);
  const wrong = await server.client.post('/1.1/login', { username: 'nobody-py', email: email, password: user.password });
  assert.deepEqual([wrong.status, wrong.body], [400, { code: 211, error: 'Could not find user.' }]);
});

test('push flow_control below 1000 counts as 1000 (push.send(flow_control=0)); not a whole number is 111', async () => {
  for (const [sent, kept] of [[0, 1000], [-5, 1000], [2500, 2500]]) {
    const pushed = await server.master.post('/1.1/push', { data: { alert: 'hi' }, prod: 'dev', flow_control: sent });
    assert.equal(pushed.status, 201, pushed.text);
    const record = await server.master.get(`/1.1/notifications/${pushed.body.objectId}`);
    assert.equal(record.body.flowControl, kept, record.text);
  }
  const bad = await server.master.post('/1.1/push', { data: { alert: 'hi' }, flow_control: 1.5 });
  assert.deepEqual([bad.status, bad.body], [400, { code: 111, error: 'flow_control must be a whole number of devices per second.' }]);
});

test('$all of one value matches a field holding that scalar as well as an array holding it (test_contains_all)', async () => {
  // A field keeps one type: scalars in one class, arrays in another.
  for (const score of [4, 5]) assert.equal((await server.master.post('/1.1/classes/PyScore', { score })).status, 201);
  for (const score of [[5, 6], [4]]) assert.equal((await server.master.post('/1.1/classes/PyScores', { score })).status, 201);
  const scores = async (className: string, all: unknown) => {
    const found = await server.master.get(`/1.1/classes/${className}`, { query: { where: JSON.stringify({ score: { $all: all } }), order: 'createdAt' } });
    assert.equal(found.status, 200, found.text);
    return found.body.results.map((o: { score: unknown }) => o.score);
  };
  assert.deepEqual(await scores('PyScore', [5]), [5]);
  assert.deepEqual(await scores('PyScore', [5, 5]), [5]);
  assert.deepEqual(await scores('PyScores', [5]), [[5, 6]]);
  // Two different values: only an array holds both.
  assert.deepEqual(await scores('PyScore', [5, 4]), []);
  assert.deepEqual(await scores('PyScores', [6, 5]), [[5, 6]]);
});

test('$within $box takes corners as [longitude, latitude] pairs as well as GeoPoints (within_geo_box with tuples)', async () => {
  for (const i of [0, 1, 2]) {
    await server.master.post('/1.1/classes/PyPlace', { i, location: { __type: 'GeoPoint', latitude: i, longitude: -i } });
  }
  const found = async (box: unknown[]) => {
    const res = await server.master.get('/1.1/classes/PyPlace', { query: { where: JSON.stringify({ location: { $within: { $box: box } } }) } });
    return [res.status, res.status === 200 ? res.body.results.map((o: { i: number }) => o.i) : res.body];
  };
  assert.deepEqual(await found([[0, 0], [11, 11]]), [200, [0]]);
  assert.deepEqual(await found([[-1.5, 0.5], [0, 1.5]]), [200, [1]]);
  const point = (latitude: number, longitude: number) => ({ __type: 'GeoPoint', latitude, longitude });
  assert.deepEqual(await found([point(0.5, -1.5), [0, 1.5]]), [200, [1]]);
  assert.deepEqual(await found([[0], [1, 1]]), [400, { code: 102, error: '$box needs a GeoPoint or [longitude, latitude].' }]);
  assert.deepEqual(await found([[0, 91], [1, 1]]), [400, { code: 302, error: 'Invalid GeoPoint values.' }]);
});

test('CQL pvalues may be a JSON string holding the array, and go unused by a statement without placeholders (do_cloud_query)', async () => {
  for (const score of [1, 2, 3]) await server.master.post('/1.1/classes/PyCql', { score });
  const cql = (params: Record<string, string>) => server.client.get('/1.1/cloudQuery', { query: params });
  // do_cloud_query(cql, ["score"]) sends pvalues=json.dumps(json.dumps(["score"])).
  const unused = await cql({ cql: 'select count(*), * from PyCql where score < 11', pvalues: JSON.stringify(JSON.stringify(['score'])) });
  assert.equal(unused.status, 200, unused.text);
  assert.deepEqual([unused.body.count, unused.body.className, unused.body.results.length], [3, 'PyCql', 3]);
  const twice = await cql({ cql: 'select count(*) from PyCql where score > ?', pvalues: JSON.stringify(JSON.stringify([1])) });
  assert.deepEqual([twice.status, twice.body], [200, { results: [], className: 'PyCql', count: 2 }]);
  const short = await cql({ cql: 'select * from PyCql where score > ? and score < ?', pvalues: '[1]' });
  assert.deepEqual([short.status, short.body], [400, { code: 300, error: 'CQL syntax error.Detail: the statement has 2 placeholders (?) and pvalues holds 1 values.' }]);
  const text = await cql({ cql: 'select * from PyCql', pvalues: JSON.stringify('not an array') });
  assert.deepEqual([text.status, text.body], [400, { code: 107, error: 'pvalues must be a JSON array.' }]);
});
