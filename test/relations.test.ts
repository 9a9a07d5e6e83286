// Relations (issue #16 point 3; reference §7): AddRelation/RemoveRelation on create and update, alone, with
// other fields, as the JS SDK's Batch, inside /1.1/batch and /1.1/batch/save; the descriptor every object of
// the class reads as; $relatedTo with the rest of the query language; the reverse query; redirectClassNameForKey;
// 128 for relation data the hosted service refuses; ACLs on members and owners; deletes. Before: AddRelation
// answered 400 code 1 "Not supported yet", $relatedTo 400 code 102.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { insertUntyped } from './helpers/untyped.ts';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';

let server: TestServer;
let user: SignedUpUser;
before(async () => {
  server = await startServer();
  user = await signUp(server.client);
});
after(async () => {
  await server?.close();
});

const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });
const add = (...objects: unknown[]) => ({ __op: 'AddRelation', objects });
const remove = (...objects: unknown[]) => ({ __op: 'RemoveRelation', objects });
const descriptor = (className: string) => ({ __type: 'Relation', className });
const invalid = { code: 128, error: 'Invalid relation data.' };

let classSeq = 0;
/** Class names of one test, so tests never share a relation field's target class. */
function classes() {
  classSeq += 1;
  return { owner: `Person${classSeq}`, target: `Post${classSeq}` };
}

async function createAll(className: string, bodies: Array<Record<string, unknown>>): Promise<string[]> {
  const res = await server.client.post('/1.1/batch', {
    requests: bodies.map((body) => ({ method: 'POST', path: `/1.1/classes/${className}`, body })),
  });
  assert.equal(res.status, 200, res.text);
  return res.body.map((item: { success: { objectId: string } }) => item.success.objectId);
}

const relatedTo = (owner: string, objectId: string, key = 'likes') => ({ $relatedTo: { object: pointer(owner, objectId), key } });

async function relatedIds(className: string, where: unknown, query: Record<string, unknown> = {}, client = server.client): Promise<string[]> {
  const res = await client.get(`/1.1/classes/${className}`, { query: { where, ...query } });
  assert.equal(res.status, 200, res.text);
  return res.body.results.map((object: { objectId: string }) => object.objectId);
}

