// An included page splices its roots' text (src/objects/include.ts, includingRoot and includedRootJson): this holds
// the page's bytes to the full path's (keys=-notAField parses every object) for roots whose pointers come in every
// form: keys in another order, extra keys, escapes and control characters in their strings, nested, in arrays, their
// targets deleted or unreadable; and a `keys` restriction to the same objects.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import type { Client } from './helpers/client.ts';

let server: TestServer;
let owner: SignedUpUser;
before(async () => {
  server = await startServer();
  owner = await signUp(server.client, { email: 'pointer-text-owner@example.com' });
});
after(async () => {
  await server?.close();
});

async function bothPaths(query: Record<string, unknown>, client: Client): Promise<[string, string]> {
  const plain = await client.get('/1.1/classes/PtPost', { query });
  const full = await client.get('/1.1/classes/PtPost', { query: { ...query, keys: '-notAField' } });
  assert.equal(plain.status, 200, plain.text);
  assert.equal(full.status, 200, full.text);
  return [plain.text, full.text];
}

let serial = 0;
/** An object stored with exactly these fields (their keys' order and names as given), bypassing the write path's checks. */
async function put(className: string, data: Record<string, unknown>, acl: Record<string, { read?: boolean; write?: boolean }> | null = null): Promise<string> {
  const objectId = `pointer0text0${String(++serial).padStart(11, '0')}`;
  const at = Date.UTC(2026, 10, 28, 1, 0, serial);
  await server.store.insertObject(server.appId, { className, objectId, createdAt: at, updatedAt: at + serial, acl, data: data as never });
  return objectId;
}

test('pointers in any form are included, or kept, exactly as the full path answers them', async () => {
  const author = await put('PtAuthor', { name: 'a', friend: { __type: 'Pointer', className: 'PtAuthor', objectId: 'x' } });
  const other = await put('PtAuthor', { name: 'é 中文 "q" \\ \u0001' });
  const hidden = await put('PtAuthor', { name: 'hidden' }, { [owner.objectId]: { read: true } });
  const gone = await put('PtAuthor', { name: 'gone' });
  assert.equal((await server.master.delete(`/1.1/classes/PtAuthor/${gone}`)).status, 200);
  const plain = (objectId: string, className = 'PtAuthor') => ({ __type: 'Pointer', className, objectId });
  const forms = [
    plain(author),
    { className: 'PtAuthor', __type: 'Pointer', objectId: author }, // keys in another order
    { objectId: other, className: 'PtAuthor', __type: 'Pointer' },
    { __type: 'Pointer', className: 'PtAuthor', objectId: author, extra: { __type: 'Pointer', className: 'PtAuthor', objectId: other } },
    { __type: 'Pointer', className: 'PtAuthor' }, // no id
    { __type: 'Pointer', className: 'PtAuthor', objectId: 'a"b\\c' }, // escapes: never an id, kept
    { __type: 'Pointer', className: 'Pt"Author', objectId: author },
    { __type: 'Pointer', className: 'PtAuthor', objectId: 'tab\there' },
    { __type: 'Pointer', className: 'PtAuthor', objectId: 7 },
    { __type: 'Pointer', className: 'PtAuthor', objectId: author, objectId2: 1 },
    { __type: 'pointer', className: 'PtAuthor', objectId: author },
    plain(other),
    plain(hidden),
    plain(gone),
    plain(author, 'NoSuchClass'),
    `{"__type":"Pointer","className":"PtAuthor","objectId":"${author}"}`, // a string holding a pointer's text
    { wrap: plain(author) }, // a pointer's text ending the value, not the value
    [1, plain(author)],
    null,
  ];
  let n = 0;
  for (const form of forms) {
    // A key with escapes before the included field, a nested pointer beside it, the same form in an array.
    await put('PtPost', { 'we"ird\\key\n': plain(author), author: form, inner: { author: plain(author) }, list: [form, plain(other), form], n: n++ });
  }
  await put('PtPost', { n: n++, author: plain(author), list: forms });
  await put('PtPost', { n: n++ });
  for (const client of [server.client, owner.client, server.master]) {
    for (const query of [
      { include: 'author,list,inner', order: 'n' },
      { include: 'author', order: '-n', count: 1 },
      { include: 'list', order: 'n', limit: 5, skip: 3 },
    ]) {
      const [sent, full] = await bothPaths(query, client);
      assert.equal(sent, full, `${JSON.stringify(query)}`);
    }
  }
  const [sent] = await bothPaths({ include: 'author,list', order: 'n' }, owner.client);
  const results = JSON.parse(sent).results;
  assert.deepEqual([results[0].author.name, results[1].author.name, results[2].author.name], ['a', 'a', 'é 中文 "q" \\ \u0001']);
  assert.deepEqual([results[3].author.name, results[3].author.extra], ['a', undefined]); // parsed, then replaced by its target
  assert.deepEqual(results[5].author, forms[5]); // escapes: kept as it was
  assert.equal(results[12].author.name, 'hidden');
  assert.deepEqual(results[13].author, plain(gone));
  assert.deepEqual(results[0].list.map((one: { name?: string }) => one.name ?? null), ['a', 'é 中文 "q" \\ \u0001', 'a']);
  // A `keys` restriction reaches the same objects through the parsing path.
  const restricted = await owner.client.get('/1.1/classes/PtPost', { query: { include: 'author', keys: 'author.name,n', order: 'n' } });
  assert.equal(restricted.status, 200, restricted.text);
  const names = restricted.body.results.map((one: { author?: { name?: string } }) => one.author?.name ?? null);
  assert.deepEqual(names, results.map((one: { author?: { name?: string } }) => one.author?.name ?? null));
  assert.equal(names[1], 'a');
});
