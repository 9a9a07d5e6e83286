// Class schemas (issue #16 point 6): each class keeps its fields' types as first written; a write of
// another type is refused with the hosted 111; null and Delete go to any type; GET /1.1/schemas shows
// the classes (master key only); defaults set with PUT /1.1/schemas/<className> fill creates.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from './helpers/harness.ts';
import { Importer } from '../src/import/importer.ts';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

const serverFields = { objectId: { type: 'String' }, ACL: { type: 'ACL' }, createdAt: { type: 'Date' }, updatedAt: { type: 'Date' } };

function mismatch(field: string, kept: string, written: string) {
  return { code: 111, error: `Invalid value type for field '${field}',expect type is ${kept},but it is '${written}'.` };
}

test('a class learns each field’s type from its first write, and GET /1.1/schemas/<className> shows them', async () => {
  const created = await server.client.post('/1.1/classes/Learn', {
    title: 'a',
    score: 1,
    done: true,
    tags: ['x'],
    meta: { a: 1 },
    when: { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' },
    at: { __type: 'GeoPoint', latitude: 1, longitude: 2 },
    author: { __type: 'Pointer', className: '_User', objectId: 'u1' },
    image: { __type: 'File', id: 'f1', name: 'a.png', url: 'https://files.example/a.png' },
    raw: { __type: 'Bytes', base64: 'AA==' },
    nothing: null,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await server.client.put(`/1.1/classes/Learn/${created.body.objectId}`, { count: { __op: 'Increment', amount: 1 }, list: { __op: 'AddUnique', objects: [1] }, 'deep.x': 1 });
  const schema = await server.master.get('/1.1/schemas/Learn');
  assert.equal(schema.status, 200);
  assert.deepEqual(schema.body, {
    ...serverFields,
    at: { type: 'GeoPoint' },
    author: { type: 'Pointer', className: '_User' },
    count: { type: 'Number' },
    deep: { type: 'Object' },
    done: { type: 'Boolean' },
    image: { type: 'File' },
    list: { type: 'Array' },
    meta: { type: 'Object' },
    nothing: { type: 'Object' },
    raw: { type: 'Bytes' },
    score: { type: 'Number' },
    tags: { type: 'Array' },
    title: { type: 'String' },
    when: { type: 'Date' },
  });
  assert.deepEqual(Object.keys(schema.body).slice(0, 4), ['objectId', 'ACL', 'createdAt', 'updatedAt']);
});

test('a write of another type gets 400 code 111 with the hosted text; nothing of it is stored', async () => {
  const created = await server.client.post('/1.1/classes/Mismatch', { flag: true, n: 1, p: { __type: 'Pointer', className: 'Post', objectId: 'p1' } });
  const id = created.body.objectId;
  const cases: Array<[unknown, object]> = [
    [{ flag: 'string' }, mismatch('flag', '{:type "Boolean"}', '{:type "String"}')],
    [{ n: { __op: 'Add', objects: [1] } }, mismatch('n', '{:type "Number"}', '{:type "Array"}')],
    [{ flag: { __op: 'Increment' } }, mismatch('flag', '{:type "Boolean"}', '{:type "Number"}')],
    [{ p: { __type: 'Pointer', className: 'Comment', objectId: 'c1' } }, mismatch('p', '{:type "Pointer", :className "Post"}', '{:type "Pointer", :className "Comment"}')],
    [{ 'flag.x': 1 }, mismatch('flag', '{:type "Boolean"}', '{:type "Object"}')],
  ];
  for (const [body, error] of cases) {
    const res = await server.client.put(`/1.1/classes/Mismatch/${id}`, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.deepEqual(res.body, error);
  }
  const createdWrong = await server.client.post('/1.1/classes/Mismatch', { ok: 1, n: 'one' });
  assert.deepEqual([createdWrong.status, createdWrong.body], [400, mismatch('n', '{:type "Number"}', '{:type "String"}')]);
  assert.deepEqual((await server.client.get(`/1.1/classes/Mismatch/${id}`)).body.flag, true);
  assert.equal((await server.client.get('/1.1/classes/Mismatch', { query: { count: 1, limit: 0 } })).body.count, 1);
});

test('null and Delete are allowed on a field of any type', async () => {
  const created = await server.client.post('/1.1/classes/Nulls', { name: 'x', n: 2 });
  const id = created.body.objectId;
  assert.equal((await server.client.put(`/1.1/classes/Nulls/${id}`, { name: null, n: { __op: 'Delete' } })).status, 200);
  assert.equal((await server.client.post('/1.1/classes/Nulls', { name: null, n: null })).status, 201);
  assert.deepEqual((await server.client.put(`/1.1/classes/Nulls/${id}`, { name: 'back', n: 3 })).status, 200);
  const schema = await server.master.get('/1.1/schemas/Nulls');
  assert.deepEqual(schema.body, { ...serverFields, n: { type: 'Number' }, name: { type: 'String' } });
});

test('a field first written as null is an Object, as the hosted service locked it', async () => {
  await server.client.post('/1.1/classes/FirstNull', { nick: null });
  const res = await server.client.post('/1.1/classes/FirstNull', { nick: 'bob' });
  assert.deepEqual([res.status, res.body], [400, mismatch('nick', '{:type "Object"}', '{:type "String"}')]);
  assert.equal((await server.client.post('/1.1/classes/FirstNull', { nick: { first: 'bob' } })).status, 201);
});

test('inside /1.1/batch a mismatched write fails alone with 111', async () => {
  await server.client.post('/1.1/classes/BatchTyped', { level: 1 });
  const res = await server.client.post('/1.1/batch', {
    requests: [
      { method: 'POST', path: '/1.1/classes/BatchTyped', body: { level: 2 } },
      { method: 'POST', path: '/1.1/classes/BatchTyped', body: { level: 'high' } },
      { method: 'POST', path: '/1.1/classes/BatchTyped', body: { fresh: 'a' } },
      { method: 'POST', path: '/1.1/classes/BatchTyped', body: { fresh: 1 } },
    ],
  });
  assert.equal(res.status, 200);
  assert.equal(res.body.length, 4);
  assert.ok(res.body[0].success);
  assert.deepEqual(res.body[1], { error: mismatch('level', '{:type "Number"}', '{:type "String"}') });
  assert.ok(res.body[2].success);
  assert.deepEqual(res.body[3], { error: mismatch('fresh', '{:type "String"}', '{:type "Number"}') });
});

test('first writes of different types at once: one type is kept, every other write gets 111', async () => {
  const values = ['text', 1, true, ['a'], { __type: 'Date', iso: '2020-01-01T00:00:00.000Z' }, { a: 1 }];
  const answers = await Promise.all(values.flatMap((value) => [value, value]).map((value) => server.client.post('/1.1/classes/Racing', { f: value })));
  const kept = (await server.master.get('/1.1/schemas/Racing')).body.f.type;
  const names: Record<string, unknown> = { String: 'text', Number: 1, Boolean: true, Array: ['a'], Date: values[4], Object: { a: 1 } };
  answers.forEach((res, i) => {
    const value = values[Math.floor(i / 2)];
    if (JSON.stringify(value) === JSON.stringify(names[kept])) assert.equal(res.status, 201);
    else assert.equal(res.status, 400), assert.equal(res.body.code, 111);
  });
  assert.equal(answers.filter((res) => res.status === 201).length, 2);
});

test('GET /1.1/schemas lists every class with fields and the built-in classes; both need the master key', async () => {
  const all = await server.master.get('/1.1/schemas');
  assert.equal(all.status, 200);
  assert.deepEqual(all.body.Learn, (await server.master.get('/1.1/schemas/Learn')).body);
  assert.deepEqual(all.body._User, {
    ...serverFields,
    username: { type: 'String' },
    password: { type: 'String' },
    email: { type: 'String' },
    emailVerified: { type: 'Boolean' },
    mobilePhoneNumber: { type: 'String' },
    mobilePhoneVerified: { type: 'Boolean' },
    authData: { type: 'Object' },
  });
  assert.deepEqual(all.body._Role, { ...serverFields, name: { type: 'String' }, users: { type: 'Relation', className: '_User' }, roles: { type: 'Relation', className: '_Role' } });
  assert.deepEqual(Object.keys(all.body), [...Object.keys(all.body)].sort());
  for (const path of ['/1.1/schemas', '/1.1/schemas/Learn']) {
    const res = await server.client.get(path);
    assert.deepEqual([res.status, res.body], [403, { code: 403, error: 'Forbidden: this operation needs the master key.' }]);
  }
  const res = await server.client.put('/1.1/schemas/Learn', { title: { default: 'x' } });
  assert.deepEqual(res.status, 403);
});

test('GET /1.1/schemas/<className>: 404 code 101 for a class never written; the server fields for one with objects only', async () => {
  const missing = await server.master.get('/1.1/schemas/NeverWritten');
  assert.deepEqual([missing.status, missing.body], [404, { code: 101, error: "Class or object doesn't exists." }]);
  await server.client.post('/1.1/classes/EmptyOnes', {});
  assert.deepEqual((await server.master.get('/1.1/schemas/EmptyOnes')).body, serverFields);
  const bad = await server.master.get('/1.1/schemas/9bad');
  assert.equal(bad.body.code, 103);
});

test('defaults: set with the master key, applied to creates that leave the field out, shown in GET /1.1/schemas', async () => {
  await server.client.post('/1.1/classes/Defaults', { title: 'first' });
  const set = await server.master.put('/1.1/schemas/Defaults', {
    title: { default: 'untitled' },
    views: { type: 'Number', default: 0 },
    owner: { type: 'Pointer', className: '_User' },
  });
  assert.equal(set.status, 200);
  assert.deepEqual(set.body, {
    ...serverFields,
    owner: { type: 'Pointer', className: '_User' },
    title: { type: 'String', default: 'untitled' },
    views: { type: 'Number', default: 0 },
  });
  const created = await server.client.post('/1.1/classes/Defaults', { views: 5 }, { query: { fetchWhenSave: true } });
  const read = await server.client.get(`/1.1/classes/Defaults/${created.body.objectId}`);
  assert.equal(read.body.title, 'untitled');
  assert.equal(read.body.views, 5);
  const explicit = await server.client.post('/1.1/classes/Defaults', { title: null });
  assert.equal((await server.client.get(`/1.1/classes/Defaults/${explicit.body.objectId}`)).body.title, null);
  // A declared type holds for writes as a learned one does.
  const wrong = await server.client.post('/1.1/classes/Defaults', { owner: 'me' });
  assert.deepEqual(wrong.body, mismatch('owner', '{:type "Pointer", :className "_User"}', '{:type "String"}'));
  // Cleared: later creates get nothing.
  assert.equal((await server.master.put('/1.1/schemas/Defaults', { title: { default: null } })).status, 200);
  const after = await server.client.post('/1.1/classes/Defaults', {});
  assert.equal((await server.client.get(`/1.1/classes/Defaults/${after.body.objectId}`)).body.title, undefined);
});

test('schema changes that cannot hold are refused', async () => {
  await server.client.post('/1.1/classes/Refusals', { n: 1 });
  const cases: Array<[unknown, number, number]> = [
    [{ n: { default: 'x' } }, 400, 111],
    [{ n: { type: 'String' } }, 400, 111],
    [{ m: { type: 'Number', default: 'x' } }, 400, 111],
    [{ m: { type: 'Nope' } }, 400, 111],
    [{ m: { type: 'Pointer' } }, 400, 103],
    [{ m: { type: 'Relation', className: 'Post', default: { __type: 'Relation', className: 'Post' } } }, 400, 111],
    [{ m: { weird: 1 } }, 400, 107],
    [{ objectId: { default: 'x' } }, 400, 105],
    [{ 'a.b': { default: 1 } }, 400, 105],
    [{}, 400, 107],
    [[], 400, 107],
  ];
  for (const [body, status, code] of cases) {
    const res = await server.master.put('/1.1/schemas/Refusals', body);
    assert.deepEqual([res.status, res.body.code], [status, code], JSON.stringify(body));
  }
  assert.deepEqual((await server.master.get('/1.1/schemas/Refusals')).body, { ...serverFields, n: { type: 'Number' } });
  const builtIn = await server.master.put('/1.1/schemas/_User', { email: { default: 'x@y.z' } });
  assert.deepEqual([builtIn.status, builtIn.body.code], [400, 111]);
});

test('an import learns the types from the data: each field’s first non-null value', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'roost-schemas-'));
  try {
    const lines = [
      { objectId: 'imp00000000000000000001', createdAt: '2020-01-01T00:00:00.000Z', nick: null, level: 1 },
      { objectId: 'imp00000000000000000002', nick: 'bob', level: 'two', owner: { __type: 'Pointer', className: '_User', objectId: 'u1' } },
    ];
    writeFileSync(join(dir, 'Imported.jsonl'), lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
    const reports = await new Importer({ store: server.store, clock: server.clock, appId: server.appId, secret: server.config.secret }).run(dir);
    assert.equal(reports[0].inserted, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual((await server.master.get('/1.1/schemas/Imported')).body, {
    ...serverFields,
    level: { type: 'Number' },
    nick: { type: 'String' },
    owner: { type: 'Pointer', className: '_User' },
  });
  // The data is kept as exported; writes follow the learned types.
  assert.equal((await server.client.get('/1.1/classes/Imported/imp00000000000000000002')).body.level, 'two');
  const res = await server.client.put('/1.1/classes/Imported/imp00000000000000000002', { level: 'three' });
  assert.deepEqual([res.status, res.body], [400, mismatch('level', '{:type "Number"}', '{:type "String"}')]);
});

test('built-in classes: their own fields are typed from the start, new fields are learned on sign-up and update', async () => {
  const signUp = await server.client.post('/1.1/users', { username: 'typed-user', password: 'secret-1', age: 30 });
  assert.equal(signUp.status, 201);
  const wrongLearned = await server.client.post('/1.1/users', { username: 'typed-user-3', password: 'secret-1', age: 'old' });
  assert.deepEqual([wrongLearned.status, wrongLearned.body], [400, mismatch('age', '{:type "Number"}', '{:type "String"}')]);
  const update = await server.client.put(`/1.1/users/${signUp.body.objectId}`, { age: '31' }, { session: signUp.body.sessionToken });
  assert.deepEqual([update.status, update.body], [400, mismatch('age', '{:type "Number"}', '{:type "String"}')]);
  const device = await server.client.post('/1.1/installations', { deviceType: 'android', installationId: 'typed-device-1', badge: 'one' });
  assert.deepEqual([device.status, device.body], [400, mismatch('badge', '{:type "Number"}', '{:type "String"}')]);
  assert.deepEqual((await server.master.get('/1.1/schemas/_User')).body.age, { type: 'Number' });
});

test('the per-class default ACL (setting classDefaultACL) applies to creates beside the column defaults', async () => {
  const settings = await server.master.put('/1.1/settings', { classDefaultACL: { AclDefaults: { '*': { read: true } } } });
  assert.equal(settings.status, 200, settings.text);
  await server.master.put('/1.1/schemas/AclDefaults', { state: { default: 'new' } });
  const created = await server.client.post('/1.1/classes/AclDefaults', {});
  const read = await server.master.get(`/1.1/classes/AclDefaults/${created.body.objectId}`, { query: { returnACL: true } });
  assert.deepEqual([read.body.state, read.body.ACL], ['new', { '*': { read: true } }]);
  // Readable by anyone, writable by no one but the master key.
  assert.equal((await server.client.put(`/1.1/classes/AclDefaults/${created.body.objectId}`, { state: 'x' })).status, 403);
});

test('a write touching a new field twice with two types keeps the first and refuses the other (no 500)', async () => {
  const res = await server.client.post('/1.1/classes/Twice', { 'x.y.z': { __op: 'Increment' }, x: 5 });
  assert.deepEqual([res.status, res.body], [400, mismatch('x', '{:type "Object"}', '{:type "Number"}')]);
  assert.deepEqual((await server.master.get('/1.1/schemas/Twice')).body, { ...serverFields, x: { type: 'Object' } });
});
