// The official JavaScript SDK (npm leancloud-storage) against the hosted answer shapes (issue #15 point 4):
// fetchWhenSave on save and saveAll, includeACL on the default ACL, user updates, password and token calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { sdkServer } from './helpers/sdk.ts';
import { uniqueName } from './helpers/accounts.ts';

const running = sdkServer();

async function newUser(): Promise<AV.User> {
  const user = new AV.User();
  user.setUsername(uniqueName('shapes'));
  user.setPassword('shapes-password');
  await user.signUp();
  return user;
}

test('fetchWhenSave: the touched fields come back at their server values, the others stay as the client has them', async () => {
  await AV.User.logOut();
  const counter = new AV.Object('ShapeCounter');
  counter.set({ n: 1, label: 'one' });
  await counter.save(null, { fetchWhenSave: true });
  assert.equal(counter.get('n'), 1);
  assert.ok(counter.createdAt instanceof Date);

  // Another client moves n and changes label meanwhile.
  const elsewhere = await running().client.put(`/1.1/classes/ShapeCounter/${counter.id}`, { n: { __op: 'Increment', amount: 5 }, label: 'six' });
  assert.equal(elsewhere.status, 200, elsewhere.text);
  const before = counter.updatedAt as Date;
  counter.increment('n', 1);
  await counter.save(null, { fetchWhenSave: true });
  assert.equal(counter.get('n'), 7);
  // Only the touched field is answered, as the hosted service did: label keeps the client's value.
  assert.equal(counter.get('label'), 'one');
  assert.ok((counter.updatedAt as Date).getTime() >= before.getTime());

  // saveAll sends fetchWhenSave as each batch sub-request's param.
  const other = new AV.Object('ShapeCounter');
  other.set({ n: 10 });
  await other.save();
  await running().client.put(`/1.1/classes/ShapeCounter/${other.id}`, { n: { __op: 'Increment', amount: 10 } });
  counter.increment('n', 1);
  other.increment('n', 1);
  await AV.Object.saveAll([counter, other], { fetchWhenSave: true });
  assert.deepEqual([counter.get('n'), other.get('n')], [8, 21]);
});

test('includeACL: an object saved without an ACL has the public default, in a query and a fetch', async () => {
  await AV.User.logOut();
  const post = new AV.Object('ShapePlain');
  post.set('title', 'no acl');
  await post.save();
  const found = await new AV.Query('ShapePlain').equalTo('objectId', post.id).includeACL(true).first();
  const acl = found?.getACL();
  assert.ok(acl, 'the query returns the ACL');
  assert.deepEqual(acl.toJSON(), { '*': { read: true, write: true } });
  const fetched = await AV.Object.createWithoutData('ShapePlain', post.id as string).fetch({ includeACL: true });
  assert.deepEqual(fetched.getACL()?.toJSON(), { '*': { read: true, write: true } });
  const withoutAcl = await new AV.Query('ShapePlain').get(post.id as string);
  assert.equal(withoutAcl.getACL(), undefined);
});

test('includeACL: a class default set with the master key gives the creating user write access', async () => {
  const settings = await running().master.put('/1.1/settings', {
    classDefaultACL: { ShapeOwned: { '*': { read: true }, creator: { read: true, write: true } } },
  });
  assert.equal(settings.status, 200, settings.text);
  const owner = await newUser();
  const note = new AV.Object('ShapeOwned');
  note.set('text', 'mine');
  await note.save();
  // Query#get drops includeACL in this SDK version (it reads queryJSON.includeACL, which _getParams names returnACL).
  const read = await new AV.Query('ShapeOwned').equalTo('objectId', note.id).includeACL(true).first();
  const acl = read?.getACL();
  assert.ok(acl);
  assert.equal(acl.getPublicReadAccess(), true);
  assert.equal(acl.getPublicWriteAccess(), false);
  assert.equal(acl.getWriteAccess(owner), true);

  await AV.User.logOut();
  await newUser();
  const defaced = AV.Object.createWithoutData('ShapeOwned', note.id as string);
  defaced.set('text', 'defaced');
  await assert.rejects(defaced.save(), (error: { code: number }) => error.code === 403);
});

test('users: update, fetchWhenSave on a user, updatePassword and refreshSessionToken keep the SDK in step', async () => {
  const user = await newUser();
  user.set('nickname', 'Ana');
  await user.save();
  const updatedAt = user.updatedAt as Date;
  assert.ok(updatedAt instanceof Date);

  user.increment('visits', 3);
  await user.save(null, { fetchWhenSave: true });
  assert.equal(user.get('visits'), 3);
  assert.equal(user.get('nickname'), 'Ana');
  assert.equal(user.getUsername(), user.get('username'));

  const oldToken = user.getSessionToken();
  // updatePassword exists in the SDK but is missing from its type declarations.
  await (user as unknown as { updatePassword(old: string, next: string): Promise<unknown> }).updatePassword('shapes-password', 'shapes-password-2');
  const changedToken = user.getSessionToken();
  assert.notEqual(changedToken, oldToken);
  assert.equal((await AV.User.currentAsync())?.getSessionToken(), changedToken);

  await user.refreshSessionToken();
  const refreshed = user.getSessionToken();
  assert.notEqual(refreshed, changedToken);
  assert.equal(user.get('nickname'), 'Ana');
  const became = await AV.User.become(refreshed);
  assert.equal(became.id, user.id);
  assert.equal(became.get('visits'), 3);
  const loggedIn = await AV.User.logIn(user.getUsername(), 'shapes-password-2');
  assert.equal(loggedIn.getSessionToken(), refreshed);
});
