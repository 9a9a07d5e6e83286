// A query page with a one-level include and neither `keys` nor `returnACL` goes out as stored text: the roots'
// fields serialised with each included pointer replaced by its object's stored text spliced with id, dates,
// __type and className (src/objects/include.ts: readIncludedJson, includedRootJson). This holds its bytes to
// the full path's (keys=-notAField parses every object and answers through answerObjects and renderIncluded),
// whatever the roots and the included objects hold, and to the full path's fallbacks (built-in classes, File
// values, server-owned keys among stored fields).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import type { Client } from './helpers/client.ts';

let server: TestServer;
let owner: SignedUpUser;
before(async () => {
  server = await startServer();
  owner = await signUp(server.client, { email: 'pages-owner@example.com' });
});
after(async () => {
  await server?.close();
});

/** The page as sent, and as the full path sends it. */
async function bothPaths(className: string, query: Record<string, unknown>, client: Client = server.client): Promise<[string, string]> {
  const plain = await client.get(`/1.1/classes/${className}`, { query });
  const full = await client.get(`/1.1/classes/${className}`, { query: { ...query, keys: '-notAField' } });
  assert.equal(plain.status, 200, plain.text);
  assert.equal(full.status, 200, full.text);
  assert.equal(plain.headers.get('content-type'), 'application/json; charset=utf-8');
  return [plain.text, full.text];
}

async function make(className: string, fields: Record<string, unknown>): Promise<{ __type: 'Pointer'; className: string; objectId: string }> {
  const res = await server.master.post(`/1.1/classes/${className}`, fields);
  assert.equal(res.status, 201, res.text);
  return { __type: 'Pointer', className, objectId: res.body.objectId };
}

