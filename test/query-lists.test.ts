// Long $in/$nin/$all lists and long $or lists: one bound parameter per list, the same answers on both stores.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { insertUntyped } from './helpers/untyped.ts';

let server: TestServer;
const ids: string[] = [];
// Row i of the class; the test names rows by index.
const rows: Array<Record<string, unknown>> = [
  { n: 1 },
  { n: 1.5 },
  { n: '1' },
  { n: true },
  { n: false },
  { n: [1, 5] },
  { n: ['x', 7] },
  { n: null },
  {},
  { n: { a: 1 } },
  { n: 'x' },
  { tags: Array.from({ length: 3000 }, (_, i) => `t${i}`) },
];

before(async () => {
  server = await startServer();
  // One field of many types: only imported data holds that (the API refuses a second type, 111).
  ids.push(...(await insertUntyped(server.store, server.appId, 'Lists', rows)));
});
after(async () => {
  await server?.close();
});

/** The indexes of the rows a where finds (GET with the where in the URL, as the SDKs send it). */
async function find(where: unknown): Promise<number[] | { status: number; body: unknown }> {
  const res = await server.client.get('/1.1/classes/Lists', { query: { where, limit: 1000 } });
  if (res.status !== 200) return { status: res.status, body: res.body };
  return res.body.results.map((o: { objectId: string }) => ids.indexOf(o.objectId)).sort((a: number, b: number) => a - b);
}

// Numbers that match nothing, to make a list long.
const filler = Array.from({ length: 4990 }, (_, i) => 100_000 + i);

test('$in and $nin with 5,000 values answer as the short list does (Review of e2b2d15: SQLite answered 500 from 990 values)', async () => {
  const cases: Array<[unknown[], number[]]> = [
    [[1], [0, 5]],
    [['1'], [2]],
    [[true], [3]],
    [[null], [7, 8, 11]],
    [[{ a: 1 }], [9]],
    [['x', 1.5], [1, 6, 10]],
    [[7], [6]],
  ];
  for (const [values, expected] of cases) {
    assert.deepEqual(await find({ n: { $in: values } }), expected, `$in ${JSON.stringify(values)}`);
    assert.deepEqual(await find({ n: { $in: [...values, ...filler] } }), expected, `long $in ${JSON.stringify(values)}`);
    const rest = rows.map((_, i) => i).filter((i) => !expected.includes(i));
    assert.deepEqual(await find({ n: { $nin: [...values, ...filler] } }), rest, `long $nin ${JSON.stringify(values)}`);
  }
});

test('$in over objectId with 1,500 ids (a 50 KB URL), and $all with 3,000 values', async () => {
  const someIds = Array.from({ length: 1500 }, (_, i) => `${i}`.padStart(24, 'f'));
  assert.deepEqual(await find({ objectId: { $in: [ids[2], ids[4], ...someIds] } }), [2, 4]);
  const tags = rows[11].tags as string[];
  assert.deepEqual(await find({ tags: { $all: tags } }), [11]);
  assert.deepEqual(await find({ tags: { $all: [...tags, 'absent'] } }), []);
  assert.deepEqual(await find({ n: { $all: [5, 1] } }), [5]);
  assert.deepEqual(await find({ n: { $all: [1, 6] } }), []);
});

test('$or with 1,000 clauses works; longer lists get 400 with the documented caps', async () => {
  // Review of e2b2d15: a chain of 1000 ORs was "Expression tree is too large" (500) on SQLite.
  const clauses: Array<Record<string, unknown>> = Array.from({ length: 1000 }, (_, i) => ({ [`f${i % 50}`]: i }));
  clauses[999] = { n: 'x' };
  assert.deepEqual(await find({ $or: clauses }), [6, 10]);
  const tooLong = Array.from({ length: 10_001 }, (_, i) => i);
  // Too long for a URL: sent in a batch body, where the same parser refuses it.
  const batch = await server.client.post('/1.1/batch', {
    requests: [{ method: 'GET', path: '/1.1/classes/Lists', params: { where: { n: { $in: tooLong } } } }],
  });
  assert.deepEqual(batch.body, [{ error: { code: 102, error: '$in may list at most 10000 values.' } }]);
  assert.deepEqual(await find({ $or: [...clauses, { n: 1 }] }), {
    status: 400,
    body: { code: 102, error: '$or may list at most 1000 clauses.' },
  });
  const many = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, 1]));
  assert.deepEqual(await find({ $and: [many] }), { status: 400, body: { code: 102, error: 'A where may hold at most 1000 conditions.' } });
});
