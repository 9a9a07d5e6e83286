// Indexes that users control (issue #14, Deliver 2): a master-key endpoint declares, lists and drops an
// index on fields of a class, single or compound; the index is built as the where compiler spells the
// fields (test/storage/query-plans.test.ts shows the planner reading it). Before: no such endpoint (404).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';

const run = promisify(execFile);

let database: TestDatabase;
let server: TestServer;
before(async () => {
  database = await testDatabase();
  server = await startServer({ database });
});
after(async () => {
  await server?.close();
  await database?.drop();
});

test('an index is created, listed as ready, refused twice, and dropped; queries answer as before', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await server.master.post('/1.1/classes/Score', { score: i, owner: { name: `o${i % 2}` } })).status, 201);
  const created = await server.master.post('/1.1/indexes/Score', { name: 'byScore', keys: { score: -1, 'owner.name': 1 } });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body, { name: 'byScore', keys: { score: -1, 'owner.name': 1 }, unique: false, state: 'ready' });
  assert.deepEqual((await server.master.post('/1.1/indexes/Score', { name: 'other', keys: { score: 1 } })).status, 201);

  const listed = await server.master.get('/1.1/indexes/Score');
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body, {
    results: [
      { name: 'byScore', keys: { score: -1, 'owner.name': 1 }, unique: false, state: 'ready' },
      { name: 'other', keys: { score: 1 }, unique: false, state: 'ready' },
    ],
  });
  assert.deepEqual((await server.master.get('/1.1/indexes/Other')).body, { results: [] });

  const again = await server.master.post('/1.1/indexes/Score', { name: 'byScore', keys: { score: 1 } });
  assert.equal(again.status, 400);
  assert.deepEqual(again.body, { code: 1, error: 'The class already has an index of that name.' });

  const where = encodeURIComponent(JSON.stringify({ score: { $gte: 2 }, 'owner.name': 'o0' }));
  const found = await server.master.get(`/1.1/classes/Score?where=${where}&order=-score&keys=score`);
  assert.deepEqual(found.body.results.map((r: { score: number }) => r.score), [4, 2]);

  assert.equal((await server.master.delete('/1.1/indexes/Score/byScore')).status, 200);
  assert.deepEqual((await server.master.get('/1.1/indexes/Score')).body.results.map((i: { name: string }) => i.name), ['other']);
  const gone = await server.master.delete('/1.1/indexes/Score/byScore');
  assert.equal(gone.status, 404);
  assert.deepEqual(gone.body, { code: 101, error: 'The class has no index of that name.' });
  // The name is free again.
  assert.equal((await server.master.post('/1.1/indexes/Score', { name: 'byScore', keys: { score: 1 } })).status, 201);
});

test('the endpoint needs the master key', async () => {
  for (const res of [
    await server.client.get('/1.1/indexes/Score'),
    await server.client.post('/1.1/indexes/Score', { name: 'x', keys: { score: 1 } }),
    await server.client.delete('/1.1/indexes/Score/other'),
  ]) {
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 403);
  }
  assert.deepEqual((await server.master.get('/1.1/indexes/NoSuch')).body, { results: [] });
});

test('bad specs are refused with their catalogue error, and nothing is created', async () => {
  const refused: Array<[unknown, number]> = [
    [{ name: 'a', keys: { 'bad-field': 1 } }, 105],
    [{ name: 'a', keys: { '__proto__x': 1 } }, 105],
    [{ name: 'a', keys: { createdAt: 1 } }, 105],
    [{ name: 'a', keys: { "x'); DROP TABLE objects; --": 1 } }, 105],
    [{ name: 'a', keys: { score: 2 } }, 1],
    [{ name: 'a', keys: {} }, 1],
    [{ name: 'bad name', keys: { score: 1 } }, 1],
    [{ keys: { score: 1 } }, 1],
    [{ name: 'a', keys: { score: 1 }, unique: 'yes' }, 1],
    [{ name: 'a', keys: { score: 1 }, sparse: true }, 1],
    [[1], 1],
  ];
  for (const [body, code] of refused) {
    const res = await server.master.post('/1.1/indexes/Bad', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.code, code, JSON.stringify(body));
  }
  assert.equal((await server.master.post('/1.1/indexes/bad-class', { name: 'a', keys: { score: 1 } })).body.code, 103);
  assert.equal((await server.master.delete('/1.1/indexes/Bad/bad%20name')).body.code, 1);
  assert.deepEqual((await server.master.get('/1.1/indexes/Bad')).body, { results: [] });
});

