// include (issue #16 point 1; reference §8): pointers answered with their objects on get, find, users/me,
// users/<id>, installations and batch GETs; dotted paths, arrays of pointers, keys and returnACL on included
// objects; what the caller may not read, or what is gone, stays a bare pointer; one read per level and class.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import type { Client } from './helpers/client.ts';

let server: TestServer;
let owner: SignedUpUser;
let stranger: SignedUpUser;

before(async () => {
  server = await startServer();
  owner = await signUp(server.client, { email: 'owner@example.com' });
  stranger = await signUp(server.client);
});
after(async () => {
  await server?.close();
});

type Wire = Record<string, unknown>;
interface Made {
  objectId: string;
  pointer: { __type: 'Pointer'; className: string; objectId: string };
  /** The object as a plain read answers it. */
  wire: Wire;
  /** The object as an include answers it: the plain read with __type Pointer and className. */
  included: Wire;
}

async function make(className: string, fields: Wire, client: Client = server.master): Promise<Made> {
  const res = await client.post(`/1.1/classes/${className}`, fields);
  assert.equal(res.status, 201, res.text);
  const { objectId, createdAt } = res.body;
  const { ACL: _acl, ...data } = fields;
  const wire = { ...data, objectId, createdAt, updatedAt: createdAt };
  return { objectId, pointer: { __type: 'Pointer', className, objectId }, wire, included: { ...wire, __type: 'Pointer', className } };
}

const get = (client: Client, path: string, query: Wire = {}) => client.get(path, { query });

test('get: include=author answers the whole object, __type still Pointer and className kept; a comma list, blanks after commas', async () => {
  const author1 = await make('Person', { name: 'one', company: 'roost' });
  const author2 = await make('Person', { name: 'two' });
  const post = await make('Post', { title: 't', author1: author1.pointer, author2: author2.pointer });
  const expected = { ...post.wire, author1: author1.included, author2: author2.included };
  for (const include of ['author1,author2', 'author1, author2', ' author1 ,author2,', 'author2,author1,author1']) {
    const res = await get(server.client, `/1.1/classes/Post/${post.objectId}`, { include });
    assert.deepEqual([res.status, res.body], [200, expected], include);
  }
  const one = await get(server.client, `/1.1/classes/Post/${post.objectId}`, { include: 'author1' });
  assert.deepEqual(one.body, { ...post.wire, author1: author1.included });
  // An empty include asks for nothing (the stored-bytes path answers).
  const none = await get(server.client, `/1.1/classes/Post/${post.objectId}`, { include: '' });
  assert.deepEqual(none.body, post.wire);
});

test('find: every result has its pointers expanded, a target shared by several results in each of them', async () => {
  const ann = await make('FindPerson', { name: 'ann' });
  const bob = await make('FindPerson', { name: 'bob' });
  const tag = await make('FindTag', { label: 'x' });
  const posts = [
    await make('FindPost', { n: 1, author: ann.pointer, tag: tag.pointer }),
    await make('FindPost', { n: 2, author: bob.pointer }),
    await make('FindPost', { n: 3, author: ann.pointer, tag: tag.pointer }),
  ];
  const res = await get(server.client, '/1.1/classes/FindPost', { include: 'author,tag', order: 'n', count: 1 });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, {
    results: [
      { ...posts[0].wire, author: ann.included, tag: tag.included },
      { ...posts[1].wire, author: bob.included },
      { ...posts[2].wire, author: ann.included, tag: tag.included },
    ],
    count: 3,
  });
  const page = await get(server.client, '/1.1/classes/FindPost', { include: 'author', order: '-n', limit: 1, skip: 1 });
  assert.deepEqual(page.body, { results: [{ ...posts[1].wire, author: bob.included }] });
});

