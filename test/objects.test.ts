import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('create and read', () => {
  test('create answers 201 with Location, objectId and createdAt only', async () => {
    const res = await server.client.post('/1.1/classes/Post', { title: 'hello', tags: ['a'], meta: { n: 1 } });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), ['createdAt', 'objectId']);
    assert.match(res.body.objectId, /^[0-9a-z]{24}$/);
    assert.match(res.body.createdAt, isoPattern);
    assert.equal(res.headers.get('location'), `/1.1/classes/Post/${res.body.objectId}`);
  });

  test('get returns the stored fields with ISO timestamps', async () => {
    const created = await server.client.post('/1.1/classes/Post', { title: 'x', n: 2.5, ok: true, nothing: null });
    const res = await server.client.get(`/1.1/classes/Post/${created.body.objectId}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      title: 'x',
      n: 2.5,
      ok: true,
      nothing: null,
      objectId: created.body.objectId,
      createdAt: created.body.createdAt,
      updatedAt: created.body.createdAt,
    });
  });

  test('?new=true and ?fetchWhenSave=true return the saved object', async () => {
    for (const flag of ['new', 'fetchWhenSave']) {
      const res = await server.client.post(`/1.1/classes/Post?${flag}=true`, { title: flag, count: { __op: 'Increment', amount: 3 } });
      assert.equal(res.status, 201);
      assert.equal(res.body.title, flag);
      assert.equal(res.body.count, 3);
      assert.equal(res.body.updatedAt, res.body.createdAt);
    }
  });

  test('typed values are stored and returned', async () => {
    const body = {
      when: { __type: 'Date', iso: '2024-05-06T07:08:09.010Z' },
      owner: { __type: 'Pointer', className: '_User', objectId: 'abc' },
      where: { __type: 'GeoPoint', latitude: 30.5, longitude: 120.25 },
      blob: { __type: 'Bytes', base64: 'aGVsbG8=' },
    };
    const created = await server.client.post('/1.1/classes/Typed', body);
    assert.equal(created.status, 201);
    const res = await server.client.get(`/1.1/classes/Typed/${created.body.objectId}`);
    for (const [key, value] of Object.entries(body)) assert.deepEqual(res.body[key], value);
  });

  test('bad typed values are refused with their codes', async () => {
    const cases: Array<[unknown, number]> = [
      [{ __type: 'Date', iso: 'yesterday' }, 111],
      [{ __type: 'Pointer', className: 'Post' }, 106],
      [{ __type: 'GeoPoint', latitude: 91, longitude: 0 }, 302],
      [{ __type: 'Bytes', base64: '***' }, 111],
      [{ __type: 'Mystery' }, 111],
      [{ 'a.b': 1 }, 121],
      [{ $where: 1 }, 121],
    ];
    for (const [value, code] of cases) {
      const res = await server.client.post('/1.1/classes/Typed', { value });
      assert.equal(res.status, 400, JSON.stringify(value));
      assert.equal(res.body.code, code, JSON.stringify(value));
      assert.equal(typeof res.body.error, 'string');
    }
  });

  test('server-owned fields in a body are ignored', async () => {
    const res = await server.client.post('/1.1/classes/Post?new=true', {
      objectId: 'mine',
      createdAt: '2000-01-01T00:00:00.000Z',
      title: 't',
    });
    assert.equal(res.status, 201);
    assert.notEqual(res.body.objectId, 'mine');
    assert.notEqual(res.body.createdAt, '2000-01-01T00:00:00.000Z');
  });

  test('a missing object in an existing class answers 200 {}; a missing class 404 code 101', async () => {
    await server.client.post('/1.1/classes/Exists', { a: 1 });
    const missingObject = await server.client.get('/1.1/classes/Exists/nope');
    assert.equal(missingObject.status, 200);
    assert.deepEqual(missingObject.body, {});
    const missingClass = await server.client.get('/1.1/classes/NeverSeen/nope');
    assert.equal(missingClass.status, 404);
    assert.equal(missingClass.body.code, 101);
  });

  // A plain read sends the stored JSON text spliced with the server's fields (src/objects/wire.ts, wireJson);
  // `keys` takes the path that parses and serialises. Both must send the same bytes.
  test('a read sends exactly the bytes of the full path, whatever the fields hold', async () => {
    const bodies: Array<Record<string, unknown>> = [
      {},
      { title: 'plain', n: -0.1, big: 1e21, small: 5e-7, yes: true, none: null, list: [1, 'two', [3], { four: 4 }] },
      { b: 1, a: { 10: 'ten', 9: 'nine', z: {} }, _c: [{ 2: 'two', 1: 'one' }] },
      { text: 'é 中文 😀 "quoted" back\\slash\nnewline\ttab \u2028 \u001f </script>' },
      { owner: { __type: 'Pointer', className: '_User', objectId: 'u1' }, when: { __type: 'Date', iso: '2024-01-02T03:04:05.006Z' } },
    ];
    const ids: string[] = [];
    for (const body of bodies) {
      const created = await server.client.post('/1.1/classes/Bytes', body);
      assert.equal(created.status, 201, created.text);
      ids.push(created.body.objectId);
    }
    // Server-owned keys among the stored fields: dotted writes into them are refused now (test/hostile-input.test.ts),
    // but data written by an earlier Roost may hold them, and the server's values must win there.
    const now = Date.now();
    const stale = { className: 'Bytes', objectId: 'stale0server0keys0000000', createdAt: now, updatedAt: now, acl: null };
    await server.store.insertObject(server.appId, { ...stale, data: { objectId: { x: 1 }, createdAt: { y: [2] } } });
    ids.push(stale.objectId);
    for (const [i, id] of ids.entries()) {
      const body = bodies[i] ?? {};
      const path = `/1.1/classes/Bytes/${id}`;
      const plain = await server.client.get(path);
      const parsed = await server.client.get(path, { query: { keys: '-notAField' } });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers.get('content-type'), 'application/json; charset=utf-8');
      assert.equal(plain.text, parsed.text, JSON.stringify(body));
      assert.equal(plain.body.objectId, id);
      assert.equal(plain.text.split('"objectId":').length - 1, 'owner' in body ? 2 : 1, plain.text);
    }
  });

  test('invalid class and key names: 103 and 105', async () => {
    const badClass = await server.client.post('/1.1/classes/9lives', { a: 1 });
    assert.deepEqual([badClass.status, badClass.body.code], [400, 103]);
    const reserved = await server.client.post('/1.1/classes/_Secret', { a: 1 });
    assert.deepEqual([reserved.status, reserved.body.code], [400, 103]);
    const badKey = await server.client.post('/1.1/classes/Post', { 'bad-key': 1 });
    assert.deepEqual([badKey.status, badKey.body.code], [400, 105]);
  });
});

describe('timestamps', () => {
  // isoDate formats timestamps itself (src/lib/clock.ts): the edges of days, years and its range, and the fallback before 1970.
  test('createdAt and updatedAt read exactly as toISOString writes them', async () => {
    const clock = new ManualClock(0);
    const timed = await startServer({ clock });
    // The key, not a signature: a signature's timestamp would be far from this server's clock.
    const byKey = { headers: { 'X-LC-Sign': '', 'X-LC-Key': timed.appKey } };
    try {
      const instants = ['1969-07-20T20:17:40.000Z', '1970-01-01T00:00:00.000Z', '2000-02-29T23:59:59.999Z', '2024-12-31T23:59:09.059Z', '9999-12-31T23:59:59.999Z'];
      for (const iso of instants) {
        clock.set(Date.parse(iso));
        const created = await timed.client.post('/1.1/classes/Stamp', { iso }, byKey);
        assert.equal(created.body.createdAt, iso);
        const read = await timed.client.get(`/1.1/classes/Stamp/${created.body.objectId}`, byKey);
        assert.deepEqual(read.body, { iso, objectId: created.body.objectId, createdAt: iso, updatedAt: iso });
      }
      clock.set(Date.parse('2024-03-01T08:05:00.000Z'));
      const created = await timed.client.post('/1.1/classes/Stamp', { n: 1 }, byKey);
      clock.set(Date.parse('2024-03-02T17:45:30.120Z'));
      const updated = await timed.client.put(`/1.1/classes/Stamp/${created.body.objectId}`, { n: 2 }, byKey);
      assert.equal(updated.body.updatedAt, '2024-03-02T17:45:30.120Z');
      const read = await timed.client.get(`/1.1/classes/Stamp/${created.body.objectId}`, byKey);
      assert.deepEqual(read.body, { n: 2, objectId: created.body.objectId, createdAt: '2024-03-01T08:05:00.000Z', updatedAt: '2024-03-02T17:45:30.120Z' });
    } finally {
      await timed.close();
    }
  });
});

describe('update', () => {
  test('update answers {updatedAt, objectId} and leaves other fields alone', async () => {
    const created = await server.client.post('/1.1/classes/Post', { title: 'a', keep: 1 });
    const id = created.body.objectId;
    const res = await server.client.put(`/1.1/classes/Post/${id}`, { title: 'b' });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['objectId', 'updatedAt']);
    assert.equal(res.body.objectId, id);
    const got = await server.client.get(`/1.1/classes/Post/${id}`);
    assert.equal(got.body.title, 'b');
    assert.equal(got.body.keep, 1);
    assert.equal(got.body.updatedAt, res.body.updatedAt);
  });

  test('every __op, including dotted keys', async () => {
    const created = await server.client.post('/1.1/classes/Ops', {
      n: 10,
      bits: 6,
      list: ['a', 'b', 'a'],
      nested: { count: 1, drop: true },
      gone: 'x',
    });
    const id = created.body.objectId;
    const res = await server.client.put(`/1.1/classes/Ops/${id}?new=true`, {
      n: { __op: 'Increment', amount: 5 },
      down: { __op: 'Decrement', amount: 2 },
      list: { __op: 'Remove', objects: ['a'] },
      added: { __op: 'Add', objects: [1, 2] },
      unique: { __op: 'AddUnique', objects: ['x', 'x', 'y'] },
      gone: { __op: 'Delete' },
      'nested.count': { __op: 'Increment', amount: 1 },
      'nested.drop': { __op: 'Delete' },
      'nested.deep.value': 'set',
      bits: { __op: 'BitAnd', value: 3 },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.n, 15);
    assert.equal(res.body.down, -2);
    assert.deepEqual(res.body.list, ['b']);
    assert.deepEqual(res.body.added, [1, 2]);
    assert.deepEqual(res.body.unique, ['x', 'y']);
    assert.equal('gone' in res.body, false);
    assert.deepEqual(res.body.nested, { count: 2, deep: { value: 'set' } });
    assert.equal(res.body.bits, 2);
  });

  test('increments are atomic under concurrency', async () => {
    const created = await server.client.post('/1.1/classes/Counter', { n: 0 });
    const id = created.body.objectId;
    await Promise.all(
      Array.from({ length: 40 }, () => server.client.put(`/1.1/classes/Counter/${id}`, { n: { __op: 'Increment' } })),
    );
    const got = await server.client.get(`/1.1/classes/Counter/${id}`);
    assert.equal(got.body.n, 40);
  });

  test('an operation on the wrong type is 111 and writes nothing', async () => {
    const created = await server.client.post('/1.1/classes/Ops', { s: 'text', n: 1 });
    const res = await server.client.put(`/1.1/classes/Ops/${created.body.objectId}`, {
      n: 2,
      s: { __op: 'Increment' },
    });
    assert.deepEqual([res.status, res.body.code], [400, 111]);
    const got = await server.client.get(`/1.1/classes/Ops/${created.body.objectId}`);
    assert.equal(got.body.n, 1);
  });

  test('where on update is a condition: no match is 400 code 305', async () => {
    const created = await server.client.post('/1.1/classes/Stock', { qty: 1 });
    const id = created.body.objectId;
    const ok = await server.client.put(`/1.1/classes/Stock/${id}`, { qty: { __op: 'Decrement' } }, {
      query: { where: { qty: { $gt: 0 } } },
    });
    assert.equal(ok.status, 200);
    const refused = await server.client.put(`/1.1/classes/Stock/${id}`, { qty: { __op: 'Decrement' } }, {
      query: { where: { qty: { $gt: 0 } } },
    });
    assert.deepEqual(refused.body, { code: 305, error: 'No effect on updating/deleting a document.' });
    assert.equal(refused.status, 400);
    const deleteRefused = await server.client.delete(`/1.1/classes/Stock/${id}`, { query: { where: { qty: 5 } } });
    assert.deepEqual([deleteRefused.status, deleteRefused.body.code], [400, 305]);
  });

  test('updating a missing object is 400 code 1', async () => {
    const res = await server.client.put('/1.1/classes/Post/nope', { a: 1 });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { code: 1, error: "Could not find object by id 'nope' for class 'Post'." });
  });
});

describe('delete and batch', () => {
  test('delete answers {} and the object is gone; DELETE carries a JSON body as the SDKs send', async () => {
    const created = await server.client.post('/1.1/classes/Post', { a: 1 });
    const res = await server.client.delete(`/1.1/classes/Post/${created.body.objectId}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {});
    const got = await server.client.get(`/1.1/classes/Post/${created.body.objectId}`);
    assert.deepEqual(got.body, {});
  });

  test('comma-joined ids delete several objects', async () => {
    const a = await server.client.post('/1.1/classes/Multi', { i: 1 });
    const b = await server.client.post('/1.1/classes/Multi', { i: 2 });
    const res = await server.client.delete(`/1.1/classes/Multi/${a.body.objectId},${b.body.objectId}`);
    assert.equal(res.status, 200);
    const left = await server.client.get('/1.1/classes/Multi', { query: { count: 1, limit: 0 } });
    assert.deepEqual(left.body, { results: [], count: 0 });
  });

  test('batch runs each request and reports success or error per item', async () => {
    const existing = await server.client.post('/1.1/classes/Batch', { v: 1 });
    const res = await server.client.post('/1.1/batch', {
      requests: [
        { method: 'POST', path: '/1.1/classes/Batch', body: { v: 2 } },
        { method: 'PUT', path: `/1.1/classes/Batch/${existing.body.objectId}`, body: { v: 3 }, params: { fetchWhenSave: true } },
        { method: 'GET', path: '/1.1/classes/Batch/missing' },
        { method: 'PUT', path: '/1.1/classes/Batch/missing', body: { v: 1 } },
        { method: 'DELETE', path: `/1.1/classes/Batch/${existing.body.objectId}` },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.length, 5);
    assert.match(res.body[0].success.objectId, /^[0-9a-z]{24}$/);
    assert.equal(res.body[1].success.v, 3);
    assert.deepEqual(res.body[2], { success: null });
    assert.deepEqual(res.body[3], { error: { code: 1, error: "Could not find object by id 'missing' for class 'Batch'." } });
    assert.deepEqual(res.body[4], { success: {} });
  });

  test('a malformed batch is 400 code 107', async () => {
    for (const body of [{}, { requests: 'x' }, { requests: [{ method: 'PATCH', path: '/1.1/classes/A' }] }, { requests: [{ method: 'GET', path: '/1.1/batch' }] }]) {
      const res = await server.client.post('/1.1/batch', body);
      assert.deepEqual([res.status, res.body.code], [400, 107], JSON.stringify(body));
    }
  });
});
