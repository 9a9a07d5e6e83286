// Keep your keys (#15, 1), as an app in the field sees it: the official JavaScript SDK (leancloud-storage),
// initialised with the appId, appKey and master key the app had on the hosted service, talks to a Roost
// whose application was created with those keys by `roost import --create-app`. The SDK signs every
// request (X-LC-Sign with the app key, or with the master key and ",master" for useMasterKey).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AV from 'leancloud-storage';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { roostCli } from './helpers/cli.ts';
import { exportUser, type ExportUser } from './helpers/export.ts';
import { initSdk, rejection } from './helpers/sdk.ts';

// A China North app of the hosted service: its id ends with the region suffix.
const kept = { appId: '60c4e2f1a7b8c9d0e1f2a3b4-gzGzoHsz', appKey: 'Rw4Nq8Ls2Xv6Bt9Kp3Hm7Jd1', masterKey: 'Cf6Yh1Tz5Ug9Qe3Wa7Oi2Mn8' };

let database: TestDatabase;
let server: TestServer;
let dir: string;
const users: ExportUser[] = [];

before(async () => {
  database = await testDatabase();
  server = await startServer({ database });
  dir = mkdtempSync(join(tmpdir(), 'roost-interop-keys-'));
  for (let n = 0; n < 2; n++) users.push(exportUser(n));
  const post = { objectId: 'post00000000000000000001', title: 'from the hosted service', ACL: { '*': { read: true } }, createdAt: '2021-01-01T00:00:00.000Z' };
  writeFileSync(join(dir, '_User.jsonl'), users.map((u) => u.line).join('\n') + '\n');
  writeFileSync(join(dir, 'Post.jsonl'), JSON.stringify(post) + '\n');
  const { code, stderr } = await roostCli(
    { ...database.env, ROOST_SECRET: server.config.secret },
    'import', '--create-app', '--app-id', kept.appId, '--app-key', kept.appKey, '--master-key', kept.masterKey, dir,
  );
  assert.equal(code, 0, stderr);
  initSdk({ ...kept, url: server.url });
});

after(async () => {
  await AV.User.logOut();
  await server?.close();
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('an imported user logs in with the old password; the SDK reads and writes with the kept app key', async () => {
  const user = await AV.User.logIn(users[0].username, users[0].password);
  assert.equal(user.id, users[0].objectId);
  assert.equal(user.getSessionToken(), users[0].sessionToken, 'the session token the phone had cached');
  assert.equal(user.get('email'), 'user0@example.com');

  const posts = await new AV.Query('Post').find();
  assert.deepEqual(posts.map((post) => [post.id, post.get('title')]), [['post00000000000000000001', 'from the hosted service']]);
  const note = new AV.Object('Note');
  note.set('text', 'written after the move');
  note.setACL(new AV.ACL(user));
  await note.save();
  const read = await new AV.Query('Note').get(note.id as string);
  assert.equal(read.get('text'), 'written after the move');
});

test('a phone that was signed in keeps its session: become() with the exported token', async () => {
  await AV.User.logOut();
  const current = await AV.User.become(users[1].sessionToken);
  assert.equal(current.id, users[1].objectId);
  assert.equal((await AV.User.currentAsync())?.id, users[1].objectId);
});

test('useMasterKey signs with the kept master key; without it, the app key cannot query users', async () => {
  await AV.User.logOut();
  const all = await new AV.Query('_User').ascending('createdAt').find({ useMasterKey: true });
  assert.deepEqual(all.map((user) => user.id), users.map((user) => user.objectId));
  const refused = await rejection(new AV.Query('_User').find());
  assert.equal(refused.code, 403);
});
