// Subqueries ($inQuery, $notInQuery, $select, $dontSelect) and the array operators over HTTP (issue #16
// point 4): one statement each, the subquery read with the caller's readers and cut at its limit.
// Before: the four operators answered 400 code 102 "Not supported yet"; $all of pointers matched nothing.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { insertUntyped } from './helpers/untyped.ts';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import { newObjectId } from '../src/lib/ids.ts';
import type { JsonObject } from '../src/objects/types.ts';

let server: TestServer;
let owner: SignedUpUser;
const ids: Record<string, string> = {};

const pointer = (className: string, name: string) => ({ __type: 'Pointer', className, objectId: ids[name] });

/** Creates objects in batches of 500 (a batch's most); each gets a name to find its id by. */
async function seed(className: string, objects: Array<Record<string, unknown>>): Promise<void> {
  for (let start = 0; start < objects.length; start += 500) {
    const chunk = objects.slice(start, start + 500);
    const res = await server.master.post('/1.1/batch', {
      requests: chunk.map((body) => ({ method: 'POST', path: `/1.1/classes/${className}`, body })),
    });
    assert.equal(res.status, 200, res.text);
    res.body.forEach((item: { success?: { objectId: string } }, i: number) => {
      assert.ok(item.success, JSON.stringify(item));
      ids[chunk[i].name as string] = item.success.objectId;
    });
  }
}

before(async () => {
  server = await startServer();
  owner = await signUp(server.client);
  await seed('SqAuthor', [
    { name: 'alice', city: 'Paris' },
    { name: 'boris', city: 'Berlin' },
    { name: 'chen', city: 'Paris', ACL: { [owner.objectId]: { read: true } } },
  ]);
  await seed('SqPost', [
    { name: 'p1', tag: 'a', n: 1, author: pointer('SqAuthor', 'alice') },
    { name: 'p2', tag: 'b', n: 2, author: pointer('SqAuthor', 'boris') },
    { name: 'p3', tag: 'a', n: 3, author: pointer('SqAuthor', 'boris') },
    // Only the owner may read it: it must neither match for others nor let its fields decide a match.
    { name: 'p4', tag: 'a', n: 4, author: pointer('SqAuthor', 'alice'), ACL: { [owner.objectId]: { read: true } } },
    { name: 'p5', tag: 'b', n: 5, author: pointer('SqAuthor', 'chen') },
  ]);
  await seed('SqComment', [
    { name: 'c1', post: pointer('SqPost', 'p1') },
    { name: 'c2', post: pointer('SqPost', 'p2') },
    { name: 'c3', post: pointer('SqPost', 'p3') },
    { name: 'c4', post: pointer('SqPost', 'p4') },
    { name: 'c5', post: pointer('SqPost', 'p5') },
    { name: 'c6' },
  ]);
  // A pointer to another class, and a String, where the class has a Pointer to SqPost: only imported data
  // holds them (the API refuses both, 111). Same id, another class: $inQuery matches pointers to the subquery's class only.
  const odd = [
    { name: 'c7', post: { __type: 'Pointer', className: 'SqOther', objectId: ids.p1 } },
    { name: 'c8', post: 'not a pointer' },
  ];
  (await insertUntyped(server.store, server.appId, 'SqComment', odd)).forEach((id, i) => (ids[odd[i].name] = id));
  await seed('SqLike', [
    { name: 'l1', by: 'ann', post: pointer('SqPost', 'p2'), postId: ids.p3 },
    { name: 'l2', by: 'ann', post: pointer('SqPost', 'p5'), postId: ids.p1 },
    { name: 'l3', by: 'bob', post: pointer('SqPost', 'p1'), postId: ids.p4 },
  ]);
  await seed('SqPerson', [
    { name: 'ann', hometown: 'Paris' },
    { name: 'ben', hometown: 'Berlin' },
    { name: 'cid', hometown: 'Rome' },
    { name: 'dot' },
  ]);
});
after(async () => {
  await server?.close();
});

async function names(className: string, where: unknown, options: { client?: TestServer['client']; extra?: Record<string, unknown> } = {}) {
  const res = await (options.client ?? server.client).get(`/1.1/classes/${className}`, { query: { where, order: 'name', ...options.extra } });
  assert.equal(res.status, 200, res.text);
  return res.body.results.map((r: { name: string }) => r.name);
}

