// CQL (/1.1/cloudQuery): selects compiled to the REST find, answered as the hosted service answered (reference §13).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';

let server: TestServer;
const ids: Record<string, string> = {};
const rows = [
  { name: 'dennis', score: 90, tags: ['a', 'b'] },
  { name: 'catty', score: 70, tags: ['b'] },
  { name: "it's ?", score: 50 },
  { name: 'green', score: 100, level: 3 },
  { name: 'dennis2', score: 0 },
];

before(async () => {
  server = await startServer();
  const requests = [...rows, { name: 'hidden', score: 95, ACL: {} }].map((body) => ({ method: 'POST', path: '/1.1/classes/GameScore', body }));
  const answers = (await server.client.post('/1.1/batch', { requests })).body as Array<{ success: { objectId: string } }>;
  answers.forEach((answer, i) => (ids[i < rows.length ? rows[i].name : 'hidden'] = answer.success.objectId));
});
after(async () => {
  await server?.close();
});

function cql(statement: string, pvalues?: unknown[], client = server.client) {
  return client.get('/1.1/cloudQuery', { query: pvalues ? { cql: statement, pvalues } : { cql: statement } });
}

async function names(statement: string, pvalues?: unknown[]): Promise<string[]> {
  const res = await cql(statement, pvalues);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.results.map((o: { name: string }) => o.name);
}

test('select * answers the REST find of the class, with className (hosted: {"results":[…],"className":"GameScore"})', async () => {
  const rest = await server.client.get('/1.1/classes/GameScore');
  const res = await cql('select * from GameScore');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { results: rest.body.results, className: 'GameScore' });
  assert.deepEqual(Object.keys(res.body), ['results', 'className']);
  assert.deepEqual(res.body.results.map((o: { name: string }) => o.name), rows.map((r) => r.name));
});

test('where, order by, limit skip,count and selected keys compile to the same find as REST', async () => {
  const res = await cql('select name from GameScore where score >= 50 and score < 100 order by score desc limit 1,2');
  const rest = await server.client.get('/1.1/classes/GameScore', {
    query: { where: { score: { $gte: 50, $lt: 100 } }, order: '-score', skip: 1, limit: 2, keys: 'name' },
  });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { results: rest.body.results, className: 'GameScore' });
  assert.deepEqual(res.body.results, [
    { name: 'catty', objectId: ids.catty, createdAt: rest.body.results[0].createdAt, updatedAt: rest.body.results[0].updatedAt },
    { name: "it's ?", objectId: ids["it's ?"], createdAt: rest.body.results[1].createdAt, updatedAt: rest.body.results[1].updatedAt },
  ]);
  assert.deepEqual(await names('select * from GameScore order by -score, name limit 2'), ['green', 'dennis']);
  assert.deepEqual(await names('select * from GameScore order by score, +name desc limit 2'), ['green', 'dennis']);
  assert.deepEqual(await names('SELECT * FROM GameScore LIMIT 2 ORDER BY score'), ['dennis2', "it's ?"]);
  assert.deepEqual(await names('select * from GameScore where (score > 80 and score <= 100) or score = 0'), ['dennis', 'green', 'dennis2']);
});

test('count(*) answers {"results":[],"className":…,"count":N}; count with * lists too (ACL applies to both)', async () => {
  const res = await cql('select count(*) from GameScore where score > 60');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { results: [], className: 'GameScore', count: 3 });
  const both = await cql('select *, count(objectId) from GameScore limit ?', [2]);
  assert.equal(both.status, 200);
  assert.deepEqual(Object.keys(both.body), ['results', 'className', 'count']);
  assert.equal(both.body.results.length, 2);
  assert.equal(both.body.count, 5);
  const master = await cql('select count(*) from GameScore where score > 60', undefined, server.master);
  assert.deepEqual(master.body, { results: [], className: 'GameScore', count: 4 });
});