describe('writes', () => {
  test('AddRelation on create, with other fields: 201 with the plain answer; the members are queried, never read', async () => {
    const { owner, target } = classes();
    const posts = await createAll(target, [{ n: 0 }, { n: 1 }, { n: 2 }]);
    const created = await server.client.post(`/1.1/classes/${owner}`, { pname: 'p', likes: add(...posts.slice(0, 2).map((id) => pointer(target, id))) });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body), ['objectId', 'createdAt']);
    const got = await server.client.get(`/1.1/classes/${owner}/${created.body.objectId}`);
    const { createdAt } = created.body;
    assert.deepEqual(got.body, { pname: 'p', likes: descriptor(target), objectId: created.body.objectId, createdAt, updatedAt: createdAt });
    assert.deepEqual(await relatedIds(target, relatedTo(owner, created.body.objectId)), posts.slice(0, 2));
  });

  test('update: AddRelation with a field set, RemoveRelation, and the JS SDK\'s Batch of both; 200 {updatedAt, objectId}', async () => {
    const { owner, target } = classes();
    const posts = await createAll(target, [{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
    const [ownerId] = await createAll(owner, [{ pname: 'a' }]);
    const path = `/1.1/classes/${owner}/${ownerId}`;
    const first = await server.client.put(path, { likes: add(pointer(target, posts[0]), pointer(target, posts[1])), pname: 'plike1' });
    assert.deepEqual([first.status, Object.keys(first.body)], [200, ['updatedAt', 'objectId']]);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, ownerId)), posts.slice(0, 2));
    await server.client.put(path, { likes: remove(pointer(target, posts[0])) });
    assert.deepEqual(await relatedIds(target, relatedTo(owner, ownerId)), [posts[1]]);
    const batch = { __op: 'Batch', ops: [add(pointer(target, posts[2]), pointer(target, posts[3])), remove(pointer(target, posts[1]))] };
    assert.equal((await server.client.put(path, { likes: batch })).status, 200);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, ownerId)), posts.slice(2));
    const again = await server.client.put(path, { likes: add(pointer(target, posts[2])) });
    assert.equal(again.status, 200, 'adding a member twice keeps it once');
    assert.deepEqual(await relatedIds(target, relatedTo(owner, ownerId)), posts.slice(2));
    const got = await server.client.get(path);
    assert.deepEqual([got.body.pname, got.body.likes], ['plike1', descriptor(target)]);
  });

  test('fetchWhenSave: the relation field touched answers its descriptor', async () => {
    const { owner, target } = classes();
    const [post] = await createAll(target, [{}]);
    const [ownerId] = await createAll(owner, [{ pname: 'a' }]);
    const res = await server.client.put(`/1.1/classes/${owner}/${ownerId}`, { likes: add(pointer(target, post)), pname: 'b' }, { query: { fetchWhenSave: true } });
    assert.deepEqual(Object.keys(res.body), ['likes', 'pname', 'updatedAt', 'objectId']);
    assert.deepEqual([res.body.likes, res.body.pname], [descriptor(target), 'b']);
    const created = await server.client.post(`/1.1/classes/${owner}`, { likes: add(pointer(target, post)) }, { query: { new: true } });
    assert.deepEqual(created.body.likes, descriptor(target));
  });

  // Objects/Relational Data/should fetch when save: `PUT …?new=true {"age":{"__op":"Increment","amount":10}}` on a
  // Person with a `likes` relation answered {"age":19,"updatedAt","objectId","likes":{"__type":"Relation",…}}.
  test('new=true on an update that leaves the relation alone: the touched fields, then its descriptor', async () => {
    const { owner, target } = classes();
    const [post] = await createAll(target, [{}]);
    const [ownerId] = await createAll(owner, [{ pname: 'a', age: 9 }]);
    await server.client.put(`/1.1/classes/${owner}/${ownerId}`, { likes: add(pointer(target, post)) });
    const res = await server.client.put(`/1.1/classes/${owner}/${ownerId}`, { age: { __op: 'Increment', amount: 10 } }, { query: { new: true } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, JSON.stringify({ age: 19, updatedAt: res.body.updatedAt, objectId: ownerId, likes: descriptor(target) }));
    const plain = await server.client.put(`/1.1/classes/${owner}/${ownerId}`, { age: 20 });
    assert.equal(plain.text, JSON.stringify({ updatedAt: plain.body.updatedAt, objectId: ownerId }));
  });

  test('128 Invalid relation data.: empty, over 1000, not pointers, mixed classes, a nested field, a field holding a value, another target class; nothing written', async () => {
    const { owner, target } = classes();
    const [post] = await createAll(target, [{}]);
    // A String where the class has a Relation: only imported data holds that (the API refuses it, 111).
    const [plain] = await insertUntyped(server.store, server.appId, owner, [{ likes: 'a string', pname: 'x' }]);
    const [ownerId] = await createAll(owner, [{ pname: 'p' }]);
    await server.client.put(`/1.1/classes/${owner}/${ownerId}`, { likes: add(pointer(target, post)) });
    const many = Array.from({ length: 1001 }, (_, i) => pointer(target, `id${i}`));
    const bodies: Array<[string, unknown]> = [
      ['empty', { likes: add() }],
      ['no objects', { likes: { __op: 'AddRelation' } }],
      ['over 1000', { likes: add(...many) }],
      ['over 1000 to remove', { likes: remove(...many) }],
      ['not a pointer', { likes: add({ objectId: post }) }],
      ['a string', { likes: add(post) }],
      ['no objectId', { likes: add({ __type: 'Pointer', className: target }) }],
      ['mixed classes', { likes: add(pointer(target, post), pointer('Other', 'x')) }],
      ['mixed classes in a Batch', { likes: { __op: 'Batch', ops: [add(pointer(target, post)), remove(pointer('Other', 'x'))] } }],
      ['an empty Batch', { likes: { __op: 'Batch', ops: [] } }],
      ['a nested field', { 'meta.likes': add(pointer(target, post)) }],
      ['another target class', { likes: add(pointer('Other', 'x')) }],
    ];
    for (const [name, body] of bodies) {
      const res = await server.client.put(`/1.1/classes/${owner}/${ownerId}`, { ...(body as object), pname: 'changed' });
      assert.deepEqual([res.status, res.body], [400, invalid], `update: ${name}`);
      const created = await server.client.post(`/1.1/classes/${owner}`, body);
      assert.deepEqual([created.status, created.body], [400, invalid], `create: ${name}`);
    }
    // A Batch of another op is not relation data: 304, as the hosted service failed a Batch of Add and Remove
    // (the PHP SDK's testBatchOperationOnArray; test/php-sdk-wire.test.ts).
    const batchOfAdd = { likes: { __op: 'Batch', ops: [{ __op: 'Add', objects: [1] }] } };
    const batchRefusal = { code: 304, error: 'A Batch operation may hold only AddRelation and RemoveRelation.' };
    const batchUpdate = await server.client.put(`/1.1/classes/${owner}/${ownerId}`, { ...batchOfAdd, pname: 'changed' });
    assert.deepEqual([batchUpdate.status, batchUpdate.body], [400, batchRefusal]);
    const batchCreate = await server.client.post(`/1.1/classes/${owner}`, batchOfAdd);
    assert.deepEqual([batchCreate.status, batchCreate.body], [400, batchRefusal]);
    const onValue = await server.client.put(`/1.1/classes/${owner}/${plain}`, { likes: add(pointer(target, post)) });
    assert.deepEqual([onValue.status, onValue.body], [400, invalid], 'a relation op on a field that holds another type');
    assert.equal((await server.client.get(`/1.1/classes/${owner}/${ownerId}`)).body.pname, 'p');
    assert.deepEqual(await relatedIds(target, relatedTo(owner, ownerId)), [post]);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, plain)), []);
    const count = await server.master.get(`/1.1/classes/${owner}`, { query: { count: 1, limit: 0 } });
    assert.deepEqual(count.body, { results: [], count: 2 });
  });

  test('a relation op needs write access to the owner: 403, nothing written', async () => {
    const { owner, target } = classes();
    const [post] = await createAll(target, [{}]);
    const created = await user.client.post(`/1.1/classes/${owner}`, { ACL: { '*': { read: true }, [user.objectId]: { write: true } } });
    const path = `/1.1/classes/${owner}/${created.body.objectId}`;
    const denied = await server.client.put(path, { likes: add(pointer(target, post)) });
    assert.deepEqual([denied.status, denied.body], [403, { code: 403, error: "Forbidden writing by object's ACL." }]);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, created.body.objectId)), []);
    assert.equal((await user.client.put(path, { likes: add(pointer(target, post)) })).status, 200);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, created.body.objectId)), [post]);
  });

  test('inside /1.1/batch and /1.1/batch/save', async () => {
    const { owner, target } = classes();
    const posts = await createAll(target, [{}, {}, {}]);
    const [a, b] = await createAll(owner, [{}, {}]);
    const res = await server.client.post('/1.1/batch', {
      requests: [
        { method: 'PUT', path: `/1.1/classes/${owner}/${a}`, body: { likes: add(pointer(target, posts[0])) } },
        { method: 'PUT', path: `/1.1/classes/${owner}/${b}`, body: { likes: add() } },
        { method: 'POST', path: `/1.1/classes/${owner}`, body: { likes: add(pointer(target, posts[1])) } },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body[0].success), ['updatedAt', 'objectId']);
    assert.deepEqual(res.body[1], { error: invalid });
    const made = res.body[2].success.objectId;
    assert.deepEqual(await relatedIds(target, relatedTo(owner, a)), [posts[0]]);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, made)), [posts[1]]);
    const path = `/1.1/classes/${owner}/${b}`;
    const saved = await server.client.post('/1.1/batch/save', {
      requests: [
        { method: 'PUT', path, body: { likes: add(pointer(target, posts[1]), pointer(target, posts[2])), __internalId: b } },
        { method: 'PUT', path, body: { likes: remove(pointer(target, posts[1])), __internalId: b } },
      ],
    });
    assert.equal(saved.status, 200, saved.text);
    assert.deepEqual(Object.keys(saved.body), [b]);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, b)), [posts[2]]);
  });
});

