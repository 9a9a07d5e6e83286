// A query page without `keys`, `returnACL` or `include` goes out as its objects' stored fields spliced
// with ids and dates (ObjectService.findJson, wirePageJson in src/objects/wire.ts): no parse, copy and
// serialisation of each object. This holds its bytes to the full path's (keys=-notAField parses every
// object and answers through answerObjects), whatever the fields hold, with count, relation fields,
// redirectClassNameForKey, File values and server-owned keys in stored data.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

/** The page as sent, and as the full path sends it. */
async function bothPaths(className: string, query: Record<string, unknown>): Promise<[string, string]> {
  const plain = await server.client.get(`/1.1/classes/${className}`, { query });
  const full = await server.client.get(`/1.1/classes/${className}`, { query: { ...query, keys: '-notAField' } });
  assert.equal(plain.status, 200, plain.text);
  assert.equal(full.status, 200, full.text);
  assert.equal(plain.headers.get('content-type'), 'application/json; charset=utf-8');
  return [plain.text, full.text];
}

test('a page sends exactly the bytes of the full path, whatever the fields hold', async () => {
  const bodies: Array<Record<string, unknown>> = [
    {},
    { title: 'plain', n: -0.1, big: 1e21, small: 5e-7, yes: true, none: null, list: [1, 'two', [3], { four: 4 }] },
    { b: 1, a: { 10: 'ten', 9: 'nine', z: {} }, _c: [{ 2: 'two', 1: 'one' }] },
    { text: 'é 中文 😀 "quoted" back\\slash\nnewline\ttab \u2028 \u001f </script>' },
    { owner: { __type: 'Pointer', className: '_User', objectId: 'u1' }, when: { __type: 'Date', iso: '2024-01-02T03:04:05.006Z' } },
    // Server-owned keys below the top, and their text inside strings, are the fields' own (serverKeyAtTop).
    { nested: { objectId: 'n', createdAt: [1], updatedAt: { updatedAt: 2 } }, tricky: 'x","objectId":"y', esc: 'a\\"b\\', brace: ['{', '"objectId":', '}'] },
  ];
  for (const body of bodies) assert.equal((await server.client.post('/1.1/classes/PageBytes', { ...body, group: 1 })).status, 201);
  // Server-owned keys among stored fields (written by an earlier Roost): the server's values win there.
  const now = Date.now();
  await server.store.insertObject(server.appId, {
    className: 'PageBytes', objectId: 'stale0server0keys0000000', createdAt: now, updatedAt: now + 1, acl: null,
    data: { objectId: { x: 1 }, createdAt: { y: [2] }, group: 1 },
  });
  // An equality ordered by a field reads its two sides' union in that order (where.ts pageOf: data cast after the union).
  const queries = [{}, { where: { group: 1 } }, { where: { group: 1 }, count: 1 }, { count: 1, limit: 0 }, { order: '-createdAt', limit: 3, skip: 1 }, { where: { group: 2 } },
    { where: { group: 1 }, order: '-title' }, { where: { group: 1 }, order: 'n,-createdAt', limit: 4 }, { where: { group: { $in: [1, 2] } }, order: 'title' }];
  for (const query of queries) {
    const [plain, full] = await bothPaths('PageBytes', query);
    assert.equal(plain, full, JSON.stringify(query));
  }
  const [plain] = await bothPaths('PageBytes', {});
  assert.equal(JSON.parse(plain).results.length, bodies.length + 1);
});

test('relation fields read as descriptors, redirectClassNameForKey names the class, File values as records', async () => {
  const target = await server.client.post('/1.1/classes/PageTarget', { n: 1 });
  const pointer = { __type: 'Pointer', className: 'PageTarget', objectId: target.body.objectId };
  const owner = await server.client.post('/1.1/classes/PageOwner', { likes: { __op: 'AddRelation', objects: [pointer] }, n: 2 });
  assert.equal(owner.status, 201, owner.text);
  const [plain, full] = await bothPaths('PageOwner', { count: 1 });
  assert.equal(plain, full);
  assert.deepEqual(JSON.parse(plain).results[0].likes, { __type: 'Relation', className: 'PageTarget' });
  const where = { $relatedTo: { object: { __type: 'Pointer', className: 'PageOwner', objectId: owner.body.objectId }, key: 'likes' } };
  const redirected = await bothPaths('PageOwner', { where, redirectClassNameForKey: 'likes', count: 1 });
  assert.equal(redirected[0], redirected[1]);
  assert.equal(JSON.parse(redirected[0]).className, 'PageTarget');
  // A File value naming a file that is not there stays as kept; the page still answers as the full path does.
  await server.client.post('/1.1/classes/PageFiles', { avatar: { __type: 'File', id: 'nofile000000000000000000' } });
  await server.client.post('/1.1/classes/PageFiles', { n: 1 });
  const files = await bothPaths('PageFiles', {});
  assert.equal(files[0], files[1]);
  assert.equal(JSON.parse(files[0]).results.length, 2);
});