test('roost index create, list and drop act on the same indexes as the endpoint', async () => {
  const roost = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'index', ...args], {
      env: { ...process.env, ...database.env, DATABASE_URL: database.env.DATABASE_URL ?? '' },
    });
  const created = JSON.parse((await roost('create', '--app', server.appId, 'Cli', 'byRank', '{"rank": 1}', '--unique')).stdout);
  assert.deepEqual(created, { name: 'byRank', keys: { rank: 1 }, unique: true, state: 'ready' });
  assert.deepEqual((await server.master.get('/1.1/indexes/Cli')).body, { results: [created] });
  assert.deepEqual(JSON.parse((await roost('list', '--app', server.appId, 'Cli')).stdout), [created]);
  await assert.rejects(roost('create', '--app', server.appId, 'Cli', 'byRank', '{"rank": 1}'), (error: { code: number; stderr: string }) => {
    assert.equal(error.code, 1);
    assert.equal(error.stderr, 'roost: The class already has an index of that name. (code 1)\n');
    return true;
  });
  assert.equal((await roost('drop', '--app', server.appId, 'Cli', 'byRank')).stdout, 'dropped byRank\n');
  assert.deepEqual((await server.master.get('/1.1/indexes/Cli')).body, { results: [] });
});

test('a unique index: a build over duplicates is refused and leaves nothing; later writes of a taken value are refused', async () => {
  for (const code of ['a', 'a', 'b']) assert.equal((await server.master.post('/1.1/classes/Coupon', { code })).status, 201);
  const refused = await server.master.post('/1.1/indexes/Coupon', { name: 'byCode', keys: { code: 1 }, unique: true });
  assert.equal(refused.status, 400);
  assert.deepEqual(refused.body, { code: 137, error: 'Objects of the class share values of the keys: the unique index was not built.' });
  assert.deepEqual((await server.master.get('/1.1/indexes/Coupon')).body, { results: [] });
  if (server.store.kind === 'postgres') {
    // CREATE INDEX CONCURRENTLY leaves an invalid index when it fails: none stays.
    const db = (server.store as unknown as { db: Kysely<any> }).db;
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_index WHERE NOT indisvalid`.execute(db);
    assert.equal(rows[0].n, 0);
  }

  const found = await server.master.get(`/1.1/classes/Coupon?where=${encodeURIComponent('{"code":"a"}')}`);
  assert.equal((await server.master.delete(`/1.1/classes/Coupon/${found.body.results[0].objectId}`)).status, 200);
  const created = await server.master.post('/1.1/indexes/Coupon', { name: 'byCode', keys: { code: 1 }, unique: true });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body, { name: 'byCode', keys: { code: 1 }, unique: true, state: 'ready' });
  assert.deepEqual((await server.master.get('/1.1/indexes/Coupon')).body.results, [created.body]);

  const taken = { code: 137, error: 'A unique field was given a value that is already taken.' };
  const again = await server.master.post('/1.1/classes/Coupon', { code: 'b' });
  assert.equal(again.status, 400);
  assert.deepEqual(again.body, taken);
  const other = await server.master.post('/1.1/classes/Coupon', { code: 'c' });
  assert.equal(other.status, 201);
  const changed = await server.master.put(`/1.1/classes/Coupon/${other.body.objectId}`, { code: 'a' });
  assert.equal(changed.status, 400);
  assert.deepEqual(changed.body, taken);
  // Objects without the field, and other classes, are not compared.
  assert.equal((await server.master.post('/1.1/classes/Coupon', { other: 1 })).status, 201);
  assert.equal((await server.master.post('/1.1/classes/Coupon', { other: 2 })).status, 201);
  assert.equal((await server.master.post('/1.1/classes/Voucher', { code: 'a' })).status, 201);
});
