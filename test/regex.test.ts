// Review of e2b2d15 (issue #13, point 1): `$regex` ran in JavaScript's backtracking engine on
// SQLite (`(A+A+)+y` over a 60,000-character string froze the node for minutes) and as a raw
// pattern on PostgreSQL (12 of 28 ordinary patterns answered 500; `\Q…\E` from the SDKs was a
// letter Q on SQLite and a 500 on PostgreSQL). One RE2 dialect now answers the same on both stores.
import { test, after, before, describe } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { openPostgresStore } from '../src/storage/postgres/open.ts';
import { freshPostgresDatabase } from './helpers/databases.ts';
import { initSdk } from './helpers/sdk.ts';
import { startServer, storeKind, testDatabase, type TestServer } from './helpers/harness.ts';

let server: TestServer;

/** Stored strings, named by their index in the expectations below. */
const texts = [
  'person1', // 0
  'QpE-odd', // 1
  'Paris', // 2
  'paris', // 3
  'line one\nline two', // 4
  'foo bar', // 5
  'foobar', // 6
  'café', // 7
  'CAFÉ', // 8
  '123-4567', // 9
  'a.b', // 10
  'axb', // 11
  'back\\slash', // 12
  'end\n', // 13
  'Straße', // 14
  '\u212a', // 15 (Kelvin sign, which RE2 folds with k)
  '', // 16
  'tab\there', // 17
];

const cases: Array<[pattern: string, options: string, matches: number[]]> = [
  ['^\\Qp\\E', '', [0, 3]], // startsWith('p'), as the SDKs send it
  ['\\Qa.b\\E', '', [10]], // contains('a.b')
  ['\\Qbar\\E$', '', [5, 6]], // endsWith('bar')
  ['\\Qback\\\\E', '', [12]], // contains('back\\') quoted with a backslash inside
  ['^P', '', [2]],
  ['^p', 'i', [0, 2, 3]],
  ['a.b', '', [10, 11]],
  ['^Par(is)?$', '', [2]],
  ['is$', '', [2, 3]],
  ['^line two$', 'm', [4]],
  ['^line two$', '', []],
  ['one.line', '', []],
  ['one.line', 's', [4]],
  ['end$', '', []], // $ is the end of the text, not before a final newline
  ['end\\n\\z', '', [13]],
  ['\\Aline', '', [4]],
  ['\\d{3}-\\d{4}', '', [9]],
  ['[0-9]+-[0-9]+$', '', [9]],
  ['\\bbar', '', [5]],
  ['o\\Bb', '', [6]],
  ['^\\w+\\s\\w+$', '', [5, 17]],
  ['\\t', '', [17]],
  ['[[:upper:]]{2}', '', [8]],
  ['^[^a-z]+$', '', [8, 9, 15]],
  ['caf[eé]', 'i', [7, 8]],
  ['stra(ss|ß)e', 'i', [14]],
  ['^k$', 'i', [15]],
  ['fo+?b', '', [6]],
  ['(?:foo|qux)(?P<rest>bar)', '', [6]],
  ['(?i)PARIS|(?-i:x)b', '', [2, 3, 11]],
  ['(?i:P)aris', '', [2, 3]],
  ['f o o # words\n \\  b a r', 'x', [5]],
  ['^$', '', [16]],
];

before(async () => {
  server = await startServer();
  const res = await server.master.post('/1.1/batch', {
    requests: texts.map((s, n) => ({ method: 'POST', path: '/1.1/classes/Text', body: { n, s } })),
  });
  assert.equal(res.status, 200, res.text);
});
after(async () => {
  await server?.close();
});

async function query(where: unknown, className = 'Text') {
  return server.client.get(`/1.1/classes/${className}`, { query: { where, order: 'n', keys: 'n', limit: 100 } });
}