describe('reads', () => {
  test('every object of the class reads the descriptor, also one created without the field; keys selects it or not', async () => {
    const { owner, target } = classes();
    const [post] = await createAll(target, [{}]);
    const [without, withIt] = await createAll(owner, [{ pname: 'none' }, { pname: 'some', likes: add(pointer(target, post)) }]);
    for (const id of [without, withIt]) {
      const got = await server.client.get(`/1.1/classes/${owner}/${id}`);
      assert.deepEqual(got.body.likes, descriptor(target), id);
      const picked = await server.client.get(`/1.1/classes/${owner}/${id}`, { query: { keys: 'pname' } });
      assert.deepEqual(Object.keys(picked.body).sort(), ['createdAt', 'objectId', 'pname', 'updatedAt']);
      const chosen = await server.client.get(`/1.1/classes/${owner}/${id}`, { query: { keys: 'likes' } });
      assert.deepEqual(chosen.body.likes, descriptor(target));
    }
    const listed = await server.client.get(`/1.1/classes/${owner}`, { query: { order: 'createdAt' } });
    assert.deepEqual(listed.body.results.map((object: { likes: unknown }) => object.likes), [descriptor(target), descriptor(target)]);
    const dropped = await server.client.get(`/1.1/classes/${owner}`, { query: { keys: '-likes' } });
    assert.deepEqual(dropped.body.results.map((object: { likes?: unknown }) => object.likes), [undefined, undefined]);
    const included = await server.client.post(`/1.1/classes/Fan${classSeq}`, { person: pointer(owner, without) });
    const fan = await server.client.get(`/1.1/classes/Fan${classSeq}/${included.body.objectId}`, { query: { include: 'person' } });
    assert.deepEqual(fan.body.person.likes, descriptor(target), 'an included object reads it too');
    const got = await server.client.get(`/1.1/classes/${target}/${post}`);
    assert.equal(got.body.likes, undefined, 'the target class has no such field');
  });

  test('$relatedTo: members in insertion order, with other conditions, order, skip, limit, count=1&limit=0', async () => {
    const { owner, target } = classes();
    const posts = await createAll(target, [0, 1, 2, 3, 4].map((n) => ({ n })));
    const [outsider] = await createAll(target, [{ n: 9 }]);
    const [ownerId] = await createAll(owner, [{ likes: add(...posts.map((id) => pointer(target, id))) }]);
    const where = relatedTo(owner, ownerId);
    const res = await server.client.get(`/1.1/classes/${target}`, { query: { where } });
    assert.deepEqual(res.body.results.map((object: { n: number }) => object.n), [0, 1, 2, 3, 4]);
    assert.deepEqual(Object.keys(res.body.results[0]), ['n', 'createdAt', 'updatedAt', 'objectId']);
    assert.deepEqual(await relatedIds(target, { ...where, n: { $gte: 3 } }), posts.slice(3));
    assert.deepEqual(await relatedIds(target, { $or: [where, { n: 9 }] }), [...posts, outsider]);
    assert.deepEqual(await relatedIds(target, where, { order: '-n', skip: 1, limit: 2 }), [posts[3], posts[2]]);
    const counted = await server.client.get(`/1.1/classes/${target}`, { query: { where, count: 1, limit: 0 } });
    assert.deepEqual(counted.body, { results: [], count: 5 });
    const both = await server.client.get(`/1.1/classes/${target}`, { query: { where: { ...where, n: { $lt: 2 } }, count: 1, limit: 1 } });
    assert.deepEqual([both.body.results.length, both.body.count], [1, 2]);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, ownerId, 'other')), []);
    assert.deepEqual(await relatedIds(owner, where), [], 'members are of the target class');
  });

  test('$relatedTo: the ACL of each member applies, in the page and in the count', async () => {
    const { owner, target } = classes();
    const hidden = await server.master.post(`/1.1/classes/${target}`, { n: 0, ACL: { [user.objectId]: { read: true } } });
    const [shown] = await createAll(target, [{ n: 1 }]);
    const [ownerId] = await createAll(owner, [{ likes: add(pointer(target, hidden.body.objectId), pointer(target, shown)) }]);
    const where = relatedTo(owner, ownerId);
    assert.deepEqual(await relatedIds(target, where), [shown]);
    assert.deepEqual(await relatedIds(target, where, {}, user.client), [hidden.body.objectId, shown]);
    assert.deepEqual(await relatedIds(target, where, {}, server.master), [hidden.body.objectId, shown]);
    const counted = await server.client.get(`/1.1/classes/${target}`, { query: { where, count: 1, limit: 0 } });
    assert.deepEqual(counted.body, { results: [], count: 1 });
  });

  test('redirectClassNameForKey: sent to the owner class, answered from the target class, naming it', async () => {
    const { owner, target } = classes();
    const posts = await createAll(target, [{ n: 0 }, { n: 1 }]);
    const [ownerId] = await createAll(owner, [{ likes: add(...posts.map((id) => pointer(target, id))) }]);
    const where = relatedTo(owner, ownerId);
    const res = await server.client.get(`/1.1/classes/${owner}`, { query: { where, redirectClassNameForKey: 'likes' } });
    assert.deepEqual(Object.keys(res.body), ['results', 'className']);
    assert.equal(res.body.className, target);
    assert.deepEqual(res.body.results.map((object: { objectId: string }) => object.objectId), posts);
    const counted = await server.client.get(`/1.1/classes/${owner}`, { query: { where, redirectClassNameForKey: 'likes', count: 1, limit: 0 } });
    assert.deepEqual(counted.body, { results: [], count: 2, className: target });
    const notRelation = await server.client.get(`/1.1/classes/${owner}`, { query: { redirectClassNameForKey: 'pname' } });
    assert.deepEqual([notRelation.body.className, notRelation.body.results.length], [owner, 1]);
  });

  test('reverse query: a relation field equal to a pointer is "holds it"; $in, $ne, $nin, $all, count', async () => {
    const { owner, target } = classes();
    const posts = await createAll(target, [{}, {}, {}]);
    const people = await createAll(owner, [
      { likes: add(pointer(target, posts[0]), pointer(target, posts[1])) },
      { likes: add(pointer(target, posts[1])) },
      { pname: 'none' },
    ]);
    const holds = (id: string) => ({ likes: pointer(target, id) });
    assert.deepEqual(await relatedIds(owner, holds(posts[0])), [people[0]]);
    assert.deepEqual(await relatedIds(owner, holds(posts[1])), people.slice(0, 2));
    assert.deepEqual(await relatedIds(owner, holds(posts[2])), []);
    assert.deepEqual(await relatedIds(owner, { likes: { $in: [pointer(target, posts[0]), pointer(target, posts[2])] } }), [people[0]]);
    assert.deepEqual(await relatedIds(owner, { likes: { $ne: pointer(target, posts[0]) } }), people.slice(1));
    assert.deepEqual(await relatedIds(owner, { likes: { $nin: [pointer(target, posts[1])] } }), [people[2]]);
    assert.deepEqual(await relatedIds(owner, { likes: { $all: [pointer(target, posts[0]), pointer(target, posts[1])] } }), [people[0]]);
    assert.deepEqual(await relatedIds(owner, { ...holds(posts[1]), pname: { $exists: false } }), people.slice(0, 2));
    const counted = await server.client.get(`/1.1/classes/${owner}`, { query: { where: holds(posts[1]), count: 1, limit: 0 } });
    assert.deepEqual(counted.body, { results: [], count: 2 });
    const comments = await createAll(`Comment${classSeq}`, people.map((id) => ({ person: pointer(owner, id) })));
    const inQuery = { person: { $inQuery: { where: holds(posts[0]), className: owner } } };
    assert.deepEqual(await relatedIds(`Comment${classSeq}`, inQuery), [comments[0]], 'in a subquery, on its own class');
  });

  test('malformed $relatedTo: 400 code 102', async () => {
    const { target } = classes();
    const bad = [{ $relatedTo: 'x' }, { $relatedTo: { object: pointer('A', 'b') } }, { $relatedTo: { object: { objectId: 'b' }, key: 'likes' } }, { $relatedTo: { object: pointer('A', 'b'), key: 'a.b' } }];
    for (const where of bad) {
      const res = await server.client.get(`/1.1/classes/${target}`, { query: { where } });
      assert.deepEqual([res.status, res.body.code], [400, 102], JSON.stringify(where));
    }
  });
});

