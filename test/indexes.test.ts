// Indexes that users control (issue #14, Deliver 2): a master-key endpoint declares, lists and drops an
// index on fields of a class, single or compound; the index is built as the where compiler spells the
// fields (test/storage/query-plans.test.ts shows the planner reading it). Before: no such endpoint (404).
// The build runs in the background: the POST answers at once with the index `building`, GET shows it
// `ready`, or `failed` with the error a synchronous build would have answered (before: the POST waited
// for the build, and answered that error itself).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { roostScript } from './helpers/scripts.ts';

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

const db = () => (server.store as unknown as { db: Kysely<any> }).db;

/** The database's indexes (valid or not) of a declared index: PostgreSQL adds one for string ranges. */
async function catalogued(className: string, name: string): Promise<string[]> {
  const { rows: declared } = await sql<{ index_name: string }>`SELECT index_name FROM class_indexes
    WHERE app_id = ${server.appId} AND class_name = ${className} AND name = ${name}`.execute(db());
  const names = [declared[0].index_name, `${declared[0].index_name}_s`];
  const { rows } = server.store.kind === 'postgres'
    ? await sql<{ name: string }>`SELECT relname AS name FROM pg_class WHERE relname = ANY(${names}::text[]) ORDER BY 1`.execute(db())
    : await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND name IN (${sql.join(names)}) ORDER BY 1`.execute(db());
  return rows.map((row) => row.name);
}

/** The class's indexes once none is building (the builds run in this process, or are resumed by it). */
async function settled(className: string, on: TestServer = server): Promise<{ results: Array<Record<string, unknown>> }> {
  for (let tries = 0; ; tries++) {
    const listed = await on.master.get(`/1.1/indexes/${className}`);
    assert.equal(listed.status, 200);
    if (!listed.body.results.some((index: { state: string }) => index.state === 'building')) return listed.body;
    if (tries > 500) assert.fail(`still building: ${JSON.stringify(listed.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('an index is created, listed as ready, refused twice, and dropped; queries answer as before', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await server.master.post('/1.1/classes/Score', { score: i, owner: { name: `o${i % 2}` } })).status, 201);
  const created = await server.master.post('/1.1/indexes/Score', { name: 'byScore', keys: { score: -1, 'owner.name': 1 } });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body, { name: 'byScore', keys: { score: -1, 'owner.name': 1 }, unique: false, state: 'building' });
  assert.deepEqual((await server.master.post('/1.1/indexes/Score', { name: 'other', keys: { score: 1 } })).status, 201);

  assert.deepEqual(await settled('Score'), {
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
  await settled('Score');
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
    run(process.execPath, [...roostScript('cli'), 'index', ...args], {
      env: { ...process.env, ...database.env, DATABASE_URL: database.env.DATABASE_URL ?? '' },
    });
  // create waits for the build: the index it prints is ready.
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

  // A failed build: printed with its error, exit 1.
  for (const rank of [1, 1]) assert.equal((await server.master.post('/1.1/classes/Cli', { rank })).status, 201);
  await assert.rejects(roost('create', '--app', server.appId, 'Cli', 'byRank', '{"rank": 1}', '--unique'), (error: { code: number; stdout: string; stderr: string }) => {
    assert.equal(error.code, 1);
    assert.deepEqual(JSON.parse(error.stdout), { name: 'byRank', keys: { rank: 1 }, unique: true, state: 'failed', ...failedUnique });
    assert.equal(error.stderr, `roost: ${failedUnique.error} (code 137)\n`);
    return true;
  });
  assert.deepEqual(JSON.parse((await roost('list', '--app', server.appId, 'Cli')).stdout), [{ name: 'byRank', keys: { rank: 1 }, unique: true, state: 'failed', ...failedUnique }]);
});

const failedUnique = { code: 137, error: 'Objects of the class share values of the keys: the unique index was not built.' };

test('a unique index: a build over duplicates fails, shows why and leaves nothing; later writes of a taken value are refused', async () => {
  for (const code of ['a', 'a', 'b']) assert.equal((await server.master.post('/1.1/classes/Coupon', { code })).status, 201);
  const building = await server.master.post('/1.1/indexes/Coupon', { name: 'byCode', keys: { code: 1 }, unique: true });
  assert.equal(building.status, 201);
  assert.deepEqual(building.body, { name: 'byCode', keys: { code: 1 }, unique: true, state: 'building' });
  assert.deepEqual(await settled('Coupon'), { results: [{ name: 'byCode', keys: { code: 1 }, unique: true, state: 'failed', ...failedUnique }] });
  // Nothing of it in the catalogue (CREATE INDEX CONCURRENTLY leaves an invalid index when it fails).
  assert.deepEqual(await catalogued('Coupon', 'byCode'), []);
  // The failed index keeps its name until it is dropped.
  assert.deepEqual((await server.master.post('/1.1/indexes/Coupon', { name: 'byCode', keys: { code: 1 }, unique: true })).body, { code: 1, error: 'The class already has an index of that name.' });
  assert.equal((await server.master.delete('/1.1/indexes/Coupon/byCode')).status, 200);
  assert.deepEqual((await server.master.get('/1.1/indexes/Coupon')).body, { results: [] });

  const found = await server.master.get(`/1.1/classes/Coupon?where=${encodeURIComponent('{"code":"a"}')}`);
  assert.equal((await server.master.delete(`/1.1/classes/Coupon/${found.body.results[0].objectId}`)).status, 200);
  const created = await server.master.post('/1.1/indexes/Coupon', { name: 'byCode', keys: { code: 1 }, unique: true });
  assert.equal(created.status, 201);
  assert.deepEqual(await settled('Coupon'), { results: [{ name: 'byCode', keys: { code: 1 }, unique: true, state: 'ready' }] });
  assert.equal((await catalogued('Coupon', 'byCode')).length, server.store.kind === 'postgres' ? 2 : 1);

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

test('an index builds in the background: building while the build waits, writes going on, ready after (PostgreSQL)', async (t) => {
  if (server.store.kind !== 'postgres') return t.skip('SQLite builds in one write: the next test shows a build resumed');
  for (let i = 0; i < 3; i++) assert.equal((await server.master.post('/1.1/classes/Held', { n: i })).status, 201);
  // A transaction that writes (holds the lock every write takes) keeps the build waiting for it: CREATE
  // INDEX CONCURRENTLY waits for the writes under way when it begins, and lets later ones go on.
  const holder = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await holder.connect();
  let second: TestServer | undefined;
  try {
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE objects IN ROW EXCLUSIVE MODE');
    const building = await server.master.post('/1.1/indexes/Held', { name: 'byN', keys: { n: 1 } });
    assert.deepEqual(building.body, { name: 'byN', keys: { n: 1 }, unique: false, state: 'building' });
    // Its progress as pg_stat_progress_create_index has it, in the phase the build waits in (after 'initializing').
    let listed: { results: Array<{ progress?: { phase: string } }> };
    for (let tries = 0; ; tries++) {
      listed = (await server.master.get('/1.1/indexes/Held')).body;
      if (listed.results[0].progress?.phase === 'waiting for writers before build' || tries > 200) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(listed.results, [{
      name: 'byN', keys: { n: 1 }, unique: false, state: 'building',
      progress: { phase: 'waiting for writers before build', blocks: { done: 0, total: 0 }, tuples: { done: 0, total: 0 } },
    }]);
    // Writes go on meanwhile.
    assert.equal((await server.master.post('/1.1/classes/Held', { n: 3 })).status, 201);
    // A second process starting meanwhile (it resumes builds no process runs) leaves this one to its builder.
    second = await startServer({ database });
    await second.store.classIndexes.idle();
    assert.deepEqual((await second.store.classIndexes.list(server.appId, 'Held')).map((index) => index.state), ['building']);
    // One dropped while it waits to be built: the DELETE answers at once, its builder finds it gone and builds nothing that stays.
    assert.equal((await server.master.post('/1.1/indexes/Held', { name: 'gone', keys: { n: -1 } })).status, 201);
    const goneIndex = await indexNameOf('Held', 'gone');
    const dropped = await server.master.delete('/1.1/indexes/Held/gone');
    assert.equal(dropped.status, 200);
    assert.deepEqual(dropped.body, {});
    await holder.query('COMMIT');
    assert.deepEqual(await settled('Held'), { results: [{ name: 'byN', keys: { n: 1 }, unique: false, state: 'ready' }] });
    await server.store.classIndexes.idle();
    const { rows: left } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_class WHERE relname LIKE ${goneIndex + '%'}`.execute(db());
    assert.deepEqual(left, [{ n: 0 }]);
    assert.deepEqual(await catalogued('Held', 'byN'), [`${await indexNameOf('Held', 'byN')}`, `${await indexNameOf('Held', 'byN')}_s`]);
  } finally {
    await holder.end();
    await second?.close();
  }
});

test('a build a stopped process left is resumed: building until then, ready after, what it left removed', async () => {
  for (const n of [1, 2, 3]) assert.equal((await server.master.post('/1.1/classes/Resumed', { n })).status, 201);
  // What a process stopped during a build leaves: the row building; on PostgreSQL an invalid index.
  await sql`INSERT INTO class_indexes (app_id, class_name, name, keys, index_name, created_at, state, is_unique)
    VALUES (${server.appId}, 'Resumed', 'byN', ${JSON.stringify([{ path: ['n'], descending: false }])}, 'cix_resumed', 0, 'building', 1)`.execute(db());
  if (server.store.kind === 'postgres') {
    for (const n of [7, 7]) assert.equal((await server.master.post('/1.1/classes/Twice', { n })).status, 201);
    await assert.rejects(sql.raw(`CREATE UNIQUE INDEX CONCURRENTLY cix_resumed ON objects ((data #> '{n}')) WHERE class_name = 'Twice'`).execute(db()));
    assert.deepEqual(await catalogued('Resumed', 'byN'), ['cix_resumed']);
  }
  // The first listing finds it building (and starts the build again: the stopped process holds it no more).
  assert.deepEqual((await server.master.get('/1.1/indexes/Resumed')).body, { results: [{ name: 'byN', keys: { n: 1 }, unique: true, state: 'building' }] });
  assert.deepEqual(await settled('Resumed'), { results: [{ name: 'byN', keys: { n: 1 }, unique: true, state: 'ready' }] });
  assert.deepEqual(await catalogued('Resumed', 'byN'), server.store.kind === 'postgres' ? ['cix_resumed', 'cix_resumed_s'] : ['cix_resumed']);
  if (server.store.kind === 'postgres') {
    const { rows } = await sql<{ valid: boolean }>`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = 'cix_resumed'`.execute(db());
    assert.deepEqual(rows, [{ valid: true }]);
  }
  // Built as declared: unique.
  const taken = await server.master.post('/1.1/classes/Resumed', { n: 2 });
  assert.deepEqual(taken.body, { code: 137, error: 'A unique field was given a value that is already taken.' });
});

async function indexNameOf(className: string, name: string): Promise<string> {
  const { rows } = await sql<{ index_name: string }>`SELECT index_name FROM class_indexes
    WHERE app_id = ${server.appId} AND class_name = ${className} AND name = ${name}`.execute(db());
  return rows[0].index_name;
}
