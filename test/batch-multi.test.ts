// Batch and multi-object writes as the SDKs send them (issue #15 point 5; reference §11).
// Before: DELETE /1.1/classes/<C>/<id>,<id>,… with five or more ids answered 400 "A path segment is too
// long." (the router's 100-character limit), which broke the JS SDK's destroyAll; /1.1/batch/save was 404.
import { test, after, before, describe } from 'node:test';
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

async function createMany(className: string, count: number, extra: Record<string, unknown> = {}): Promise<string[]> {
  const res = await server.client.post('/1.1/batch', {
    requests: Array.from({ length: count }, (_, i) => ({ method: 'POST', path: `/1.1/classes/${className}`, body: { i, ...extra } })),
  });
  assert.equal(res.status, 200, res.text);
  return res.body.map((item: { success: { objectId: string } }) => item.success.objectId);
}

async function countOf(className: string): Promise<number> {
  const res = await server.master.get(`/1.1/classes/${className}`, { query: { count: 1, limit: 0 } });
  return res.body.count;
}

/** Ids that look like the service's (24 lowercase hex) and name no object. */
function absentIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `e${i.toString(16).padStart(23, '0')}`);
}

const tooManyIds = { code: 1, error: 'One DELETE may name at most 1000 objects: delete more in several requests.' };

describe('comma-joined ids', () => {
  test('DELETE of 60 comma-joined ids deletes them all and answers {}', async () => {
    const ids = await createMany('Multi60', 60);
    const res = await server.client.delete(`/1.1/classes/Multi60/${ids.join(',')}`);
    assert.deepEqual([res.status, res.body], [200, {}]);
    assert.equal(await countOf('Multi60'), 0);
  });

  test('inside /1.1/batch, as AV.Object.destroyAll sends it: one item per class, {} body', async () => {
    const a = await createMany('MultiA', 60);
    const b = await createMany('MultiB', 3);
    const res = await server.client.post('/1.1/batch', {
      requests: [
        { method: 'DELETE', path: `/1.1/classes/MultiA/${a.join(',')}`, body: {} },
        { method: 'DELETE', path: `/1.1/classes/MultiB/${b.join(',')}`, body: {} },
      ],
    });
    assert.deepEqual([res.status, res.body], [200, [{ success: {} }, { success: {} }]]);
    assert.equal(await countOf('MultiA'), 0);
    assert.equal(await countOf('MultiB'), 0);
  });

  test('1000 ids (a query page, as query.limit(1000).destroyAll() sends) are accepted; 1001 are refused', async () => {
    const ids = await createMany('Multi1000', 5);
    const path = `/1.1/classes/Multi1000/${[...absentIds(995), ...ids].join(',')}`;
    const res = await server.client.delete(path);
    assert.deepEqual([res.status, res.body], [200, {}]);
    assert.equal(await countOf('Multi1000'), 0);

    const over = `/1.1/classes/Multi1000/${absentIds(1001).join(',')}`;
    const refused = await server.client.delete(over);
    assert.deepEqual([refused.status, refused.body], [400, tooManyIds]);
    const inBatch = await server.client.post('/1.1/batch', { requests: [{ method: 'DELETE', path: over, body: {} }] });
    assert.deepEqual([inBatch.status, inBatch.body], [200, [{ error: tooManyIds }]]);
  });

  test('a repeated id counts once; empty entries are skipped', async () => {
    const [id] = await createMany('MultiRepeat', 1);
    const res = await server.client.delete(`/1.1/classes/MultiRepeat/${Array(1001).fill(id).join(',')},,`);
    assert.deepEqual([res.status, res.body], [200, {}]);
    assert.equal(await countOf('MultiRepeat'), 0);
  });

  test('a path segment longer than a request line is refused inside a batch (code 1), not a 500', async () => {
    const res = await server.client.post('/1.1/batch', {
      requests: [{ method: 'DELETE', path: `/1.1/classes/MultiLong/${'a'.repeat(70_000)}`, body: {} }],
    });
    assert.deepEqual([res.status, res.body], [200, [{ error: { code: 1, error: 'A path segment is too long.' } }]]);
  });

  test('each object under its own ACL: the permitted ones are deleted, the refusal is answered 403', async () => {
    const owner = await signUp(server.client);
    const [open1, open2] = await createMany('MultiAcl', 2);
    const locked = await owner.client.post('/1.1/classes/MultiAcl', {
      secret: true,
      ACL: { [owner.objectId]: { read: true, write: true } },
    });
    const ids = [open1, locked.body.objectId, open2];
    const res = await server.client.delete(`/1.1/classes/MultiAcl/${ids.join(',')}`);
    assert.deepEqual([res.status, res.body], [403, { code: 403, error: "Forbidden writing by object's ACL." }]);
    const left = await server.master.get('/1.1/classes/MultiAcl');
    assert.deepEqual(left.body.results.map((o: { objectId: string }) => o.objectId), [locked.body.objectId]);

    const inBatch = await server.client.post('/1.1/batch', {
      requests: [{ method: 'DELETE', path: `/1.1/classes/MultiAcl/${locked.body.objectId}`, body: {} }],
    });
    assert.deepEqual(inBatch.body, [{ error: { code: 403, error: "Forbidden writing by object's ACL." } }]);
    const byOwner = await owner.client.delete(`/1.1/classes/MultiAcl/${locked.body.objectId}`);
    assert.deepEqual([byOwner.status, byOwner.body], [200, {}]);
    assert.equal(await countOf('MultiAcl'), 0);
  });
});