test('an included page sends exactly the bytes of the full path, whatever the roots and the included objects hold', async () => {
  const plain = await make('IpAuthor', { name: 'plain', n: -0.1, big: 1e21, list: [1, 'two', [3], { four: 4 }], none: null });
  const odd = await make('IpAuthor', { text: 'é 中文 😀 "quoted" back\\slash\nnewline\ttab \u2028 \u001f </script>', 10: 'ten', 9: 'nine' });
  // Fields the spread of renderIncluded overwrites in place, at the top (imported so) and nested: parsed, not spliced.
  // Updated after its creation, so an include level's columns (getObjectsJson's rows as arrays) are held to their places.
  const at = Date.now();
  const named = { __type: 'Pointer', className: 'IpAuthor', objectId: 'named0top0keys0000000001' };
  await server.store.insertObject(server.appId, {
    className: 'IpAuthor', objectId: named.objectId, createdAt: at, updatedAt: at + 1234, acl: null,
    data: { className: 'mine', __type: 'Thing', inner: { className: 'x' } },
  });
  const nested = await make('IpAuthor', { inner: { className: 'x', holder: { __type: 'Date', iso: '2024-01-02T03:04:05.006Z' } } });
  const pointing = await make('IpAuthor', { friend: plain, when: { __type: 'Date', iso: '2024-01-02T03:04:05.006Z' } });
  const hidden = await make('IpAuthor', { name: 'hidden', ACL: { [owner.objectId]: { read: true, write: true } } });
  const gone = await make('IpAuthor', { name: 'gone' });
  assert.equal((await server.master.delete(`/1.1/classes/IpAuthor/${gone.objectId}`)).status, 200);
  const tag = await make('IpTag', { label: 't' });
  const empty = await make('IpTag', {});
  // One id in two classes (imported so), both in one level: an include level binds its pairs as one JSON object keyed by
  // id on SQLite (dialect.refRows), which must yield both.
  const twin = 'twin0class0ids0000000001';
  for (const [className, name] of [['IpAuthor', 'twin author'], ['IpTag', 'twin tag']]) {
    await server.store.insertObject(server.appId, { className, objectId: twin, createdAt: at, updatedAt: at, acl: null, data: { name } });
  }
  const nowhere = { __type: 'Pointer', className: 'NoSuchClass', objectId: 'abc' };
  const unusable = { __type: 'Pointer', className: 'IpTag', objectId: 'bad id!' };
  const roots: Array<Record<string, unknown>> = [
    { author: plain, tag },
    { author: odd, tag: empty, z: 1, 3: 'three' },
    { author: named, second: nested },
    { author: pointing, elsewhere: nowhere },
    { author: hidden, tag: unusable },
    { author: gone, text: 'not a pointer' },
    { list: [plain, 'text', 7, { plain: true }, gone, hidden, odd, plain, null, tag], empty: [] },
    { other: plain },
    {},
    // The roots' text is scanned for its top-level fields (includingRoot): the same pointer's text nested, inside a
    // string and after an escaped quote is not an included field; the included field last and first.
    { inner: { author: plain, list: [plain] }, note: `\\",\\"author":${JSON.stringify(plain)}`, author: odd },
    { author: plain, deep: [[{ author: plain }]], tail: '}],' },
    { author: { __type: 'Pointer', className: 'IpAuthor', objectId: twin }, tag: { __type: 'Pointer', className: 'IpTag', objectId: twin } },
  ];
  for (const [n, root] of roots.entries()) await make('IpPost', { ...root, n, group: 1 });
  for (const query of [
    { include: 'author,tag,second,elsewhere,text,list,empty,other,inner,note', order: 'n' },
    { include: 'deep,tail', order: 'n' },
    { include: 'author,list', order: '-n', count: 1 },
    { include: 'tag, missing,n', where: { group: 1 }, limit: 3, skip: 2, order: 'n' },
    { include: 'author', where: { group: 2 } },
  ]) {
    for (const client of [server.client, owner.client, server.master]) {
      const [sent, full] = await bothPaths('IpPost', query, client);
      assert.equal(sent, full, JSON.stringify(query));
    }
  }
  const [sent] = await bothPaths('IpPost', { include: 'author,list', order: 'n' }, owner.client);
  const results = JSON.parse(sent).results;
  assert.equal(results[0].author.name, 'plain');
  assert.equal(results[0].author.__type, 'Pointer');
  assert.equal(results[2].author.className, 'IpAuthor');
  assert.equal(results[4].author.name, 'hidden');
  assert.equal(results[6].list[5].name, 'hidden');
  const [twins] = await bothPaths('IpPost', { include: 'author,tag', where: { n: 11 } });
  const [both] = JSON.parse(twins).results;
  assert.deepEqual([both.author.name, both.tag.name], ['twin author', 'twin tag']);
});

test('relation fields, built-in classes, File values and server-owned keys answer as the full path does', async () => {
  const member = await make('IpMember', { n: 1 });
  const group = await make('IpGroup', { members: { __op: 'AddRelation', objects: [member] }, title: 'g' });
  const fileHolder = await make('IpGroup', { avatar: { __type: 'File', id: 'nofile000000000000000000' } });
  await make('IpRelPost', { group, owner: { __type: 'Pointer', className: '_User', objectId: owner.objectId }, likes: { __op: 'AddRelation', objects: [member] } });
  await make('IpRelPost', { group: fileHolder });
  for (const include of ['group', 'owner', 'group,owner', 'likes']) {
    const [sent, full] = await bothPaths('IpRelPost', { include, count: 1 }, owner.client);
    assert.equal(sent, full, include);
  }
  const [sent] = await bothPaths('IpRelPost', { include: 'group' });
  assert.deepEqual(JSON.parse(sent).results[0].group.members, { __type: 'Relation', className: 'IpMember' });
  // A root whose stored fields hold server-owned keys (written by an earlier Roost): the server's values win there.
  const now = Date.now();
  await server.store.insertObject(server.appId, {
    className: 'IpStale', objectId: 'stale0server0keys0000001', createdAt: now, updatedAt: now + 1, acl: null,
    data: { objectId: { x: 1 }, createdAt: { y: [2] }, member },
  });
  const stale = await bothPaths('IpStale', { include: 'member' });
  assert.equal(stale[0], stale[1]);
  assert.equal(JSON.parse(stale[0]).results[0].objectId, 'stale0server0keys0000001');
});
