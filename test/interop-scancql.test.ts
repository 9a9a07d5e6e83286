// Scan and CQL through the official JavaScript SDK (npm leancloud-storage), as its own suite calls them
// (issue #16 points 7 and 8): AV.Query.doCloudQuery(cql, pvalues) and query.scan({orderedBy, batchSize}).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { rejection, sdkServer } from './helpers/sdk.ts';

sdkServer();

const now = 1568867865073;

async function seed(className: string, count: number, fields: (n: number) => Record<string, unknown>): Promise<AV.Object[]> {
  const objects = Array.from({ length: count }, (_, n) => new AV.Object(className).set(fields(n)));
  await AV.Object.saveAll(objects);
  return objects;
}

/** The SDK's typings say Queriable; doCloudQuery resolves to this (src/query.js). */
interface CloudQueryResult {
  results: AV.Object[];
  count?: number;
  className: string;
}

function doCloudQuery(cql: string, pvalues?: unknown[]): Promise<CloudQueryResult> {
  const query = AV.Query as unknown as { doCloudQuery(cql: string, pvalues?: unknown[]): Promise<CloudQueryResult> };
  return pvalues ? query.doCloudQuery(cql, pvalues) : query.doCloudQuery(cql);
}

/** Everything a scan iterator yields, as the SDK's own test reads it: next() until done. */
async function drain(iterator: AsyncIterator<unknown>): Promise<AV.Object[]> {
  const seen: AV.Object[] = [];
  for (;;) {
    const { done, value } = await iterator.next();
    if (done) return seen;
    seen.push(value as AV.Object);
  }
}

test("doCloudQuery: results as objects of the class, className, count only when counted (the SDK suite's #cloudQuery)", async () => {
  await seed('CqlScore', 12, (n) => ({ playerName: `p${n}`, score: n }));
  const all = await doCloudQuery('select * from CqlScore');
  assert.equal(all.className, 'CqlScore');
  assert.equal(all.count, undefined);
  assert.equal(all.results.length, 12);
  assert.ok(all.results[0] instanceof AV.Object);
  assert.equal(all.results[0].className, 'CqlScore');
  assert.equal(all.results[0].get('playerName'), 'p0');

  const limited = await doCloudQuery('select * from CqlScore limit 10');
  assert.equal(limited.results.length, 10);

  const counted = await doCloudQuery('select *,count(objectId) from CqlScore limit ?', [5]);
  assert.equal(counted.results.length, 5);
  assert.equal(counted.count, 12);

  const filtered = await doCloudQuery('select playerName from CqlScore where score >= ? and playerName != ? order by score desc limit ?', [9, 'p10', 2]);
  assert.deepEqual(filtered.results.map((o) => [o.get('playerName'), o.get('score')]), [['p11', undefined], ['p9', undefined]]);

  const onlyCount = await doCloudQuery('select count(*) from CqlScore where score < 3');
  assert.deepEqual([onlyCount.results.length, onlyCount.count], [0, 3]);
});

test('doCloudQuery: a syntax error rejects with code 300 and the hosted message', async () => {
  const error = await rejection(doCloudQuery('select * CqlScore limit 10'));
  assert.equal(error.code, 300);
  assert.equal(error.message, 'CQL syntax error.Detail: Parse error at line 1, column 10:\nselect * CqlScore limit 10\n         ^\nExpected one of:\n,\nfrom\n\n');
});

test("query.scan({orderedBy, batchSize}, {useMasterKey}): every matching object once, in pages (the SDK suite's scan)", async () => {
  const saved = await seed('ScanTest', 4, () => ({ timestamp: now }));
  await seed('ScanTest', 3, () => ({ timestamp: now + 1 }));
  const scan = new AV.Query('ScanTest').equalTo('timestamp', now).scan({ orderedBy: 'objectId', batchSize: 2 }, { useMasterKey: true });
  const seen = await drain(scan);
  assert.deepEqual(seen.map((o) => o.id), saved.map((o) => o.id as string).sort());
  assert.ok(seen.every((o) => o instanceof AV.Object && o.get('timestamp') === now));

  const many = await seed('ScanMany', 250, (n) => ({ n }));
  const byN = await drain(new AV.Query('ScanMany').scan({ orderedBy: 'n', batchSize: 100 }, { useMasterKey: true }));
  assert.deepEqual(byN.map((o) => o.id), many.map((o) => o.id));
  const backwards = await drain(new AV.Query('ScanMany').greaterThan('n', 199).scan({ orderedBy: '-n', batchSize: 7 }, { useMasterKey: true }));
  assert.deepEqual(backwards.map((o) => o.get('n')), Array.from({ length: 50 }, (_, i) => 249 - i));
  const defaults = await drain(new AV.Query('ScanMany').scan(undefined, { useMasterKey: true }));
  assert.equal(new Set(defaults.map((o) => o.id)).size, 250);
});

test('query.scan without the master key is refused', async () => {
  const error = await rejection(new AV.Query('ScanTest').scan().next());
  assert.equal(error.code, 403);
  assert.equal(error.message, 'Scan needs the master key.');
});