test('pvalues fill the placeholders in order; a ? inside a string literal is not one', async () => {
  assert.deepEqual(await names('select * from GameScore where name = ? and score > ?', ["it's ?", 10]), ["it's ?"]);
  assert.deepEqual(await names('select * from GameScore where score > ? limit ?,?', [10, 1, 2]), ['catty', "it's ?"]);
  assert.deepEqual(await names("select * from GameScore where name = 'it''s ?'"), ["it's ?"]);
  assert.deepEqual(await names(String.raw`select * from GameScore where name = 'it\'s ?'`), ["it's ?"]);
  assert.deepEqual(await names(`select * from GameScore where name = "it's ?" and score = ?`, [50]), ["it's ?"]);
  const short = await cql('select * from GameScore where name = ? and score > ?', ['x']);
  assert.deepEqual(short.body, { code: 300, error: 'CQL syntax error.Detail: the statement has 2 placeholders (?) and pvalues holds 1 values.' });
  const notArray = await cql('select * from GameScore where name = ?', { name: 'x' } as unknown as unknown[]);
  assert.deepEqual([notArray.status, notArray.body], [400, { code: 107, error: 'pvalues must be a JSON array.' }]);
});

test('a syntax error is 400 code 300 in the hosted wording: line, column, caret, what was expected', async () => {
  const res = await cql('select * GameScore limit 10');
  assert.equal(res.status, 400);
  assert.deepEqual(res.body, {
    code: 300,
    error: 'CQL syntax error.Detail: Parse error at line 1, column 10:\nselect * GameScore limit 10\n         ^\nExpected one of:\n,\nfrom\n\n',
  });
  for (const bad of ['', 'select', 'select * from', "select * from GameScore where name = 'open", 'select * from GameScore; drop table objects']) {
    const answer = await cql(bad);
    assert.equal(answer.status, 400, bad);
    assert.equal(answer.body.code, 300, bad);
  }
  const long = await cql(`select * from GameScore where name = '${'x'.repeat(4100)}'`);
  assert.deepEqual(long.body, { code: 300, error: 'CQL syntax error.Detail: a statement may be at most 4096 bytes.' });
});

test('operators of the CQL guide: != <> in, not in, exists, like, regexp, all, size, dates', async () => {
  assert.deepEqual(await names("select * from GameScore where name != 'dennis' and name <> 'catty' and score > 40"), ["it's ?", 'green']);
  assert.deepEqual(await names("select * from GameScore where name in ('dennis','catty','nobody')"), ['dennis', 'catty']);
  assert.deepEqual(await names("select * from GameScore where name not in ('dennis','catty') and score >= 50"), ["it's ?", 'green']);
  assert.deepEqual(await names('select * from GameScore where level is exists'), ['green']);
  // Not in the guide; SQL's spelling of `= null` (a missing key matches too, as in REST) and `!= null`.
  assert.deepEqual(await names('select * from GameScore where level is not null'), ['green']);
  assert.deepEqual(await names('select * from GameScore where level is null and score > 60'), ['dennis', 'catty']);
  assert.deepEqual(await names('select * from GameScore where level is not exists and score > 60'), ['dennis', 'catty']);
  assert.deepEqual(await names("select * from GameScore where name like 'dennis%'"), ['dennis', 'dennis2']);
  assert.deepEqual(await names("select * from GameScore where name like 'denni%s'"), ['dennis']);
  assert.deepEqual(await names("select * from GameScore where name like 'it''s ?'"), ["it's ?"]);
  assert.deepEqual(await names("select * from GameScore where name not like 'dennis%' and score > 40"), ['catty', "it's ?", 'green']);
  assert.deepEqual(await names("select * from GameScore where name regexp 'dennis.*'"), ['dennis', 'dennis2']);
  assert.deepEqual(await names("select * from GameScore where name not regexp 'e' and score > 40"), ['catty', "it's ?"]);
  assert.deepEqual(await names("select * from GameScore where tags = 'b'"), ['dennis', 'catty']);
  assert.deepEqual(await names("select * from GameScore where tags all ('a','b')"), ['dennis']);
  assert.deepEqual(await names('select * from GameScore where size(tags) = 1'), ['catty']);
  assert.deepEqual(await names("select * from GameScore where createdAt < date('2000-01-01T00:00:00.000Z')"), []);
  assert.deepEqual(await names('select * from GameScore where createdAt > date(?) and score = 100', ['2000-01-01T00:00:00.000Z']), ['green']);
  assert.deepEqual(await names('select * from GameScore where updatedAt <= current_timestamp() and score = 0'), ['dennis2']);
});