test('dotted paths: post.author and post.author.group follow pointer after pointer; each level only as deep as asked', async () => {
  const group = await make('DotGroup', { title: 'g' });
  const author = await make('DotAuthor', { name: 'a', group: group.pointer });
  const post = await make('DotPost', { title: 'p', author: author.pointer });
  const comment = await make('DotComment', { text: 'c', post: post.pointer });
  const path = `/1.1/classes/DotComment/${comment.objectId}`;
  const deep = await get(server.client, path, { include: 'post.author.group' });
  assert.deepEqual(deep.body, {
    ...comment.wire,
    post: { ...post.included, author: { ...author.included, group: group.included } },
  });
  const two = await get(server.client, path, { include: 'post.author' });
  assert.deepEqual(two.body, { ...comment.wire, post: { ...post.included, author: author.included } });
  const one = await get(server.client, path, { include: 'post' });
  assert.deepEqual(one.body, { ...comment.wire, post: post.included });
  // Dots do not pass through a field that is not a pointer (reference §8, D-dot).
  const object = await make('DotComment', { meta: { post: post.pointer } });
  const through = await get(server.client, `/1.1/classes/DotComment/${object.objectId}`, { include: 'meta.post' });
  assert.deepEqual(through.body, object.wire);
});

test('arrays: include=<arrayKey> expands the pointers in the array, other elements as they are; no level beyond the array', async () => {
  const owner1 = await make('ArrOwner', { name: 'o' });
  const file1 = await make('ArrFile', { name: 'f1', owner: owner1.pointer });
  const file2 = await make('ArrFile', { name: 'f2' });
  const gone = await make('ArrFile', { name: 'gone' });
  await server.master.delete(`/1.1/classes/ArrFile/${gone.objectId}`);
  const attachments = [file1.pointer, 'text', 7, { plain: true }, gone.pointer, file2.pointer, file1.pointer];
  const post = await make('ArrPost', { attachments });
  const expanded = [file1.included, 'text', 7, { plain: true }, gone.pointer, file2.included, file1.included];
  const res = await get(server.client, `/1.1/classes/ArrPost/${post.objectId}`, { include: 'attachments' });
  assert.deepEqual(res.body, { ...post.wire, attachments: expanded });
  // "只能包含到数组本身": attachments.owner answers the array expanded, its owners still pointers.
  const deeper = await get(server.client, `/1.1/classes/ArrPost/${post.objectId}`, { include: 'attachments.owner' });
  assert.deepEqual(deeper.body, { ...post.wire, attachments: expanded });
  const found = await get(server.client, '/1.1/classes/ArrPost', { include: 'attachments' });
  assert.deepEqual(found.body, { results: [{ ...post.wire, attachments: expanded }] });
});

test('a target the caller may not read stays a bare pointer; the owner and the master key get it; the read itself succeeds', async () => {
  const hidden = await make('AclAuthor', { name: 'secret', ACL: { [owner.objectId]: { read: true, write: true } } });
  const post = await make('AclPost', { title: 't', author: hidden.pointer });
  const path = `/1.1/classes/AclPost/${post.objectId}`;
  for (const client of [server.client, stranger.client]) {
    const res = await get(client, path, { include: 'author' });
    assert.deepEqual([res.status, res.body], [200, { ...post.wire, author: hidden.pointer }]);
    const found = await get(client, '/1.1/classes/AclPost', { include: 'author' });
    assert.deepEqual(found.body, { results: [{ ...post.wire, author: hidden.pointer }] });
  }
  for (const client of [owner.client, server.master]) {
    const res = await get(client, path, { include: 'author' });
    assert.deepEqual(res.body, { ...post.wire, author: hidden.included });
  }
});

test('a deleted target, an unknown class, a pointer with an unusable id, and a non-pointer field all stay as stored', async () => {
  const gone = await make('GoneAuthor', { name: 'g' });
  await server.master.delete(`/1.1/classes/GoneAuthor/${gone.objectId}`);
  const kept = await make('GoneAuthor', { name: 'k' });
  const nowhere = { __type: 'Pointer', className: 'NoSuchClass', objectId: 'abc' };
  const odd = { __type: 'Pointer', className: 'GoneAuthor', objectId: 'bad id!' };
  const post = await make('GonePost', { author: gone.pointer, other: nowhere, odd, score: 5, text: 'x', nested: { a: 1 }, kept: kept.pointer });
  const res = await get(server.client, `/1.1/classes/GonePost/${post.objectId}`, { include: 'author,other,odd,score,text,nested,missing,kept' });
  assert.deepEqual([res.status, res.body], [200, { ...post.wire, kept: kept.included }]);
});