describe('per-item results for missing objects (reference §11)', () => {
  test('GET of a missing id is {"success":null}, PUT is code 1, DELETE {}; a missing class 101', async () => {
    const [id] = await createMany('MissingItems', 1);
    const res = await server.client.post('/1.1/batch', {
      requests: [
        { method: 'GET', path: `/1.1/classes/MissingItems/${id}` },
        { method: 'GET', path: '/1.1/classes/MissingItems/fakeid' },
        { method: 'PUT', path: '/1.1/classes/MissingItems/fakeid', body: { v: 1 } },
        { method: 'DELETE', path: '/1.1/classes/MissingItems/fakeid', body: {} },
        { method: 'GET', path: '/1.1/classes/NoSuchClassEver/fakeid' },
        { method: 'PUT', path: `/1.1/classes/MissingItems/${id}`, body: { v: 2 } },
      ],
    });
    assert.equal(res.status, 200);
    assert.equal(res.body[0].success.objectId, id);
    assert.deepEqual(res.body.slice(1, 5), [
      { success: null },
      { error: { code: 1, error: "Could not find object by id 'fakeid' for class 'MissingItems'." } },
      { success: {} },
      { error: { code: 101, error: "Class or object doesn't exists." } },
    ]);
    assert.deepEqual(Object.keys(res.body[5].success).sort(), ['objectId', 'updatedAt']);
  });
});

