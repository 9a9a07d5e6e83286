// `roost schema show|set|default` (src/schema-command.ts): the class schemas from a shell, as GET and
// PUT /1.1/schemas do; a default set there fills the next create over HTTP.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { roostCli } from './helpers/cli.ts';

let database: TestDatabase;
let server: TestServer;
const roost = (...args: string[]) => roostCli({ ...database.env, ROOST_SECRET: server.config.secret }, ...args);
const serverFields = { objectId: { type: 'String' }, ACL: { type: 'ACL' }, createdAt: { type: 'Date' }, updatedAt: { type: 'Date' } };

before(async () => {
  database = await testDatabase();
  // Defaults are re-read at every create, so the CLI's change shows at once.
  server = await startServer({ database, env: { APP_CACHE_MS: '0' } });
});
after(async () => {
  await server?.close();
  await database?.drop();
});

test('schema set declares types and defaults; show prints them; creates get the default; --clear removes it', async () => {
  await server.client.post('/1.1/classes/Cli', { title: 'a' });
  const set = await roost('schema', 'set', '--app', server.appId, 'Cli', '{"views": {"type": "Number", "default": 0}, "owner": {"type": "Pointer", "className": "_User"}}');
  assert.equal(set.code, 0, set.stderr);
  const expected = { ...serverFields, owner: { type: 'Pointer', className: '_User' }, title: { type: 'String' }, views: { type: 'Number', default: 0 } };
  assert.deepEqual(JSON.parse(set.stdout), expected);
  const shown = await roost('schema', 'show', '--app', server.appId, 'Cli');
  assert.deepEqual([shown.code, JSON.parse(shown.stdout)], [0, expected]);
  const all = await roost('schema', 'show', '--app', server.appId);
  assert.deepEqual(JSON.parse(all.stdout).Cli, expected);
  assert.deepEqual(JSON.parse(all.stdout), (await server.master.get('/1.1/schemas')).body);

  const created = await server.client.post('/1.1/classes/Cli', { title: 'b' });
  assert.equal((await server.client.get(`/1.1/classes/Cli/${created.body.objectId}`)).body.views, 0);
  const titled = await roost('schema', 'default', '--app', server.appId, 'Cli', 'title', '"untitled"');
  assert.deepEqual(JSON.parse(titled.stdout).title, { type: 'String', default: 'untitled' });
  const cleared = await roost('schema', 'default', '--app', server.appId, 'Cli', 'views', '--clear');
  assert.deepEqual(JSON.parse(cleared.stdout).views, { type: 'Number' });
  const later = await server.client.post('/1.1/classes/Cli', {});
  const read = (await server.client.get(`/1.1/classes/Cli/${later.body.objectId}`)).body;
  assert.deepEqual([read.title, read.views], ['untitled', undefined]);
});

test('schema: a refusal exits 1 with the catalogue message, a usage error 2', async () => {
  const wrong = await roost('schema', 'default', '--app', server.appId, 'Cli', 'title', '5');
  assert.deepEqual([wrong.code, wrong.stderr], [1, 'roost: Invalid value type for field \'title\',expect type is {:type "String"},but it is \'{:type "Number"}\'. (code 111)\n']);
  const missing = await roost('schema', 'show', '--app', server.appId, 'NoSuchClass');
  assert.deepEqual([missing.code, missing.stderr], [1, "roost: Class or object doesn't exists. (code 101)\n"]);
  const noApp = await roost('schema', 'show', '--app', 'nope');
  assert.deepEqual([noApp.code, noApp.stderr], [1, 'roost: no application with id nope\n']);
  assert.equal((await roost('schema', 'set', '--app', server.appId, 'Cli', '{not json')).code, 2);
  assert.equal((await roost('schema', 'show', 'Cli')).code, 2);
  assert.equal((await roost('schema', 'drop', '--app', server.appId)).code, 2);
});
