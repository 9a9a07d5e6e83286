// The requests Waline's LeanCloud storage adapter, Valine's widget and the Hexo/NexT visitor counter send, as
// scripts/apps-check.sh recorded them (docs/compatibility.md "Waline and Valine"), with the answers those apps
// rely on. That script installs the apps and is not part of CI; this file keeps their wire in the suite.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const publicAcl = { '*': { read: true, write: true } };
const date = (iso: string) => ({ __type: 'Date', iso });

async function created(className: string, body: Record<string, unknown>) {
  const res = await server.master.post(`/1.1/classes/${className}`, body);
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['createdAt', 'objectId']);
  return res.body as { objectId: string; createdAt: string };
}

async function find(className: string, query: Record<string, unknown>, client = server.master) {
  const res = await client.get(`/1.1/classes/${className}`, { query });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

test("Waline's comment list: status $nin also matches comments with no status (Valine's), keys, order, count", async () => {
  const waline = await created('WComment', { url: '/a', nick: 'Ann', comment: 'hi', status: 'approved', insertedAt: date('2026-01-01T00:00:00.000Z'), ACL: publicAcl });
  const valine = await created('WComment', { url: '/a', nick: 'Old', comment: 'from Valine', insertedAt: date('2026-01-02T00:00:00.000Z') });
  await created('WComment', { url: '/a', nick: 'Spam', comment: 'buy', status: 'spam', insertedAt: date('2026-01-03T00:00:00.000Z') });
  const where = { url: '/a', status: { $nin: ['waiting', 'spam'] } };
  assert.deepEqual(await find('WComment', { where, limit: 0, count: 1 }), { results: [], count: 2 });
  assert.deepEqual(await find('WComment', { where, keys: 'status,comment,insertedAt,nick,pid,rid,user_id', order: '-insertedAt' }), {
    results: [
      { objectId: valine.objectId, createdAt: valine.createdAt, updatedAt: valine.createdAt, comment: 'from Valine', nick: 'Old', insertedAt: date('2026-01-02T00:00:00.000Z') },
      { objectId: waline.objectId, createdAt: waline.createdAt, updatedAt: waline.createdAt, comment: 'hi', nick: 'Ann', status: 'approved', insertedAt: date('2026-01-01T00:00:00.000Z') },
    ],
  });
  // A signed-in user also sees their own waiting comments: Waline's `_complex` or.
  const own = await created('WComment', { url: '/a', comment: 'mine', status: 'waiting', user_id: 'u1' });
  const mine = await find('WComment', { where: { $or: [{ url: '/a', status: { $nin: ['waiting', 'spam'] } }, { url: '/a', user_id: 'u1' }] }, keys: 'comment' });
  assert.deepEqual(mine.results.map((o: { objectId: string }) => o.objectId).sort(), [waline.objectId, valine.objectId, own.objectId].sort());
});

test("Waline's admin search: the SDK's contains (\\Q…\\E) matches regex characters and Chinese text literally, case-sensitively", async () => {
  const hit = await created('WSearch', { comment: '你好, C++ (v2.0)? [x] $1 ^ a\\Eb' });
  await created('WSearch', { comment: 'plain' });
  // leancloud-storage's _quote: '\Q' + s.replace('\E', '\E\\E\Q') + '\E'.
  const quote = (s: string) => `\\Q${s.replace('\\E', '\\E\\\\E\\Q')}\\E`;
  for (const keyword of ['C++ (v2.0)?', '[x] $1 ^', '你好', 'a\\Eb']) {
    const found = await find('WSearch', { where: { comment: { $regex: quote(keyword) } }, keys: 'comment' });
    assert.deepEqual(found.results.map((o: { objectId: string }) => o.objectId), [hit.objectId], keyword);
  }
  assert.deepEqual(await find('WSearch', { where: { comment: { $regex: quote('c++') } } }), { results: [] });
});

test("Waline's delete of a comment with its replies: destroyAll's one DELETE of comma-joined ids in /1.1/batch", async () => {
  const ids = [];
  for (const comment of ['root', 'reply', 'reply 2']) ids.push((await created('WDelete', { comment, ACL: publicAcl })).objectId);
  const res = await server.master.post('/1.1/batch', { requests: [{ method: 'DELETE', path: `/1.1/classes/WDelete/${ids.join(',')}`, body: {} }] });
  assert.deepEqual([res.status, res.body], [200, [{ success: {} }]]);
  // The class was written, so it still exists when empty: no 101 (Waline empties tables in its import tool).
  assert.deepEqual(await find('WDelete', {}), { results: [] });
});

test("Valine's widget with the app key: root comments ($or of no rid), replies by CQL, a user-readable ACL", async () => {
  const acl = { '*': { read: true } };
  const root = await created('VComment', { url: '/v', comment: 'root', insertedAt: date('2026-01-01T00:00:00.000Z'), ACL: acl });
  const reply = await created('VComment', { url: '/v', comment: 'reply', rid: root.objectId, pid: root.objectId, ACL: acl });
  const where = { $or: [{ rid: { $exists: false } }, { rid: '' }], url: '/v' };
  assert.deepEqual(await find('VComment', { where, order: '-createdAt,-insertedAt', limit: 0, count: 1 }, server.client), { results: [], count: 1 });
  const roots = await find('VComment', { where, order: '-createdAt,-insertedAt', limit: 10, skip: 0 }, server.client);
  assert.deepEqual(roots.results.map((o: { objectId: string }) => o.objectId), [root.objectId]);
  const cql = await server.client.get('/1.1/cloudQuery', { query: { cql: `select * from VComment where rid in ("${root.objectId}") order by -createdAt,-createdAt` } });
  assert.deepEqual([cql.status, cql.body], [
    200,
    { results: [{ objectId: reply.objectId, createdAt: reply.createdAt, updatedAt: reply.createdAt, url: '/v', comment: 'reply', rid: root.objectId, pid: root.objectId }], className: 'VComment' },
  ]);
  // Valine's ACL leaves the comment read-only to visitors.
  const edit = await server.client.put(`/1.1/classes/VComment/${root.objectId}`, { comment: 'changed' });
  assert.equal(edit.status, 403, edit.text);
});

test("NexT's visitor counter with the app key: create, Increment, read several pages with $in", async () => {
  const counter = await server.client.post('/1.1/classes/NCounter', { title: 'Post', url: '/p', time: 1 });
  assert.equal(counter.status, 201, counter.text);
  const found = await find('NCounter', { where: { url: '/p' } }, server.client);
  assert.deepEqual(found.results.map((o: { time: number }) => o.time), [1]);
  const put = await server.client.put(`/1.1/classes/NCounter/${counter.body.objectId}`, { time: { __op: 'Increment', amount: 1 } });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(Object.keys(put.body).sort(), ['objectId', 'updatedAt']);
  const index = await find('NCounter', { where: { url: { $in: ['/p', '/q'] } }, keys: 'url,time' }, server.client);
  assert.deepEqual(index.results.map((o: { url: string; time: number }) => [o.url, o.time]), [['/p', 2]]);
});

test('a query on a class never written is 200 and empty, count 0 (hosted: 404/101, which these apps read as empty)', async () => {
  assert.deepEqual(await find('NeverWritten', { where: { url: '/x' } }, server.client), { results: [] });
  assert.deepEqual(await find('NeverWritten', { limit: 0, count: 1 }, server.client), { results: [], count: 0 });
});

test("Waline's two-factor secret: a field named 2fa is written, read with keys= and queried", async () => {
  const user = await created('WUsers', { email: 'a@example.com', '2fa': 'SECRET', ACL: publicAcl });
  const read = await find('WUsers', { where: { objectId: user.objectId, type: { $ne: 'banned' } }, keys: 'id,email,2fa' });
  assert.deepEqual(read.results, [{ objectId: user.objectId, createdAt: user.createdAt, updatedAt: user.createdAt, email: 'a@example.com', '2fa': 'SECRET' }]);
});