test('keys with include: keys=author.name restricts the included object (built-ins kept), excludes reach into it, an unselected include is dropped', async () => {
  const author = await make('KeyAuthor', { name: 'n', age: 30, bio: 'b' });
  const post = await make('KeyPost', { title: 't', body: 'long', author: author.pointer });
  const path = `/1.1/classes/KeyPost/${post.objectId}`;
  const builtIns = { objectId: post.objectId, createdAt: post.wire.createdAt, updatedAt: post.wire.updatedAt };
  const authorBuiltIns = { objectId: author.objectId, createdAt: author.wire.createdAt, updatedAt: author.wire.updatedAt, __type: 'Pointer', className: 'KeyAuthor' };

  const restricted = await get(server.client, path, { include: 'author', keys: 'title,author.name' });
  assert.deepEqual(restricted.body, { ...builtIns, title: 't', author: { ...authorBuiltIns, name: 'n' } });
  const whole = await get(server.client, path, { include: 'author', keys: 'author' });
  assert.deepEqual(whole.body, { ...builtIns, author: author.included });
  const excluded = await get(server.client, path, { include: 'author', keys: '-body,-author.bio' });
  const { bio: _bio, ...withoutBio } = author.included;
  assert.deepEqual(excluded.body, { ...builtIns, title: 't', author: withoutBio });
  const unselected = await get(server.client, path, { include: 'author', keys: 'title' });
  assert.deepEqual(unselected.body, { ...builtIns, title: 't' });
  const excludedWhole = await get(server.client, path, { include: 'author', keys: '-author' });
  assert.deepEqual(excludedWhole.body, { ...builtIns, title: 't', body: 'long' });
  const found = await get(server.client, '/1.1/classes/KeyPost', { include: 'author', keys: 'author.age' });
  assert.deepEqual(found.body, { results: [{ ...builtIns, author: { ...authorBuiltIns, age: 30 } }] });
});

test('returnACL covers included objects, each with its own ACL', async () => {
  const authorAcl = { '*': { read: true }, [owner.objectId]: { write: true } };
  const author = await make('RaclAuthor', { name: 'n', ACL: authorAcl });
  const post = await make('RaclPost', { author: author.pointer });
  const res = await get(server.client, `/1.1/classes/RaclPost/${post.objectId}`, { include: 'author', returnACL: 'true' });
  assert.deepEqual(res.body, {
    ...post.wire,
    ACL: { '*': { read: true, write: true } },
    author: { ...author.included, ACL: authorAcl },
  });
});

test('an included _User never carries secrets: no password or session token, authData only for the user itself and the master key', async () => {
  const anonymousId = randomUUID();
  const signedIn = await server.client.withSession(undefined).post('/1.1/users', { authData: { anonymous: { id: anonymousId } } });
  assert.equal(signedIn.status, 201, signedIn.text);
  const linked = { objectId: signedIn.body.objectId as string, sessionToken: signedIn.body.sessionToken as string };
  const post = await make('UserPost', {
    owner: { __type: 'Pointer', className: '_User', objectId: owner.objectId },
    linked: { __type: 'Pointer', className: '_User', objectId: linked.objectId },
  });
  const path = `/1.1/classes/UserPost/${post.objectId}`;
  const asStranger = await get(stranger.client, path, { include: 'owner,linked' });
  assert.equal(asStranger.status, 200, asStranger.text);
  const ownerSeen = asStranger.body.owner;
  assert.deepEqual(ownerSeen, {
    username: owner.username,
    email: 'owner@example.com',
    emailVerified: ownerSeen.emailVerified,
    mobilePhoneVerified: ownerSeen.mobilePhoneVerified,
    objectId: owner.objectId,
    createdAt: owner.body.createdAt,
    updatedAt: ownerSeen.updatedAt,
    __type: 'Pointer',
    className: '_User',
  });
  const plainRead = await get(stranger.client, `/1.1/users/${owner.objectId}`);
  assert.deepEqual(ownerSeen, { ...plainRead.body, __type: 'Pointer', className: '_User' }, 'as a plain read of the user');
  assert.equal(asStranger.body.linked.authData, undefined);
  assert.ok(!asStranger.text.includes(owner.sessionToken) && !asStranger.text.includes(linked.sessionToken));
  assert.ok(!asStranger.text.includes(owner.password) && !/sessionToken|password|salt/i.test(asStranger.text));
  const self = await server.client.get(path, { query: { include: 'linked' }, session: linked.sessionToken });
  assert.deepEqual(self.body.linked.authData, { anonymous: { id: anonymousId } });
  assert.ok(!self.text.includes(linked.sessionToken));
  const asMaster = await get(server.master, path, { include: 'linked' });
  assert.deepEqual(asMaster.body.linked.authData, { anonymous: { id: anonymousId } });
  assert.ok(!asMaster.text.includes(linked.sessionToken));
});

