// Key order as the hosted service answered (scripts/replay-recordings.mjs with ORDER=1). Its objects were
// Clojure maps of keyword keys: up to 8 entries (4 fields beside ACL, createdAt, updatedAt and the id) an
// array map, in insertion order with createdAt, updatedAt and objectId after the fields; past that a hash
// map, listing every key, the dates and id among them, by its hash (src/lib/hash-map-order.ts). Users always
// held more than 8 entries (password hash, salt, flags). The expected orders below are the recordings' own.
// Fields of the small objects have keys of growing length, so PostgreSQL's jsonb (which sorts keys by length
// first) keeps them in insertion order too.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { uniqueName } from './helpers/accounts.ts';
import { hashMapOrder } from '../src/lib/hash-map-order.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const keys = (text: string) => Object.keys(JSON.parse(text) as object);
const hashOrder = (names: string[]) => hashMapOrder(names.map((key) => ({ key }))).map(({ key }) => key);
const pageKeys = (text: string) => (JSON.parse(text) as { results: object[] }).results.map((one) => Object.keys(one));

// R:Objects/Fetching Objects/fetchAll, R:Objects/Retrieving Objects/should be the just save Object: the
// GameScore the SDK's tests save, read back by id and in a batch.
const gameScore = { score: 1111, playerName: 'dsf', cheatMode: false, arr: ['arr1', 'arr2'], id: 'id' };
const gameScoreOrder = ['updatedAt', 'arr', 'objectId', 'createdAt', 'playerName', 'id', 'score', 'cheatMode'];