const postsTagged = (tag: string, extra: Record<string, unknown> = {}) => ({ className: 'SqPost', where: { tag }, ...extra });

describe('$inQuery and $notInQuery', () => {
  test('the field is a pointer to one of the subquery matches, of its class', async () => {
    assert.deepEqual(await names('SqComment', { post: { $inQuery: postsTagged('a') } }), ['c1', 'c3']);
    assert.deepEqual(await names('SqComment', { post: { $inQuery: postsTagged('b') } }), ['c2', 'c5']);
    // A missing field, another class's pointer and a string are "not in".
    assert.deepEqual(await names('SqComment', { post: { $notInQuery: postsTagged('a') } }), ['c2', 'c4', 'c5', 'c6', 'c7', 'c8']);
  });

  test('a where given as a JSON string, and an empty where', async () => {
    assert.deepEqual(await names('SqComment', { post: { $inQuery: { className: 'SqPost', where: '{"n":{"$gte":3}}' } } }), ['c3', 'c5']);
    assert.deepEqual(await names('SqComment', { post: { $inQuery: { className: 'SqPost' } } }), ['c1', 'c2', 'c3', 'c5']);
  });

  test('the subquery reads only what the caller may: an unreadable object neither matches nor decides', async () => {
    // p4 (tag a) is the owner's: for others c4 is not "in" and is "not in", whatever p4 holds.
    assert.deepEqual(await names('SqComment', { post: { $inQuery: postsTagged('a') } }), ['c1', 'c3']);
    assert.deepEqual(await names('SqComment', { post: { $notInQuery: { className: 'SqPost', where: { n: 4 } } } }), [
      'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8',
    ]);
    assert.deepEqual(await names('SqComment', { post: { $inQuery: postsTagged('a') } }, { client: owner.client }), ['c1', 'c3', 'c4']);
    assert.deepEqual(await names('SqComment', { post: { $inQuery: postsTagged('a') } }, { client: server.master }), ['c1', 'c3', 'c4']);
  });

  test('nested subqueries, and subqueries inside $or and $and', async () => {
    const byParisAuthors = { className: 'SqPost', where: { author: { $inQuery: { className: 'SqAuthor', where: { city: 'Paris' } } } } };
    // alice's p1 and p4 (p4 unreadable); chen is unreadable, so p5 is not by a Paris author for others.
    assert.deepEqual(await names('SqComment', { post: { $inQuery: byParisAuthors } }), ['c1']);
    assert.deepEqual(await names('SqComment', { post: { $inQuery: byParisAuthors } }, { client: owner.client }), ['c1', 'c4', 'c5']);
    assert.deepEqual(await names('SqComment', { $or: [{ post: { $inQuery: postsTagged('b') } }, { name: 'c6' }] }), ['c2', 'c5', 'c6']);
    assert.deepEqual(
      await names('SqComment', { $and: [{ post: { $inQuery: postsTagged('b') } }, { post: { $notInQuery: { className: 'SqPost', where: { n: 5 } } } }] }),
      ['c2'],
    );
  });

  test('an array of pointers matches when any element points at a match (hosted), pointers of another class never', async () => {
    // Before: an Array field never matched $inQuery (only a single pointer did).
    await seed('SqReading', [
      { name: 'r1', posts: [pointer('SqPost', 'p2'), pointer('SqPost', 'p1')] },
      { name: 'r2', posts: [pointer('SqPost', 'p2')] },
      { name: 'r3', posts: [] },
      { name: 'r4', posts: [pointer('SqPost', 'p3'), pointer('SqPost', 'p1')] },
      { name: 'r5', posts: [{ __type: 'Pointer', className: 'SqOther', objectId: ids.p1 }, pointer('SqPost', 'p4')] },
      { name: 'r6' },
    ]);
    assert.deepEqual(await names('SqReading', { posts: { $inQuery: postsTagged('a') } }), ['r1', 'r4']);
    assert.deepEqual(await names('SqReading', { posts: { $inQuery: postsTagged('b') } }), ['r1', 'r2']);
    assert.deepEqual(await names('SqReading', { posts: { $notInQuery: postsTagged('a') } }), ['r2', 'r3', 'r5', 'r6']);
    // p4 is the owner's: r5 matches for the owner only. r4 holds two matches and is answered once.
    assert.deepEqual(await names('SqReading', { posts: { $inQuery: postsTagged('a') } }, { client: owner.client }), ['r1', 'r4', 'r5']);
    const counted = await server.client.get('/1.1/classes/SqReading', { query: { where: { posts: { $inQuery: postsTagged('a') } }, count: 1, limit: 0 } });
    assert.deepEqual(counted.body, { results: [], count: 2 });
    assert.deepEqual(await names('SqReading', { $or: [{ posts: { $inQuery: postsTagged('b') } }, { name: 'r6' }] }), ['r1', 'r2', 'r6']);
  });

  test('order, skip and limit pick the matches; matches past the limit are dropped', async () => {
    assert.deepEqual(await names('SqComment', { post: { $inQuery: { className: 'SqPost', order: '-n', limit: 2 } } }), ['c3', 'c5']);
    assert.deepEqual(await names('SqComment', { post: { $inQuery: { className: 'SqPost', order: 'n', skip: 1, limit: 2 } } }), ['c2', 'c3']);
    assert.deepEqual(await names('SqComment', { post: { $inQuery: { className: 'SqPost', limit: 0 } } }), []);
    assert.deepEqual(await names('SqComment', { post: { $notInQuery: { className: 'SqPost', order: 'n', limit: 1 } } }), [
      'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8',
    ]);
  });

  test('a class with no objects matches nothing', async () => {
    assert.deepEqual(await names('SqComment', { post: { $inQuery: { className: 'SqNobody' } } }), []);
    assert.equal((await names('SqComment', { post: { $notInQuery: { className: 'SqNobody' } } })).length, 8);
  });

  test('count=1&limit=0 answers only the count; with a limit, both', async () => {
    const where = { post: { $inQuery: postsTagged('b') } };
    const counted = await server.client.get('/1.1/classes/SqComment', { query: { where, count: 1, limit: 0 } });
    assert.deepEqual([counted.status, counted.body], [200, { results: [], count: 2 }]);
    const both = await server.client.get('/1.1/classes/SqComment', { query: { where, count: 1, limit: 1, order: 'name', keys: 'name' } });
    assert.equal(both.status, 200, both.text);
    assert.deepEqual([both.body.count, both.body.results.map((r: { name: string }) => r.name)], [2, ['c2']]);
  });
});