test('users/me, users/<id>, users and classes/_User queries include too; the token only of the caller, at the top', async () => {
  const city = await make('MeCity', { name: 'Hangzhou' });
  const user = await signUp(server.client);
  const friendPointer = { __type: 'Pointer', className: '_User', objectId: stranger.objectId };
  const set = await user.client.put(`/1.1/users/${user.objectId}`, { city: city.pointer, friend: friendPointer });
  assert.equal(set.status, 200, set.text);
  const me = await user.client.get('/1.1/users/me', { query: { include: 'city,friend' } });
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.sessionToken, user.sessionToken);
  assert.deepEqual(me.body.city, city.included);
  assert.equal(me.body.friend.username, stranger.username);
  assert.equal(me.body.friend.sessionToken, undefined);
  assert.ok(!me.text.includes(stranger.sessionToken));
  const plainMe = await user.client.get('/1.1/users/me');
  assert.deepEqual(me.body, { ...plainMe.body, city: city.included, friend: me.body.friend });

  const byId = await server.client.get(`/1.1/users/${user.objectId}`, { query: { include: 'city' } });
  assert.deepEqual(byId.body.city, city.included);
  const sdkPath = await server.client.get(`/1.1/classes/_User/${user.objectId}`, { query: { include: 'city' } });
  assert.deepEqual(sdkPath.body, byId.body);
  const listed = await server.master.get('/1.1/users', { query: { where: { objectId: user.objectId }, include: 'city,friend' } });
  assert.deepEqual(listed.body.results[0].city, city.included);
  assert.equal(listed.body.results[0].friend.objectId, stranger.objectId);
  assert.equal(listed.body.results[0].friend.sessionToken, undefined);
});

test('installations: an included user has no secrets; an installation bound to another user stays a bare pointer for others', async () => {
  const installationId = randomUUID();
  const saved = await owner.client.post('/1.1/installations', { installationId, deviceType: 'android' });
  assert.equal(saved.status, 201, saved.text);
  const byId = await owner.client.get(`/1.1/installations/${saved.body.objectId}`, { query: { include: 'user' } });
  assert.equal(byId.status, 200, byId.text);
  assert.equal(byId.body.user.username, owner.username);
  assert.equal(byId.body.user.__type, 'Pointer');
  assert.equal(byId.body.user.sessionToken, undefined);
  const device = { __type: 'Pointer', className: '_Installation', objectId: saved.body.objectId };
  const post = await make('DevicePost', { device });
  const path = `/1.1/classes/DevicePost/${post.objectId}`;
  const mine = await owner.client.get(path, { query: { include: 'device' } });
  assert.equal(mine.body.device.installationId, installationId);
  const theirs = await stranger.client.get(path, { query: { include: 'device' } });
  assert.deepEqual(theirs.body, { ...post.wire, device }, 'as GET /1.1/installations/<id> answers them: missing');
});