test('injection never reaches SQL: quotes stay inside values, placeholder values are data, never operators', async () => {
  assert.deepEqual(await names("select * from GameScore where name = '1'' OR 1=1 --'"), []);
  assert.deepEqual(await names('select * from GameScore where name = ?', ["x' OR '1'='1"]), []);
  assert.deepEqual(await names('select * from GameScore where name = ?', ["'); DROP TABLE objects; --"]), []);
  assert.deepEqual(await names("select * from GameScore where name like '%'' or ''1''=''1'"), []);
  const operator = await cql('select * from GameScore where name = ?', [{ $ne: null }]);
  assert.deepEqual([operator.status, operator.body], [400, { code: 102, error: 'A CQL value may not be an object with keys starting with $.' }]);
  const inline = await cql("select * from GameScore where name = {'$regex': '.*'}");
  assert.deepEqual([inline.status, inline.body.code], [400, 102]);
  const className = await cql('select * from `GameScore` where score > 0');
  assert.equal(className.body.code, 300);
  assert.equal((await cql('select count(*) from GameScore')).body.count, 5, 'the table is still there');
});

test('the _User rules and ACLs hold as in a REST find; a password is not a key to match on', async () => {
  const signup = await server.client.post('/1.1/users', { username: 'cqluser', password: 'secret1', email: 'cql@example.com' });
  assert.equal(signup.status, 201);
  const refused = await cql('select * from _User');
  const restRefused = await server.client.get('/1.1/classes/_User');
  assert.deepEqual([refused.status, refused.body], [403, restRefused.body]);
  const rest = await server.master.get('/1.1/classes/_User');
  const res = await cql('select * from _User', undefined, server.master);
  assert.deepEqual(res.body, { results: rest.body.results, className: '_User' });
  assert.equal(res.body.results[0].password, undefined);
  assert.equal(res.body.results[0].sessionToken, undefined);
  const byPassword = await cql("select * from _User where password = 'secret1'", undefined, server.master);
  const restByPassword = await server.master.get('/1.1/classes/_User', { query: { where: { password: 'secret1' } } });
  assert.deepEqual([byPassword.status, byPassword.body], [200, { results: [], className: '_User' }]);
  assert.deepEqual(restByPassword.body, { results: [] });
  assert.deepEqual(await names("select * from GameScore where name = 'hidden'"), []);
  const master = await cql("select name from GameScore where name = 'hidden'", undefined, server.master);
  assert.deepEqual(master.body.results.map((o: { objectId: string }) => o.objectId), [ids.hidden]);
});

