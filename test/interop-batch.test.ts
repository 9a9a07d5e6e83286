// Batch and multi-object writes through the official JavaScript SDK (npm leancloud-storage), as apps
// call them (issue #15 point 5). Before: AV.Object.destroyAll of five or more objects failed with
// "A path segment is too long." (one batch item whose path joins every id with commas).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { rejection, sdkServer } from './helpers/sdk.ts';
import { uniqueName } from './helpers/accounts.ts';

sdkServer();

function items(className: string, count: number): AV.Object[] {
  return Array.from({ length: count }, (_, n) => new AV.Object(className).set({ n }));
}

test('saveAll of 60 objects, then destroyAll of the 60: one DELETE path with 60 ids', async () => {
  const saved = items('Bulk', 60);
  await AV.Object.saveAll(saved);
  assert.equal(new Set(saved.map((o) => o.id)).size, 60);
  assert.equal(await new AV.Query('Bulk').count(), 60);

  const copies = saved.map((o) => AV.Object.createWithoutData('Bulk', o.id as string));
  await AV.Object.fetchAll(copies);
  assert.deepEqual(copies.map((o) => o.get('n')), Array.from({ length: 60 }, (_, n) => n));

  await AV.Object.destroyAll(saved);
  assert.equal(await new AV.Query('Bulk').count(), 0);
});

test('destroyAll across classes sends one item per class; Query#destroyAll deletes a whole page', async () => {
  const mixed = [...items('BulkA', 30), ...items('BulkB', 30)];
  await AV.Object.saveAll(mixed);
  await AV.Object.destroyAll(mixed);
  assert.deepEqual([await new AV.Query('BulkA').count(), await new AV.Query('BulkB').count()], [0, 0]);

  // query.limit(1000).destroyAll(): every object of the page in one path (1,000 ids: test/batch-multi.test.ts).
  await AV.Object.saveAll(items('BulkPage', 150));
  assert.equal(await new AV.Query('BulkPage').count(), 150);
  await new AV.Query('BulkPage').limit(1000).destroyAll();
  assert.equal(await new AV.Query('BulkPage').count(), 0);
});

test('saveAll updates existing objects; destroyAll of already deleted objects succeeds', async () => {
  const saved = items('BulkUpdate', 10);
  await AV.Object.saveAll(saved);
  for (const o of saved) o.increment('n', 100);
  await AV.Object.saveAll(saved);
  const fetched = await new AV.Query('BulkUpdate').ascending('n').find();
  assert.deepEqual(fetched.map((o) => o.get('n')), Array.from({ length: 10 }, (_, n) => n + 100));
  await AV.Object.destroyAll(saved);
  await AV.Object.destroyAll(saved);
  assert.equal(await new AV.Query('BulkUpdate').count(), 0);
});

test("ACLs per object: destroyAll deletes what the user may and fails with the refusal's 403", async () => {
  const owner = new AV.User();
  owner.setUsername(uniqueName('bulk'));
  owner.setPassword('bulk-password');
  await owner.signUp();
  const mine = items('BulkAcl', 3).map((o) => {
    const acl = new AV.ACL();
    acl.setReadAccess(owner, true);
    acl.setWriteAccess(owner, true);
    acl.setPublicReadAccess(true);
    return o.setACL(acl);
  });
  await AV.Object.saveAll(mine);
  await AV.User.logOut();
  const open = items('BulkAcl', 3);
  await AV.Object.saveAll(open);

  const refused = await rejection(AV.Object.destroyAll([...open, ...mine]));
  assert.deepEqual([refused.code, refused.message], [403, "Forbidden writing by object's ACL."]);
  const left = await new AV.Query('BulkAcl').find();
  assert.deepEqual(left.map((o) => o.id).sort(), mine.map((o) => o.id).sort());

  await AV.User.logIn(owner.getUsername(), 'bulk-password');
  await AV.Object.destroyAll(mine);
  assert.equal(await new AV.Query('BulkAcl').count(), 0);
  await AV.User.logOut();
});

test('saveAll with a missing object fails with code 1 while the other objects are saved', async () => {
  const real = new AV.Object('BulkPartial').set('v', 1);
  await real.save();
  real.set('v', 2);
  const ghost = AV.Object.createWithoutData('BulkPartial', 'fakeid').set('v', 3);
  const failed = await rejection(AV.Object.saveAll([ghost, real]));
  assert.deepEqual([failed.code, failed.message], [1, "Could not find object by id 'fakeid' for class 'BulkPartial'."]);
  const reread = await new AV.Query('BulkPartial').get(real.id as string);
  assert.equal(reread.get('v'), 2);
});

test('what Roost lacks fails through the SDK with an error naming it (README "Not supported (yet)")', async () => {
  const cloud = await rejection(AV.Cloud.run('hello', {}));
  assert.deepEqual([cloud.code, cloud.message], [404, 'Not supported yet: cloud functions (POST /1.1/functions/…).']);
  const conversations = await rejection(new AV.Query('_Conversation').find());
  assert.deepEqual([conversations.code, conversations.message], [1, 'Not supported yet: instant messaging (_Conversation).']);
});