describe('objects', () => {
  test('up to four fields: the fields, then createdAt, updatedAt, objectId (ACL before the dates)', async () => {
    const created = await server.client.post('/1.1/classes/Ordered', { a: 1, bb: 'two', ccc: [3], dddd: { n: 4 } });
    assert.equal(created.status, 201, created.text);
    // R:Objects/Saving Objects: a create answers objectId, then createdAt.
    assert.deepEqual(keys(created.text), ['objectId', 'createdAt']);
    const id = created.body.objectId;
    const small = ['a', 'bb', 'ccc', 'dddd', 'createdAt', 'updatedAt', 'objectId'];
    assert.deepEqual(keys((await server.client.get(`/1.1/classes/Ordered/${id}`)).text), small);
    assert.deepEqual(pageKeys((await server.client.get('/1.1/classes/Ordered', { query: { where: { objectId: id } } })).text), [small]);
    // R:Queries/Query Constraints/includeACL: {playerName,score,players,test,ACL,createdAt,updatedAt,objectId}.
    const withAcl = ['a', 'bb', 'ccc', 'dddd', 'ACL', 'createdAt', 'updatedAt', 'objectId'];
    assert.deepEqual(keys((await server.client.get(`/1.1/classes/Ordered/${id}`, { query: { returnACL: 'true' } })).text), withAcl);
    const made = await server.client.post('/1.1/classes/Ordered?new=true', { a: 2, bb: 'b' });
    assert.deepEqual(keys(made.text), ['a', 'bb', 'createdAt', 'updatedAt', 'objectId']);
  });

  test("a class's defaults before the fields given, its relation descriptors after objectId", async () => {
    // R:Objects/Relational Data: Person (default company) saved with pname, likes a Relation: the create's
    // new=true answer was {company, pname, createdAt, updatedAt, objectId, likes}. (Keys here shorter first, as
    // PostgreSQL's jsonb keeps them.)
    const schema = await server.master.put('/1.1/schemas/Member', { co: { default: 'leancloud' } });
    assert.equal(schema.status, 200, schema.text);
    const target = await server.client.post('/1.1/classes/Liked', { a: 1 });
    const likes = { __op: 'AddRelation', objects: [{ __type: 'Pointer', className: 'Liked', objectId: target.body.objectId }] };
    const made = await server.client.post('/1.1/classes/Member?new=true', { pname: 'p', likes });
    assert.equal(made.status, 201, made.text);
    const order = ['co', 'pname', 'createdAt', 'updatedAt', 'objectId', 'likes'];
    assert.deepEqual(keys(made.text), order);
    const id = made.body.objectId;
    assert.deepEqual(keys((await server.client.get(`/1.1/classes/Member/${id}`)).text), order);
    assert.deepEqual(pageKeys((await server.client.get('/1.1/classes/Member', { query: { where: { objectId: id } } })).text), [order]);
    // R:User/User#getRoles: a role reads {name, createdAt, updatedAt, objectId, roles, users}.
    const role = await server.master.post('/1.1/roles', { name: uniqueName('role'), ACL: { '*': { read: true } } });
    assert.equal(role.status, 201, role.text);
    const roles = await server.client.get('/1.1/classes/_Role', { query: { where: { objectId: role.body.objectId } } });
    assert.deepEqual(pageKeys(roles.text), [['name', 'createdAt', 'updatedAt', 'objectId', 'roles', 'users']]);
  });

  test('five fields or more: every key in the hosted hash-map order, on every read path', async () => {
    const created = await server.client.post('/1.1/classes/GameScore', gameScore);
    assert.equal(created.status, 201, created.text);
    const id = created.body.objectId;
    assert.deepEqual(keys((await server.client.get(`/1.1/classes/GameScore/${id}`)).text), gameScoreOrder);
    const batch = await server.client.post('/1.1/batch', { requests: [{ method: 'GET', path: `/1.1/classes/GameScore/${id}` }] });
    assert.deepEqual(Object.keys(batch.body[0].success), gameScoreOrder);
    const where = { where: { objectId: id } };
    assert.deepEqual(pageKeys((await server.client.get('/1.1/classes/GameScore', { query: where })).text), [gameScoreOrder]);
    // The parsing path (returnACL) lists the same keys in the same order, ACL in its place among them.
    const withAcl = keys((await server.client.get(`/1.1/classes/GameScore/${id}`, { query: { returnACL: 'true' } })).text);
    assert.deepEqual(withAcl, ['updatedAt', 'ACL', 'arr', 'objectId', 'createdAt', 'playerName', 'id', 'score', 'cheatMode']);
    // keys= leaves three fields: an array map again.
    const picked = await server.client.get(`/1.1/classes/GameScore/${id}`, { query: { keys: 'score,playerName,arr' } });
    assert.equal(keys(picked.text).slice(-3).join(), 'createdAt,updatedAt,objectId');
  });

  test('an included object and its root keep the order on the spliced and the parsing paths', async () => {
    const score = await server.client.post('/1.1/classes/GameScore', gameScore);
    const post = await server.client.post('/1.1/classes/ScorePost', { a: 1, bb: 2, ccc: 3, dddd: 4, eeeee: 5, score: { __type: 'Pointer', className: 'GameScore', objectId: score.body.objectId } });
    assert.equal(post.status, 201, post.text);
    const rootOrder = hashOrder(['a', 'bb', 'ccc', 'dddd', 'eeeee', 'score', 'createdAt', 'updatedAt', 'objectId']);
    for (const query of [{ include: 'score' }, { include: 'score', keys: 'a,bb,ccc,dddd,eeeee,score' }]) {
      const page = await server.client.get('/1.1/classes/ScorePost', { query: { ...query, where: { objectId: post.body.objectId } } });
      assert.equal(page.status, 200, page.text);
      const [root] = (JSON.parse(page.text) as { results: Record<string, object>[] }).results;
      assert.deepEqual(Object.keys(root), rootOrder);
      assert.deepEqual(Object.keys(root.score), hashOrder([...gameScoreOrder, '__type', 'className']));
    }
  });

  // R:Objects/Relational Data/should set relation: a Post of four fields included in a Comment was a map of nine
  // keys, __type and className among them, so every key by hash (its own read lists them in insertion order).
  // R:Queries/Query Constraints/include and R:AV.Status/should follow: one field, or a user's six keys: the
  // object as read, then __type and className.
  test('an included object is the object as read plus __type and className, all by hash past 8 keys', async () => {
    const post = await server.client.post('/1.1/classes/Post', { content: 'Where should we go for lunch?', title: 'post1', author: 'author1', location: { __type: 'GeoPoint', latitude: 80.01, longitude: -30.01 } });
    const small = await server.client.post('/1.1/classes/TestClass', { foo: 'bar' });
    const user = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw-order' });
    const pointer = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });
    const comment = await server.client.post('/1.1/classes/Comment', {
      content: 'comment1',
      parent: pointer('Post', post.body.objectId),
      test: pointer('TestClass', small.body.objectId),
      user: pointer('_User', user.body.objectId),
      posts: [pointer('Post', post.body.objectId)],
    });
    assert.equal(comment.status, 201, comment.text);
    const postOrder = ['updatedAt', 'content', 'objectId', 'createdAt', 'className', 'title', 'author', '__type', 'location'];
    const smallOrder = ['foo', 'createdAt', 'updatedAt', 'objectId', '__type', 'className'];
    const userOrder = ['updatedAt', 'objectId', 'username', 'createdAt', 'emailVerified', 'mobilePhoneVerified', '__type', 'className'];
    // Read directly, an array map (its fields in jsonb's order on PostgreSQL).
    assert.deepEqual(keys((await server.client.get(`/1.1/classes/Post/${post.body.objectId}`)).text).slice(4), ['createdAt', 'updatedAt', 'objectId']);
    const id = comment.body.objectId;
    const first = (text: string) => (JSON.parse(text) as { results: Record<string, object>[] }).results[0];
    // A page including objects of the application's own classes only splices their stored text; a page
    // including a user, a read by id and keys= parse.
    for (const include of ['parent,test,posts', 'parent,test,posts,user']) {
      const reads = [
        first((await server.client.get('/1.1/classes/Comment', { query: { include, where: { objectId: id } } })).text),
        JSON.parse((await server.client.get(`/1.1/classes/Comment/${id}`, { query: { include } })).text) as Record<string, object>,
        first((await server.client.get('/1.1/classes/Comment', { query: { include, keys: 'content,parent,test,user,posts', where: { objectId: id } } })).text),
      ];
      for (const root of reads) {
        assert.deepEqual(Object.keys(root.parent), postOrder);
        assert.deepEqual(Object.keys((root.posts as object[])[0]), postOrder);
        assert.deepEqual(Object.keys(root.test), smallOrder);
        if (include.endsWith('user')) assert.deepEqual(Object.keys(root.user), userOrder);
      }
    }
  });
});