test('include, subqueries, relations and geo answer as the REST query they compile to', async () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['select include post, * from Comment', { include: 'post' }],
    ['select * from Comment where post in (select * from Post where image is exists)', { where: { post: { $inQuery: { className: 'Post', where: { image: { $exists: true } } } } } }],
    ['select * from Player where name in (select name from GameScore where score > 80)', { where: { name: { $select: { query: { className: 'GameScore', where: { score: { $gt: 80 } } }, key: 'name' } } } }],
    ["select * from _User where related likes to pointer('Post', '51e3a359e4b015ead4d95ddc')", { where: { $relatedTo: { object: { __type: 'Pointer', className: 'Post', objectId: '51e3a359e4b015ead4d95ddc' }, key: 'likes' } } }],
    ['select * from Player where location near geopoint(116.4, 39.9) max 1 km', { where: { location: { $nearSphere: { __type: 'GeoPoint', latitude: 39.9, longitude: 116.4 }, $maxDistanceInKilometers: 1 } } }],
    ['select * from Player where location within [116.33, 39.97] and [116.37, 39.99]', { where: { location: { $within: { $box: [{ __type: 'GeoPoint', latitude: 39.97, longitude: 116.33 }, { __type: 'GeoPoint', latitude: 39.99, longitude: 116.37 }] } } } }],
  ];
  for (const [statement, query] of cases) {
    const className = /from (\w+)/.exec(statement)![1];
    const rest = await server.client.get(`/1.1/classes/${className}`, { query });
    const res = await cql(statement);
    if (rest.status === 200) assert.deepEqual(res.body, { results: rest.body.results, className }, statement);
    else assert.deepEqual([res.status, res.body], [rest.status, rest.body], statement);
  }
});

test('subqueries select through the find path, under the caller\'s ACL', async () => {
  assert.deepEqual(await names('select * from GameScore where name in (select name from GameScore where score > 80)'), ['dennis', 'green']);
  assert.deepEqual(await names('select * from GameScore where name = (select name from GameScore where score > ?)', [80]), ['dennis', 'green']);
  assert.deepEqual(await names('select * from GameScore where name != (select name from GameScore where score <= 80) and score > 40'), ['dennis', 'green']);
  assert.deepEqual(await names('select * from GameScore where name not in (select name from GameScore where score < 100)'), ['green']);
  const tooMany = await cql('select * from GameScore where name in (select name, score from GameScore)');
  assert.deepEqual([tooMany.status, tooMany.body], [400, { code: 300, error: 'CQL syntax error.Detail: a subquery must select one key (select name from …).' }]);
});

test('geo (near with min/max, within) and relations (related … to pointer(…)) select what REST selects', async () => {
  const point = (longitude: number, latitude: number) => ({ __type: 'GeoPoint', latitude, longitude });
  const places = [['here', point(116.4, 39.9)], ['near', point(116.405, 39.9)], ['far', point(117.4, 39.9)]] as const;
  const requests = places.map(([name, location]) => ({ method: 'POST', path: '/1.1/classes/Place', body: { name, location } }));
  await server.client.post('/1.1/batch', { requests });
  const placeNames = async (statement: string, pvalues?: unknown[]) => (await names(statement, pvalues)).join(',');
  assert.equal(await placeNames('select * from Place where location near geopoint(116.4, 39.9) max 1 km'), 'here,near');
  assert.equal(await placeNames('select * from Place where location near [116.4, 39.9] min 0.1 km max 1000 km'), 'near,far');
  assert.equal(await placeNames('select * from Place where location near ? max 1 km', [point(117.4, 39.9)]), 'far');
  assert.equal(await placeNames('select * from Place where location within [116.3, 39.8] and [116.41, 40.0]'), 'here,near');

  const fans = (await server.client.post('/1.1/batch', { requests: ['a', 'b', 'c'].map((name) => ({ method: 'POST', path: '/1.1/classes/Fan', body: { name } })) })).body as Array<{ success: { objectId: string } }>;
  const liked = fans.slice(0, 2).map((fan) => ({ __type: 'Pointer', className: 'Fan', objectId: fan.success.objectId }));
  const post = await server.client.post('/1.1/classes/Post', { likes: { __op: 'AddRelation', objects: liked } });
  assert.equal(post.status, 201, JSON.stringify(post.body));
  assert.deepEqual(await names("select * from Fan where related likes to pointer('Post', ?) order by name", [post.body.objectId]), ['a', 'b']);
});

test('POST with a JSON body answers as GET (insert, update and delete: test/cql-writes.test.ts)', async () => {
  const res = await server.client.post('/1.1/cloudQuery', { cql: 'select count(*) from GameScore where score > ?', pvalues: [60] });
  assert.deepEqual([res.status, res.body], [200, { results: [], className: 'GameScore', count: 3 }]);
});