describe('the default and largest subquery limits', () => {
  // Through the store: two thousand objects over HTTP would take most of this file's time.
  before(async () => {
    const insert = async (className: string, make: (i: number) => JsonObject) => {
      for (let start = 0; start < 1005; start += 100) {
        await Promise.all(Array.from({ length: Math.min(100, 1005 - start) }, async (_, k) => {
          const i = start + k;
          const data = make(i);
          const object = { className, objectId: newObjectId(base + i), createdAt: base + i, updatedAt: base + i, acl: null, data };
          assert.ok((await server.store.insertObject(server.appId, object)).ok);
          ids[data.name as string] = object.objectId;
        }));
      }
    };
    const base = Date.now();
    await insert('SqMany', (i) => ({ name: `m${String(i).padStart(4, '0')}` }));
    await insert('SqRef', (i) => ({ name: `rm${String(i).padStart(4, '0')}`, to: pointer('SqMany', `m${String(i).padStart(4, '0')}`) }));
  });

  test('100 matches by default, at most 1000 whatever the limit says', async () => {
    const count = async (inner: Record<string, unknown>) => {
      const res = await server.client.get('/1.1/classes/SqRef', { query: { where: { to: { $inQuery: { className: 'SqMany', ...inner } } }, count: 1, limit: 0 } });
      assert.equal(res.status, 200, res.text);
      return res.body.count;
    };
    assert.equal(await count({}), 100);
    assert.equal(await count({ limit: 1000 }), 1000);
    assert.equal(await count({ limit: 5000 }), 1000);
    assert.equal(await count({ limit: 10, skip: 1000 }), 5);
    // The first 100 in insertion order: the default order of a query.
    const page = await server.client.get('/1.1/classes/SqRef', { query: { where: { to: { $inQuery: { className: 'SqMany' } } }, order: '-name', limit: 1 } });
    assert.deepEqual(page.body.results.map((r: { name: string }) => r.name), ['rm0099']);
  });
});