describe('users', () => {
  test('sign-up, login, users/me and reads of users: hash-map order, as every recorded user answer', async () => {
    const username = uniqueName();
    // R:AV-Status/Query statuses/should not cause URI too long: a sign-up without an email.
    const signed = await server.client.post('/1.1/users', { username, password: 'pw-order' });
    assert.equal(signed.status, 201, signed.text);
    const withToken = ['sessionToken', 'updatedAt', 'objectId', 'username', 'createdAt', 'emailVerified', 'mobilePhoneVerified'];
    assert.deepEqual(keys(signed.text), withToken);
    assert.deepEqual(keys((await server.client.post('/1.1/login', { username, password: 'pw-order' })).text), withToken);
    const session = signed.body.sessionToken as string;
    assert.deepEqual(keys((await server.client.get('/1.1/users/me', { session })).text), withToken);
    // R:Queries/All User: a user read by a query, without its token.
    const read = ['updatedAt', 'objectId', 'username', 'createdAt', 'emailVerified', 'mobilePhoneVerified'];
    assert.deepEqual(keys((await server.client.get(`/1.1/users/${signed.body.objectId}`)).text), read);
    assert.deepEqual(pageKeys((await server.master.get('/1.1/classes/_User', { query: { where: { username } } })).text), [read]);

    // R:User/User.signUp/should sign up: a sign-up with an email, a phone and a custom field.
    const second = await server.client.post('/1.1/users', { username: uniqueName(), password: 'pw-order', email: `${uniqueName()}@example.com`, gender: 'female', phone: '415-392-0202' });
    assert.equal(second.status, 201, second.text);
    assert.deepEqual(keys(second.text), ['email', 'sessionToken', 'updatedAt', 'phone', 'objectId', 'username', 'createdAt', 'emailVerified', 'gender', 'mobilePhoneVerified']);
  });
});
