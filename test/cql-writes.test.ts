// CQL insert, update and delete (/1.1/cloudQuery; CQL guide "insert", "update", "delete"): each the REST
// write it stands for, through the same class service (ACL, schema, class rules), answered as
// {"results":[…],"className":"X"}; update and delete name one object by `objectId = …`.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import type { Client } from './helpers/client.ts';

let server: TestServer;

before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
});

function cql(statement: string, pvalues?: unknown[], client: Client = server.client) {
  return client.get('/1.1/cloudQuery', { query: pvalues ? { cql: statement, pvalues } : { cql: statement } });
}

const isoDate = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test('insert creates one object per row, with placeholders and functions, answered as creates are', async () => {
  const res = await cql("insert into Player(name, age, team, born) values(?, 2, pointer('Team', 't1'), date('2020-01-02T03:04:05.006Z'))", ['LeanCloud']);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['results', 'className']);
  assert.equal(res.body.className, 'Player');
  assert.equal(res.body.results.length, 1);
  const [created] = res.body.results;
  assert.deepEqual(Object.keys(created), ['objectId', 'createdAt']);
  assert.match(created.createdAt, isoDate);
  const got = await server.client.get(`/1.1/classes/Player/${created.objectId}`);
  assert.deepEqual(
    { name: got.body.name, age: got.body.age, team: got.body.team, born: got.body.born, createdAt: got.body.createdAt },
    {
      name: 'LeanCloud',
      age: 2,
      team: { __type: 'Pointer', className: 'Team', objectId: 't1' },
      born: { __type: 'Date', iso: '2020-01-02T03:04:05.006Z' },
      createdAt: created.createdAt,
    },
  );

  const two = await cql("insert into Player(name, age) values ('a', 1), ('b', ?)", [3]);
  assert.equal(two.status, 200, JSON.stringify(two.body));
  assert.equal(two.body.results.length, 2);
  const names = await server.client.get('/1.1/classes/Player', { query: { where: { objectId: { $in: two.body.results.map((r: { objectId: string }) => r.objectId) } }, order: 'name' } });
  assert.deepEqual(names.body.results.map((o: { name: string; age: number }) => [o.name, o.age]), [['a', 1], ['b', 3]]);
});

test('insert follows the class schema and the ACL given, as a REST create does', async () => {
  assert.equal((await cql("insert into Typed(score) values(1)")).status, 200);
  const wrong = await cql("insert into Typed(score) values('high')");
  const rest = await server.client.post('/1.1/classes/Typed', { score: 'high' });
  assert.deepEqual([wrong.status, wrong.body], [400, { code: 111, error: `Invalid value type for field 'score',expect type is {:type "Number"},but it is '{:type "String"}'.` }]);
  assert.deepEqual([wrong.status, wrong.body], [rest.status, rest.body]);

  const hidden = await cql('insert into Typed(score, ACL) values(2, ?)', [{}]);
  assert.equal(hidden.status, 200);
  assert.deepEqual((await server.client.get(`/1.1/classes/Typed/${hidden.body.results[0].objectId}`)).body, {});
  assert.equal((await server.master.get(`/1.1/classes/Typed/${hidden.body.results[0].objectId}`)).body.score, 2);
});

test('update sets values and op() operations on the object named by objectId, answered as updates are', async () => {
  const created = (await server.client.post('/1.1/classes/Account', { owner: 'x', amount: 120, tags: ['a'] })).body;
  const res = await cql("update Account set owner=?, amount=op('Decrement', {'amount': 50}), tags=op('Add', {'objects': ['b']}) where objectId=?", ['y', created.objectId]);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['results', 'className']);
  assert.equal(res.body.className, 'Account');
  assert.deepEqual(Object.keys(res.body.results[0]), ['objectId', 'updatedAt']);
  assert.equal(res.body.results[0].objectId, created.objectId);
  const got = (await server.client.get(`/1.1/classes/Account/${created.objectId}`)).body;
  assert.deepEqual([got.owner, got.amount, got.tags, got.updatedAt], ['y', 70, ['a', 'b'], res.body.results[0].updatedAt]);
});

test('the rest of the where is a condition: not met, the write is refused with 305 and nothing changes', async () => {
  const created = (await server.client.post('/1.1/classes/Account', { amount: 70 })).body;
  const statement = "update Account set amount=op('Decrement', {'amount': 50}) where objectId=? and amount>=100";
  const refused = await cql(statement, [created.objectId]);
  const rest = await server.client.put(`/1.1/classes/Account/${created.objectId}`, { amount: { __op: 'Decrement', amount: 50 } }, { query: { where: { amount: { $gte: 100 } } } });
  assert.deepEqual([refused.status, refused.body], [400, { code: 305, error: 'No effect on updating/deleting a document.' }]);
  assert.deepEqual([refused.status, refused.body], [rest.status, rest.body]);
  assert.equal((await server.client.get(`/1.1/classes/Account/${created.objectId}`)).body.amount, 70);
  // The objectId may come anywhere in the and.
  const met = await cql("update Account set amount=1 where amount < 100 and objectId=?", [created.objectId]);
  assert.equal(met.status, 200, JSON.stringify(met.body));
  assert.equal((await server.client.get(`/1.1/classes/Account/${created.objectId}`)).body.amount, 1);

  const kept = await cql('delete from Account where objectId=? and amount > 5', [created.objectId]);
  assert.deepEqual([kept.status, kept.body.code], [400, 305]);
  assert.equal((await server.client.get(`/1.1/classes/Account/${created.objectId}`)).body.amount, 1);
});