describe('users', () => {
  test('a user\'s relation: added with its session, read as the descriptor, queried; applied on sign-up as on a create', async () => {
    const { target } = classes();
    const [post] = await createAll(target, [{}]);
    const me = await signUp(server.client);
    const res = await me.client.put(`/1.1/users/${me.objectId}`, { favourites: add(pointer(target, post)) });
    assert.equal(res.status, 200, res.text);
    const got = await me.client.get(`/1.1/users/${me.objectId}`);
    assert.deepEqual(got.body.favourites, descriptor(target));
    assert.deepEqual(await relatedIds(target, relatedTo('_User', me.objectId, 'favourites')), [post]);
    const listed = await server.master.get('/1.1/users', { query: { where: { objectId: me.objectId } } });
    assert.deepEqual(listed.body.results[0].favourites, descriptor(target));
    const bad = await me.client.put(`/1.1/users/${me.objectId}`, { favourites: add(pointer('Other', 'x')) });
    assert.deepEqual([bad.status, bad.body], [400, invalid]);
    const clash = await server.client.post('/1.1/users', { username: `rel${classSeq}x`, password: 'pw', favourites: add(pointer('Other', 'x')) });
    assert.deepEqual([clash.status, clash.body], [400, invalid]);
    const signup = await server.client.post('/1.1/users', { username: `rel${classSeq}`, password: 'pw', favourites: add(pointer(target, post)) });
    assert.equal(signup.status, 201, signup.text);
    assert.deepEqual(await relatedIds(target, relatedTo('_User', signup.body.objectId, 'favourites')), [post]);
    const fresh = await server.master.get(`/1.1/users/${signup.body.objectId}`);
    assert.deepEqual(fresh.body.favourites, descriptor(target));
    const taken = await server.master.get('/1.1/users', { query: { where: { username: `rel${classSeq}x` }, count: 1, limit: 0 } });
    assert.deepEqual(taken.body, { results: [], count: 0 }, 'a refused sign-up leaves no user');
    const login = await server.client.post('/1.1/login', { username: `rel${classSeq}`, password: 'pw' });
    assert.equal(login.status, 200, login.text);
    assert.deepEqual(login.body.favourites, descriptor(target));
    const mine = await server.client.get('/1.1/users/me', { headers: { 'X-LC-Session': login.body.sessionToken } });
    assert.deepEqual([mine.status, mine.body.favourites], [200, descriptor(target)]);
    // A user who never wrote the field reads it as its descriptor too, as every object of the class.
    const other = await me.client.get('/1.1/users/me');
    assert.deepEqual(other.body.favourites, descriptor(target));
  });
});

describe('deletes', () => {
  test('a deleted member leaves every relation; a deleted owner takes its members with it', async () => {
    const { owner, target } = classes();
    const posts = await createAll(target, [{}, {}]);
    const [ownerId] = await createAll(owner, [{ likes: add(...posts.map((id) => pointer(target, id))) }]);
    assert.equal((await server.client.delete(`/1.1/classes/${target}/${posts[0]}`)).status, 200);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, ownerId)), [posts[1]]);
    assert.deepEqual(await relatedIds(owner, { likes: pointer(target, posts[0]) }), [], 'nor is it held by the reverse query');
    assert.equal((await server.client.delete(`/1.1/classes/${owner}/${ownerId}`)).status, 200);
    assert.deepEqual(await relatedIds(target, relatedTo(owner, ownerId)), []);
    const other = await server.client.get(`/1.1/classes/${target}/${posts[1]}`);
    assert.equal(other.body.objectId, posts[1], 'members themselves stay');
  });
});