describe('$select and $dontSelect', () => {
  test("the field's value is among the subquery's values of the key", async () => {
    const cities = { query: { className: 'SqAuthor', where: {} }, key: 'city' };
    // chen (Paris) is unreadable; alice is Paris too, so ann still matches; Rome and a missing field do not.
    assert.deepEqual(await names('SqPerson', { hometown: { $select: cities } }), ['ann', 'ben']);
    assert.deepEqual(await names('SqPerson', { hometown: { $dontSelect: cities } }), ['cid', 'dot']);
    const berlin = { query: { className: 'SqAuthor', where: { name: 'boris' } }, key: 'city' };
    assert.deepEqual(await names('SqPerson', { hometown: { $select: berlin } }), ['ben']);
  });

  test('an unreadable object gives no value', async () => {
    const chen = { query: { className: 'SqAuthor', where: { name: 'chen' } }, key: 'city' };
    assert.deepEqual(await names('SqPerson', { hometown: { $select: chen } }), []);
    assert.deepEqual(await names('SqPerson', { hometown: { $dontSelect: chen } }), ['ann', 'ben', 'cid', 'dot']);
    assert.deepEqual(await names('SqPerson', { hometown: { $select: chen } }, { client: owner.client }), ['ann']);
  });

  test('pointers compare by class and id; objectId is a key and a field', async () => {
    const likedByAnn = { query: { className: 'SqLike', where: { by: 'ann' } }, key: 'post' };
    assert.deepEqual(await names('SqComment', { post: { $select: likedByAnn } }), ['c2', 'c5']);
    assert.deepEqual(await names('SqComment', { post: { $dontSelect: likedByAnn } }), ['c1', 'c3', 'c4', 'c6', 'c7', 'c8']);
    const likedIds = { query: { className: 'SqLike', where: { by: 'ann' } }, key: 'postId' };
    assert.deepEqual(await names('SqPost', { objectId: { $select: likedIds } }), ['p1', 'p3']);
    const postIds = { query: { className: 'SqPost', where: { tag: 'a' } }, key: 'objectId' };
    assert.deepEqual(await names('SqLike', { postId: { $select: postIds } }), ['l1', 'l2']);
  });

  test('createdAt and updatedAt are keys and fields of $select, as the Date values a date field holds', async () => {
    const alice = await server.master.get(`/1.1/classes/SqAuthor/${ids.alice}`);
    await seed('SqStamp', [
      { name: 's1', at: { __type: 'Date', iso: alice.body.createdAt } },
      { name: 's2', at: { __type: 'Date', iso: '2000-01-01T00:00:00.001Z' } },
    ]);
    for (const key of ['createdAt', 'updatedAt']) {
      const ofAlice = { query: { className: 'SqAuthor', where: { name: 'alice' } }, key };
      assert.deepEqual(await names('SqStamp', { at: { $select: ofAlice } }), ['s1'], key);
      assert.deepEqual(await names('SqStamp', { at: { $dontSelect: ofAlice } }), ['s2'], key);
    }
    const stamps = { query: { className: 'SqStamp', where: {} }, key: 'at' };
    assert.deepEqual(await names('SqAuthor', { createdAt: { $select: stamps } }), ['alice']);
    const own = { query: { className: 'SqAuthor', where: { name: 'boris' } }, key: 'createdAt' };
    assert.deepEqual(await names('SqAuthor', { createdAt: { $select: own } }), ['boris']);
  });

  test('an array field matches when it holds one of the values, pointers included', async () => {
    await seed('SqFan', [
      { name: 'f1', cities: ['Rome', 'Berlin'] },
      { name: 'f2', cities: ['Rome'] },
      { name: 'f3', likes: [pointer('SqPost', 'p3'), pointer('SqPost', 'p2')] },
    ]);
    const berlin = { query: { className: 'SqAuthor', where: { name: 'boris' } }, key: 'city' };
    assert.deepEqual(await names('SqFan', { cities: { $select: berlin } }), ['f1']);
    assert.deepEqual(await names('SqFan', { cities: { $dontSelect: berlin } }), ['f2', 'f3']);
    const likedByAnn = { query: { className: 'SqLike', where: { by: 'ann' } }, key: 'post' };
    assert.deepEqual(await names('SqFan', { likes: { $select: likedByAnn } }), ['f3']);
    const likedByBob = { query: { className: 'SqLike', where: { by: 'bob' } }, key: 'post' };
    assert.deepEqual(await names('SqFan', { likes: { $select: likedByBob } }), []);
  });

  test('limit applies inside $select too, and it nests with $inQuery', async () => {
    const first = { query: { className: 'SqAuthor', where: {}, order: 'name', limit: 1 }, key: 'city' };
    assert.deepEqual(await names('SqPerson', { hometown: { $select: first } }), ['ann']);
    const ofPostsByBoris = {
      query: { className: 'SqLike', where: { post: { $inQuery: { className: 'SqPost', where: { author: pointer('SqAuthor', 'boris') } } } } },
      key: 'post',
    };
    assert.deepEqual(await names('SqComment', { post: { $select: ofPostsByBoris } }), ['c2']);
  });
});