describe('POST /1.1/batch/save (Java SDK, Objective-C SDK)', () => {
  test('Java: several operations on one field of an existing object, answered keyed by its objectId', async () => {
    const created = await server.client.post('/1.1/classes/SaveJava', { tags: ['a', 'b'], n: 1 });
    const id = created.body.objectId;
    const path = `/1.1/classes/SaveJava/${id}`;
    const res = await server.client.post('/1.1/batch/save', {
      requests: [
        { method: 'PUT', path, body: { tags: { __op: 'Add', objects: ['c'] }, n: { __op: 'Increment', amount: 2 }, __internalId: id } },
        { method: 'PUT', path, body: { tags: { __op: 'Remove', objects: ['a'] }, __internalId: id } },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), [id]);
    assert.deepEqual(Object.keys(res.body[id]).sort(), ['objectId', 'updatedAt']);
    assert.equal(res.body[id].objectId, id);
    const got = await server.client.get(path);
    assert.deepEqual([got.body.tags, got.body.n, got.body.__internalId], [['b', 'c'], 3, undefined]);
    assert.equal(got.body.updatedAt, res.body[id].updatedAt);
  });

  test('Objective-C: a new object and its new child, linked by __internalId and __children', async () => {
    const res = await server.client.post('/1.1/batch/save', {
      requests: [
        { method: 'POST', path: '/1.1/classes/SaveChild', body: { name: 'c', __internalId: 'uuid-child' } },
        { method: 'POST', path: '/1.1/classes/SaveParent', body: { title: 'p', __internalId: 'uuid-parent' }, new: true },
        {
          method: 'PUT',
          path: '/1.1/classes/SaveParent',
          body: { __internalId: 'uuid-parent', __children: [{ className: 'SaveChild', cid: 'uuid-child', key: 'child' }] },
          params: { fetchWhenSave: true },
        },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['uuid-child', 'uuid-parent']);
    assert.deepEqual(Object.keys(res.body['uuid-child']).sort(), ['createdAt', 'objectId']);
    const parent = res.body['uuid-parent'];
    assert.ok(parent.createdAt && parent.updatedAt, res.text);
    const childId = res.body['uuid-child'].objectId;
    assert.deepEqual(parent.child, { __type: 'Pointer', className: 'SaveChild', objectId: childId });
    const got = await server.client.get(`/1.1/classes/SaveParent/${parent.objectId}`);
    assert.deepEqual([got.body.title, got.body.child, got.body.__children], ['p', parent.child, undefined]);
    assert.equal(await countOf('SaveParent'), 1);
    // A child already saved is named by its objectId.
    const again = await server.client.post('/1.1/batch/save', {
      requests: [
        {
          method: 'PUT',
          path: `/1.1/classes/SaveParent/${parent.objectId}`,
          body: { __internalId: parent.objectId, __children: [{ className: 'SaveChild', cid: childId, key: 'other' }] },
        },
      ],
    });
    assert.deepEqual(Object.keys(again.body[parent.objectId]).sort(), ['objectId', 'updatedAt']);
    const reread = await server.client.get(`/1.1/classes/SaveParent/${parent.objectId}`);
    assert.deepEqual(reread.body.other, parent.child);
  });

  test('the first failure answers the whole request with its status and error; what ran before stays', async () => {
    const res = await server.client.post('/1.1/batch/save', {
      requests: [
        { method: 'POST', path: '/1.1/classes/SaveFail', body: { v: 1, __internalId: 'first' } },
        { method: 'PUT', path: '/1.1/classes/SaveFail/fakeid', body: { v: 2, __internalId: 'fakeid' } },
        { method: 'POST', path: '/1.1/classes/SaveFail', body: { v: 3, __internalId: 'third' } },
      ],
    });
    assert.deepEqual([res.status, res.body], [400, { code: 1, error: "Could not find object by id 'fakeid' for class 'SaveFail'." }]);
    const left = await server.master.get('/1.1/classes/SaveFail');
    assert.deepEqual(left.body.results.map((o: { v: number }) => o.v), [1]);
  });

  test('ACLs hold per object: a PUT the caller may not write is 403', async () => {
    const owner = await signUp(server.client);
    const locked = await owner.client.post('/1.1/classes/SaveAcl', { v: 1, ACL: { [owner.objectId]: { read: true, write: true } } });
    const id = locked.body.objectId;
    const body = { requests: [{ method: 'PUT', path: `/1.1/classes/SaveAcl/${id}`, body: { v: 2, __internalId: id } }] };
    const refused = await server.client.post('/1.1/batch/save', body);
    assert.deepEqual([refused.status, refused.body], [403, { code: 403, error: "Forbidden writing by object's ACL." }]);
    const allowed = await owner.client.post('/1.1/batch/save', body);
    assert.deepEqual([allowed.status, Object.keys(allowed.body)], [200, [id]]);
  });

  test("client-chosen names stay data: an __internalId or a child key '__proto__'", async () => {
    const res = await server.client.post('/1.1/batch/save', {
      requests: [{ method: 'POST', path: '/1.1/classes/SaveProto', body: { v: 1, __internalId: '__proto__' } }],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), ['__proto__']);
    assert.match(res.body.__proto__.objectId, /^[0-9a-f]{24}$/);
    const child = await server.client.post('/1.1/batch/save', {
      requests: [{ method: 'POST', path: '/1.1/classes/SaveProto', body: { __children: [{ className: 'SaveProto', cid: 'x', key: '__proto__' }] } }],
    });
    assert.deepEqual([child.status, child.body.code], [400, 107]); // as any body with a '__proto__' key
    assert.equal(await countOf('SaveProto'), 1);
  });

  test('a malformed body is 400 code 107', async () => {
    const bodies = [
      {},
      { requests: [{ method: 'PUT', path: '/1.1/other/x', body: {} }] },
      { requests: [{ method: 'POST', path: '/1.1/classes/SaveBad', body: { __children: [{ cid: 'x' }] } }] },
      { requests: [{ method: 'POST', path: '/1.1/classes/SaveBad', body: { __children: 'x' } }] },
    ];
    for (const body of bodies) {
      const res = await server.client.post('/1.1/batch/save', body);
      assert.deepEqual([res.status, res.body.code], [400, 107], JSON.stringify(body));
    }
    assert.equal(await countOf('SaveBad'), 0);
    // A route of a feature Roost lacks is named, as outside a batch.
    const functions = await server.client.post('/1.1/batch/save', { requests: [{ method: 'PUT', path: '/1.1/functions/x', body: {} }] });
    assert.deepEqual([functions.status, functions.body], [404, { code: 404, error: 'Not supported yet: cloud functions (PUT /1.1/functions/…).' }]);
  });
});