describe('$regex: one RE2 dialect, the same matches on both stores', () => {
  for (const [pattern, options, expected] of cases) {
    test(`${JSON.stringify(pattern)} ${options}`, async () => {
      const res = await query({ s: options ? { $regex: pattern, $options: options } : { $regex: pattern } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.results.map((r: { n: number }) => r.n), expected);
    });
  }
});

test('the official SDK: startsWith, endsWith, contains (\\Q…\\E quoting) and matches(/…/i)', async () => {
  initSdk(server);
  const ns = async (query: AV.Query<AV.Queriable>) => (await query.ascending('n').find()).map((o) => (o as AV.Object).get('n'));
  assert.deepEqual(await ns(new AV.Query('Text').startsWith('s', 'p')), [0, 3]);
  assert.deepEqual(await ns(new AV.Query('Text').endsWith('s', 'bar')), [5, 6]);
  assert.deepEqual(await ns(new AV.Query('Text').contains('s', 'a.b')), [10]);
  assert.deepEqual(await ns(new AV.Query('Text').contains('s', 'back\\')), [12]);
  assert.deepEqual(await ns(new AV.Query('Text').matches('s', /^CAF/i)), [7, 8]);
});

describe('$regex outside the dialect is refused with 400 before any row is read', () => {
  const refused: Array<[pattern: string, options: string, error: string]> = [
    ['(a)\\1', '', 'Invalid regular expression: back-references are not supported.'],
    ['(?=a)b', '', 'Invalid regular expression: look-around is not supported.'],
    ['(?<!a)b', '', 'Invalid regular expression: look-around is not supported.'],
    ['\\p{Greek}', '', 'Invalid regular expression: Unicode classes \\p{…} are not supported.'],
    ['a{256}', '', 'Invalid regular expression: repetition counts may be at most 255.'],
    ['a{60001}', 'i', 'Invalid regular expression: repetition counts may be at most 255.'],
    ['x'.repeat(501), '', 'Invalid regular expression: a pattern may be at most 500 characters.'],
    ['(?:[A-Za-z]{30}[a-z]?){30}[0-9]', '', 'Invalid regular expression: the pattern is too complex (more than 500 instructions once compiled).'],
    ['(a{30}){40}', '', 'Invalid regular expression: nested repetition counts may multiply to at most 1000.'],
    ['(', '', 'Invalid regular expression: missing ).'],
    ['a**', '', 'Invalid regular expression: nested repetition operator.'],
    ['\\Z', '', 'Invalid regular expression: invalid escape \\Z.'],
    ['(?x)a', '', 'Invalid regular expression: the x flag is set with $options, not inline.'],
    ['a', 'g', '$options may hold only i, m, s and x.'],
  ];
  for (const [pattern, options, error] of refused) {
    test(`${JSON.stringify(pattern.slice(0, 40))} ${options}`, async () => {
      // A class with no rows: the answer cannot come from reading one.
      const res = await query({ s: { $regex: pattern, $options: options } }, 'Nothing');
      assert.deepEqual([res.status, res.body], [400, { code: 102, error }]);
    });
  }
});

describe('hostile patterns answer promptly and never stop the node', () => {
  test('catastrophic backtracking patterns run in linear time while /health keeps answering', async () => {
    const long = await server.master.post('/1.1/classes/Long', { s: 'A'.repeat(60_000) });
    assert.equal(long.status, 201);
    assert.equal((await server.master.post('/1.1/classes/Long', { s: 'a'.repeat(27) + '!' })).status, 201);
    let worstHealth = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const started = performance.now();
        const res = await fetch(`${server.url}/health`);
        await res.text();
        worstHealth = Math.max(worstHealth, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const started = performance.now();
    for (const [pattern, options] of [['(A+A+)+y', ''], ['(a+)+$', ''], ['(A+A+)+y', 'i'], ['(x+x+)+y', 'i'], ['(.*.*)*=', 's']]) {
      const res = await query({ s: { $regex: pattern, $options: options } }, 'Long');
      assert.deepEqual([res.status, res.body.results], [200, []], `${pattern} ${res.text}`);
    }
    const elapsed = performance.now() - started;
    polling = false;
    await poller;
    assert.ok(elapsed < 2000, `five hostile queries took ${elapsed.toFixed(0)} ms`);
    assert.ok(worstHealth < 200, `/health took ${worstHealth.toFixed(0)} ms while they ran`);
  });
});

describe('PostgreSQL statement timeout (the backstop behind the dialect)', () => {
  test('STATEMENT_TIMEOUT_MS is read and checked', () => {
    assert.equal(loadConfig({}).statementTimeoutMs, 30_000);
    assert.equal(loadConfig({ STATEMENT_TIMEOUT_MS: '0' }).statementTimeoutMs, 0);
    assert.throws(() => loadConfig({ STATEMENT_TIMEOUT_MS: '-1' }), /STATEMENT_TIMEOUT_MS/);
  });

  test('a statement outliving it is cancelled; migrations ran without it', { skip: storeKind !== 'postgres' }, async () => {
    const db = await freshPostgresDatabase();
    const store = await openPostgresStore({ url: db.url, poolSize: 2, statementTimeoutMs: 100 });
    try {
      const kysely = (store as unknown as { db: Kysely<any> }).db;
      await assert.rejects(sql`SELECT pg_sleep(0.5)`.execute(kysely), { code: '57014' });
      const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(kysely);
      assert.deepEqual(rows, [{ ok: 1 }]);
    } finally {
      await store.close();
      await db.drop();
    }
  });

  test('a request whose statement it cuts answers 503 code 124, and the node goes on serving', { skip: storeKind !== 'postgres' }, async () => {
    const database = await testDatabase();
    const url = database.env.DATABASE_URL;
    const timed = await startServer({ database: { ...database, open: () => openPostgresStore({ url, poolSize: 3, statementTimeoutMs: 300 }) } });
    const locker = new pg.Client({ connectionString: url });
    try {
      assert.equal((await timed.client.post('/1.1/classes/Text', { s: 'x' })).status, 201);
      // A query waiting behind another session's lock outlives the timeout for certain.
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE objects IN ACCESS EXCLUSIVE MODE');
      const cut = await timed.client.get('/1.1/classes/Text', { query: { where: { s: { $regex: '^x' } } } });
      await locker.query('ROLLBACK');
      assert.deepEqual([cut.status, cut.body], [503, { code: 124, error: 'The request took too long and was stopped.' }]);
      const again = await timed.client.get('/1.1/classes/Text', { query: { where: { s: { $regex: '^x' } } } });
      assert.deepEqual([again.status, again.body.results.length], [200, 1]);
    } finally {
      await locker.end();
      await timed.close();
      await database.drop();
    }
  });
});