test('delete removes the object named by objectId and answers no results', async () => {
  const created = (await server.client.post('/1.1/classes/Account', { amount: 3 })).body;
  const res = await cql('delete from Account where objectId=?', [created.objectId]);
  assert.deepEqual([res.status, res.body], [200, { results: [], className: 'Account' }]);
  assert.deepEqual((await server.client.get(`/1.1/classes/Account/${created.objectId}`)).body, {});
});

test('writes follow the ACL: an object only its owner may write is refused to others, as REST refuses it', async () => {
  const owner = (await server.client.post('/1.1/users', { username: 'cql-owner', password: 'secret1' })).body;
  const ownerClient = server.client.withSession(owner.sessionToken);
  const created = (await ownerClient.post('/1.1/classes/Diary', { text: 'mine', ACL: { [owner.objectId]: { read: true, write: true } } })).body;

  const update = await cql("update Diary set text='theirs' where objectId=?", [created.objectId]);
  const restUpdate = await server.client.put(`/1.1/classes/Diary/${created.objectId}`, { text: 'theirs' });
  assert.equal(update.status >= 400, true);
  assert.deepEqual([update.status, update.body], [restUpdate.status, restUpdate.body]);
  const remove = await cql('delete from Diary where objectId=?', [created.objectId]);
  const restRemove = await server.client.delete(`/1.1/classes/Diary/${created.objectId}`);
  assert.equal(remove.status >= 400, true);
  assert.deepEqual([remove.status, remove.body], [restRemove.status, restRemove.body]);
  assert.equal((await ownerClient.get(`/1.1/classes/Diary/${created.objectId}`)).body.text, 'mine');

  const byOwner = await cql("update Diary set text='still mine' where objectId=?", [created.objectId], ownerClient);
  assert.equal(byOwner.status, 200, JSON.stringify(byOwner.body));
  assert.equal((await ownerClient.get(`/1.1/classes/Diary/${created.objectId}`)).body.text, 'still mine');
});

test("built-in classes keep their own rules: _File is not written as an object, _Installation is deleted with the master key only", async () => {
  const file = await cql("insert into _File(name) values('a.txt')");
  const restFile = await server.client.post('/1.1/classes/_File', { name: 'a.txt' });
  assert.deepEqual([file.status, file.body], [restFile.status, restFile.body]);
  assert.equal(file.status, 403);

  const installation = await cql("insert into _Installation(installationId, deviceType) values('cql-inst', 'android')");
  assert.equal(installation.status, 200, JSON.stringify(installation.body));
  const id = installation.body.results[0].objectId;
  const refused = await cql('delete from _Installation where objectId=?', [id]);
  const restRefused = await server.client.delete(`/1.1/installations/${id}`);
  assert.deepEqual([refused.status, refused.body], [restRefused.status, restRefused.body]);
  assert.equal(refused.status, 403);
  const deleted = await cql('delete from _Installation where objectId=?', [id], server.master);
  assert.deepEqual([deleted.status, deleted.body], [200, { results: [], className: '_Installation' }]);
});

test('update and delete must name their object; op() is a write value only; a bad write is a syntax error', async () => {
  const named = { code: 102, error: 'CQL update and delete write one object: the where must hold objectId = <id> (and-ed with any other condition).' };
  for (const statement of ['update Account set amount=1 where amount > 5', "delete from Account where objectId='a' or amount > 5", "delete from Account where objectId != 'a'"]) {
    const res = await cql(statement);
    assert.deepEqual([res.status, res.body], [400, named], statement);
  }
  for (const statement of ['delete from Account', 'update Account set amount=1', 'insert into Account(a, b) values(1)', 'insert into Account(a) values']) {
    const res = await cql(statement);
    assert.deepEqual([res.status, res.body.code], [400, 300], statement);
  }
  const inQuery = await cql("select * from Account where amount = op('Increment', {'amount': 1})");
  assert.deepEqual([inQuery.status, inQuery.body.code], [400, 300]);
  const columns = await cql('insert into Account(a, b) values(1)');
  assert.match(columns.body.error, /row 1 has 1 values for 2 columns/);
});