test('batch GETs include as the same request alone does', async () => {
  const author = await make('BatchAuthor', { name: 'a' });
  const post = await make('BatchPost', { author: author.pointer });
  const res = await server.client.post('/1.1/batch', {
    requests: [
      { method: 'GET', path: `/1.1/classes/BatchPost/${post.objectId}`, params: { include: 'author' } },
      { method: 'GET', path: '/1.1/classes/BatchPost', params: { include: 'author' } },
      { method: 'GET', path: `/1.1/classes/BatchPost/${post.objectId}`, params: { include: 'a..b' } },
    ],
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body, [
    { success: { ...post.wire, author: author.included } },
    { success: { results: [{ ...post.wire, author: author.included }] } },
    { error: { code: 105, error: "Invalid key name. Keys are case-sensitive and 'a-zA-Z0-9_' are the only valid characters. The column is: 'a..b'." } },
  ]);
});

test('bad include: a key no field may have is 105 (as in keys), a path deeper than 16 pointers 102; on get and find alike', async () => {
  const post = await make('BadPost', { title: 't' });
  const invalid = (key: string) => ({ code: 105, error: `Invalid key name. Keys are case-sensitive and 'a-zA-Z0-9_' are the only valid characters. The column is: '${key}'.` });
  for (const path of [`/1.1/classes/BadPost/${post.objectId}`, '/1.1/classes/BadPost', `/1.1/users/${owner.objectId}`, '/1.1/users/me']) {
    for (const key of ['a..b', '.a', 'a.', '$where', 'a b', '__type']) {
      const res = await owner.client.get(path, { query: { include: `title,${key}` } });
      assert.deepEqual([res.status, res.body], [400, invalid(key)], `${path} ${key}`);
    }
    const deep = Array.from({ length: 17 }, (_, i) => `p${i}`).join('.');
    const res = await owner.client.get(path, { query: { include: deep } });
    assert.deepEqual([res.status, res.body], [400, { code: 102, error: 'include may follow at most 16 pointers in one path.' }], path);
  }
  const sixteen = Array.from({ length: 16 }, (_, i) => `p${i}`).join('.');
  const ok = await server.client.get(`/1.1/classes/BadPost/${post.objectId}`, { query: { include: sixteen } });
  assert.deepEqual([ok.status, ok.body], [200, post.wire]);
});

test('one read per level and class, never one per row: 20 posts with 3 pointers each and a nested level', async () => {
  const groups = await Promise.all([0, 1].map((i) => make('LvlGroup', { i })));
  const people = await Promise.all([0, 1, 2, 3].map((i) => make('LvlPerson', { i, group: groups[i % 2].pointer })));
  const cats = await Promise.all([0, 1, 2].map((i) => make('LvlCat', { i })));
  const seeded = await server.master.post('/1.1/batch', {
    requests: Array.from({ length: 20 }, (_, n) => ({
      method: 'POST',
      path: '/1.1/classes/LvlPost',
      body: { n, author: people[n % 4].pointer, editor: people[(n + 1) % 4].pointer, cat: cats[n % 3].pointer },
    })),
  });
  assert.equal(seeded.status, 200);
  const reads: string[] = [];
  const store = server.store;
  const original = store.getObjects.bind(store);
  store.getObjects = async (appId, className, ids, readers) => {
    reads.push(`${className}:${ids.length}`);
    return original(appId, className, ids, readers);
  };
  try {
    const res = await get(server.client, '/1.1/classes/LvlPost', { include: 'author.group,editor.group,cat', order: 'n' });
    assert.equal(res.body.results.length, 20);
    assert.deepEqual(res.body.results[5].author, { ...people[1].included, group: groups[1].included });
    assert.deepEqual(res.body.results[5].editor, { ...people[2].included, group: groups[0].included });
    assert.deepEqual(res.body.results[5].cat, cats[2].included);
    // Level 1: the people (authors and editors together) and the categories; level 2: the groups.
    assert.deepEqual(reads.sort(), ['LvlCat:3', 'LvlGroup:2', 'LvlPerson:4']);
    reads.length = 0;
    await get(server.client, '/1.1/classes/LvlPost', { order: 'n' });
    assert.deepEqual(reads, [], 'no include, no read');
  } finally {
    store.getObjects = original;
  }
});
