// Subqueries and array operators (issue #16 point 4) through the official JavaScript SDK (npm
// leancloud-storage): matchesQuery, doesNotMatchQuery, matchesKeyInQuery, doesNotMatchKeyInQuery (the SDK
// sends the inner query's _getParams() with its className), containsAll with pointers, sizeEqualTo, count().
// Before: the four subquery operators were refused (400 code 102); containsAll of pointers found nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { sdkServer } from './helpers/sdk.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';

const server = sdkServer();
const posts: Record<string, AV.Object> = {};
let owner: SignedUpUser;

const names = (objects: AV.Queriable[]) => objects.map((o) => o.get('name') as string).sort();

/** The objects every test reads, made once, by the first test (the server starts in a hook of its own). */
let seeded: Promise<void> | undefined;
const seed = () => (seeded ??= makeObjects());

async function makeObjects(): Promise<void> {
  owner = await signUp(server().client);
  for (const [name, tag, n] of [['p1', 'a', 1], ['p2', 'b', 2], ['p3', 'a', 3]] as const) {
    posts[name] = await new AV.Object('SdkSqPost', { name, tag, n }).save();
  }
  // Tagged a, readable by its owner only: never a match for others.
  const hidden = new AV.Object('SdkSqPost', { name: 'p4', tag: 'a', n: 4 });
  const acl = new AV.ACL();
  acl.setReadAccess(owner.objectId, true);
  hidden.setACL(acl);
  posts.p4 = await hidden.save();
  await AV.Object.saveAll([
    new AV.Object('SdkSqComment', { name: 'c1', post: posts.p1 }),
    new AV.Object('SdkSqComment', { name: 'c2', post: posts.p2 }),
    new AV.Object('SdkSqComment', { name: 'c3', post: posts.p3 }),
    new AV.Object('SdkSqComment', { name: 'c4', post: posts.p4 }),
    new AV.Object('SdkSqComment', { name: 'c5' }),
  ]);
  await AV.Object.saveAll([
    new AV.Object('SdkSqTeam', { name: 'reds', city: 'Paris', wins: 3 }),
    new AV.Object('SdkSqTeam', { name: 'blues', city: 'Lyon', wins: 0 }),
    new AV.Object('SdkSqFan', { name: 'ann', hometown: 'Paris' }),
    new AV.Object('SdkSqFan', { name: 'bob', hometown: 'Lyon' }),
    new AV.Object('SdkSqFan', { name: 'cat', hometown: 'Nice' }),
  ]);
}

const taggedA = () => new AV.Query('SdkSqPost').equalTo('tag', 'a');

test('matchesQuery and doesNotMatchQuery: pointers to the inner query matches the caller can read', async () => {
  await seed();
  assert.deepEqual(names(await new AV.Query('SdkSqComment').matchesQuery('post', taggedA()).find()), ['c1', 'c3']);
  assert.deepEqual(names(await new AV.Query('SdkSqComment').doesNotMatchQuery('post', taggedA()).find()), ['c2', 'c4', 'c5']);
  // The inner query's own limit and order travel with it: only the post with the highest n.
  const top = new AV.Query('SdkSqPost').descending('n').limit(1);
  assert.deepEqual(names(await new AV.Query('SdkSqComment').matchesQuery('post', top).find()), ['c3']);
  // Nested in an or-query.
  const either = AV.Query.or(new AV.Query('SdkSqComment').matchesQuery('post', taggedA()), new AV.Query('SdkSqComment').equalTo('name', 'c5'));
  assert.deepEqual(names(await either.find()), ['c1', 'c3', 'c5']);
});

test("the owner's session reads the post only it may read", async () => {
  await seed();
  const res = await server().client.get('/1.1/classes/SdkSqComment', {
    session: owner.sessionToken,
    query: { where: { post: { $inQuery: { className: 'SdkSqPost', where: { tag: 'a' } } } }, order: 'name' },
  });
  assert.deepEqual(res.body.results.map((r: { name: string }) => r.name), ['c1', 'c3', 'c4']);
});

test('matchesKeyInQuery and doesNotMatchKeyInQuery', async () => {
  await seed();
  const winners = new AV.Query('SdkSqTeam').greaterThan('wins', 0);
  assert.deepEqual(names(await new AV.Query('SdkSqFan').matchesKeyInQuery('hometown', 'city', winners).find()), ['ann']);
  assert.deepEqual(names(await new AV.Query('SdkSqFan').doesNotMatchKeyInQuery('hometown', 'city', winners).find()), ['bob', 'cat']);
  // A pointer key: comments whose post is the post of a comment named c2.
  const c2 = new AV.Query('SdkSqComment').equalTo('name', 'c2');
  assert.deepEqual(names(await new AV.Query('SdkSqComment').matchesKeyInQuery('post', 'post', c2).find()), ['c2']);
});

test('count() of a subquery, and a subquery refused with its code', async () => {
  await seed();
  assert.equal(await new AV.Query('SdkSqComment').matchesQuery('post', taggedA()).count(), 2);
  assert.equal(await new AV.Query('SdkSqComment').doesNotMatchQuery('post', taggedA()).count(), 3);
  const users = new AV.Query('_User').equalTo('username', owner.username);
  const refused = await new AV.Query('SdkSqComment').matchesQuery('post', users).find().then(
    () => null,
    (error: { code: number; message: string }) => error,
  );
  assert.deepEqual(refused && [refused.code, refused.message], [403, 'Forbidden to find by class permissions.']);
});

test('containsAll with pointers, sizeEqualTo', async () => {
  await seed();
  await AV.Object.saveAll([
    new AV.Object('SdkSqBag', { name: 'b1', items: [posts.p1, posts.p2] }),
    new AV.Object('SdkSqBag', { name: 'b2', items: [posts.p2] }),
    new AV.Object('SdkSqBag', { name: 'b3', items: [posts.p3, posts.p1, posts.p2] }),
  ]);
  assert.deepEqual(names(await new AV.Query('SdkSqBag').containsAll('items', [posts.p2, posts.p1]).find()), ['b1', 'b3']);
  assert.deepEqual(names(await new AV.Query('SdkSqBag').containsAll('items', [posts.p3]).find()), ['b3']);
  assert.deepEqual(names(await new AV.Query('SdkSqBag').sizeEqualTo('items', 2).find()), ['b1']);
  assert.equal(await new AV.Query('SdkSqBag').containsAll('items', [posts.p1]).count(), 2);
});