describe('refusals', () => {
  test('a malformed subquery answers its code', async () => {
    const bad: Array<[unknown, number, number?]> = [
      [{ post: { $inQuery: 'SqPost' } }, 102],
      [{ post: { $inQuery: { where: {} } } }, 103],
      [{ post: { $inQuery: { className: '1bad' } } }, 103],
      [{ post: { $inQuery: { className: 'SqPost', where: 5 } } }, 102],
      [{ post: { $inQuery: { className: 'SqPost', where: '{bad' } } }, 107],
      [{ post: { $inQuery: { className: 'SqPost', where: { n: { $bad: 1 } } } } }, 102],
      [{ post: { $inQuery: { className: 'SqPost', where: { 'bad-key': 1 } } } }, 105],
      [{ post: { $inQuery: { className: 'SqPost', limit: -1 } } }, 102],
      [{ post: { $inQuery: { className: 'SqPost', order: 5 } } }, 102],
      [{ post: { $select: { query: { className: 'SqPost' } } } }, 102],
      [{ post: { $select: { key: 'n' } } }, 102],
      [{ post: { $dontSelect: { query: { className: 'SqPost' }, key: 'bad-key' } } }, 105],
      [{ post: { $select: { query: { className: 'SqPost' }, key: 7 } } }, 102],
    ];
    for (const [where, code] of bad) {
      const res = await server.client.get('/1.1/classes/SqComment', { query: { where } });
      assert.deepEqual([res.status, res.body.code], [400, code], `${JSON.stringify(where)}: ${res.text}`);
      assert.equal(typeof res.body.error, 'string');
    }
  });

  test('subqueries nest at most 16 deep', async () => {
    let where: unknown = { n: 1 };
    for (let depth = 0; depth < 17; depth++) where = { post: { $inQuery: { className: 'SqPost', where } } };
    const res = await server.client.get('/1.1/classes/SqComment', { query: { where } });
    assert.deepEqual([res.status, res.body.code], [400, 102]);
  });

  test('a subquery obeys the class rules of what it reads: _User and _Installation', async () => {
    const forbidden = { code: 403, error: 'Forbidden to find by class permissions.' };
    const users = { author: { $inQuery: { className: '_User', where: { username: owner.username } } } };
    const installations = { author: { $select: { query: { className: '_Installation' }, key: 'installationId' } } };
    for (const where of [users, installations, { $or: [{ n: 1 }, users] }]) {
      const res = await server.client.get('/1.1/classes/SqPost', { query: { where } });
      assert.deepEqual([res.status, res.body], [403, forbidden], JSON.stringify(where));
      assert.equal((await server.master.get('/1.1/classes/SqPost', { query: { where } })).status, 200);
    }
    // In a write's condition as well.
    const put = await server.client.put(`/1.1/classes/SqPost/${ids.p1}`, { n: 1 }, { query: { where: users } });
    assert.deepEqual([put.status, put.body], [403, forbidden]);
    assert.equal((await server.master.put('/1.1/settings', { userQueryPermission: true })).status, 200);
    try {
      assert.equal((await server.client.get('/1.1/classes/SqPost', { query: { where: users } })).status, 200);
      // authData stays out of reach inside a subquery too: as a filter, an order and a selected key.
      const probes = [
        { author: { $inQuery: { className: '_User', where: { 'authData.weixin.openid': { $exists: true } } } } },
        { author: { $notInQuery: { className: '_User', order: 'authData.qq.uid', limit: 1 } } },
        { author: { $select: { query: { className: '_User' }, key: 'authData' } } },
      ];
      for (const where of probes) {
        const res = await server.client.get('/1.1/classes/SqPost', { query: { where } });
        assert.deepEqual([res.status, res.body.code], [403, 403], JSON.stringify(where));
        assert.equal((await server.master.get('/1.1/classes/SqPost', { query: { where } })).status, 200);
      }
      // The user queries of /1.1/users and a subquery of them agree.
      const viaUsers = await server.client.get('/1.1/users', { query: { where: { objectId: { $inQuery: { className: '_User', where: { 'authData.x': 1 } } } } } });
      assert.deepEqual([viaUsers.status, viaUsers.body.code], [403, 403]);
      // Secrets are no fields: a subquery on them matches nothing.
      const secret = { author: { $select: { query: { className: '_User' }, key: 'sessionToken' } } };
      assert.deepEqual(await names('SqPost', secret), []);
    } finally {
      await server.master.put('/1.1/settings', { userQueryPermission: false });
    }
  });

  test('a write condition with a subquery: the write happens only when it holds', async () => {
    const tagA = { post: { $inQuery: postsTagged('a') } };
    const miss = await server.client.put(`/1.1/classes/SqComment/${ids.c2}`, { seen: true }, { query: { where: tagA } });
    assert.deepEqual([miss.status, miss.body.code], [400, 305]);
    const hit = await server.client.put(`/1.1/classes/SqComment/${ids.c1}`, { seen: true }, { query: { where: tagA } });
    assert.equal(hit.status, 200, hit.text);
  });
});

describe('$all over pointers, dates and objects; $size; $exists on nested keys', () => {
  before(async () => {
    const date = (iso: string) => ({ __type: 'Date', iso });
    await seed('SqBag', [
      { name: 'b1', items: [pointer('SqPost', 'p1'), pointer('SqPost', 'p2')], days: [date('2024-01-01T00:00:00.000Z')], meta: { a: { b: 1 } } },
      { name: 'b2', items: [pointer('SqPost', 'p2')], days: [], shapes: [{ w: 1, h: 2 }, { w: 3 }], meta: { a: 1 } },
      { name: 'b3', items: [pointer('SqPost', 'p1'), pointer('SqPost', 'p2'), pointer('SqPost', 'p3')], meta: { a: { b: null } } },
      { name: 'b4', items: [ids.p1, ids.p2] },
    ]);
  });

  test('$all of pointers: every pointer is an element', async () => {
    assert.deepEqual(await names('SqBag', { items: { $all: [pointer('SqPost', 'p2'), pointer('SqPost', 'p1')] } }), ['b1', 'b3']);
    assert.deepEqual(await names('SqBag', { items: { $all: [pointer('SqPost', 'p3')] } }), ['b3']);
    assert.deepEqual(await names('SqBag', { items: { $all: [pointer('SqPost', 'p1'), pointer('SqPost', 'p4')] } }), []);
    // Ids as strings are strings, not pointers.
    assert.deepEqual(await names('SqBag', { items: { $all: [ids.p1] } }), ['b4']);
  });

  test('$all of dates and of objects', async () => {
    assert.deepEqual(await names('SqBag', { days: { $all: [{ __type: 'Date', iso: '2024-01-01T00:00:00Z' }] } }), ['b1']);
    assert.deepEqual(await names('SqBag', { shapes: { $all: [{ w: 3 }, { w: 1, h: 2 }] } }), ['b2']);
  });

  test('$size and $exists on a nested key', async () => {
    assert.deepEqual(await names('SqBag', { items: { $size: 2 } }), ['b1', 'b4']);
    assert.deepEqual(await names('SqBag', { days: { $size: 0 } }), ['b2']);
    assert.deepEqual(await names('SqBag', { 'meta.a.b': { $exists: true } }), ['b1', 'b3']);
    assert.deepEqual(await names('SqBag', { 'meta.a.b': { $exists: false } }), ['b2', 'b4']);
    assert.deepEqual(await names('SqBag', { 'meta.a': { $exists: true }, items: { $size: 3 } }), ['b3']);
  });
});
