// include (issue #16 point 1) through the official JavaScript SDK (npm leancloud-storage): Query#include,
// AV.Object#fetch({include}) with an array and with the old comma string, nested paths, arrays of pointers,
// select on an included object, includeACL; what the SDK builds from the answers (reference §8).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { sdkServer } from './helpers/sdk.ts';
import { uniqueName } from './helpers/accounts.ts';

sdkServer();

const fields = (object: unknown) => (object as AV.Object).toJSON() as Record<string, unknown>;

test('Query#include and Query#get: the pointer comes back as an AV.Object with its fields', async () => {
  const author = await new AV.Object('SdkPerson', { name: 'Rui', company: 'roost' }).save();
  await new AV.Object('SdkBook', { title: 'Roost', author }).save();
  const [book] = await new AV.Query('SdkBook').include('author').find();
  const got = book.get('author') as AV.Object;
  assert.ok(got instanceof AV.Object);
  assert.equal(got.className, 'SdkPerson');
  assert.equal(got.id, author.id);
  assert.deepEqual([got.get('name'), got.get('company')], ['Rui', 'roost']);
  assert.equal(got.createdAt?.getTime(), author.createdAt?.getTime());
  const byGet = await new AV.Query('SdkBook').include(['author']).get(book.id as string);
  assert.equal((byGet.get('author') as AV.Object).get('name'), 'Rui');
  // Without include the pointer has its id only.
  const bare = await new AV.Query('SdkBook').get(book.id as string);
  assert.equal((bare.get('author') as AV.Object).get('name'), undefined);
});

test('AV.Object#fetch({include}): an array of keys, and the old comma string with a blank after the comma', async () => {
  const author1 = await new AV.Object('SdkPerson', { name: '1' }).save();
  const author2 = await new AV.Object('SdkPerson', { name: '2' }).save();
  const post = await new AV.Object('SdkPost', { author1, author2 }).save();
  for (const include of [['author1', 'author2'], 'author1, author2']) {
    const copy = AV.Object.createWithoutData('SdkPost', post.id as string);
    await copy.fetch({ include: include as string[] });
    assert.deepEqual([(copy.get('author1') as AV.Object).get('name'), (copy.get('author2') as AV.Object).get('name')], ['1', '2'], String(include));
  }
});

test('nested include (comment.post.author), arrays of pointers, and select on an included object', async () => {
  const author = await new AV.Object('SdkPerson', { name: 'deep', age: 40 }).save();
  const post = await new AV.Object('SdkPost', { title: 'p', author }).save();
  const files = [await new AV.Object('SdkFile', { name: 'a' }).save(), await new AV.Object('SdkFile', { name: 'b' }).save()];
  const comment = await new AV.Object('SdkComment', { text: 'c', post, files }).save();

  const nested = await new AV.Query('SdkComment').include('post.author').get(comment.id as string);
  const gotPost = nested.get('post') as AV.Object;
  assert.equal(gotPost.get('title'), 'p');
  assert.deepEqual([(gotPost.get('author') as AV.Object).get('name'), (gotPost.get('author') as AV.Object).get('age')], ['deep', 40]);

  const withFiles = await new AV.Query('SdkComment').include('files').get(comment.id as string);
  assert.deepEqual((withFiles.get('files') as AV.Object[]).map((file) => [file.className, file.get('name')]), [['SdkFile', 'a'], ['SdkFile', 'b']]);

  const selected = await new AV.Query('SdkComment').include('post').select(['post.title']).get(comment.id as string);
  assert.equal(selected.get('text'), undefined);
  assert.deepEqual(Object.keys(fields(selected.get('post'))).sort(), ['createdAt', 'objectId', 'title', 'updatedAt']);
});

test('includeACL covers included objects; an included user has no session token; an unreadable target stays a pointer', async () => {
  const username = uniqueName('sdkinc');
  const user = await AV.User.signUp(username, 'pw-include-1');
  const privateAcl = new AV.ACL();
  privateAcl.setReadAccess(user.id as string, true);
  privateAcl.setWriteAccess(user.id as string, true);
  const secret = await new AV.Object('SdkSecret', { note: 'mine' }).setACL(privateAcl).save();
  const note = await new AV.Object('SdkNote', { owner: user, secret }).save();

  // Query#get never sends includeACL (the SDK reads it under the wrong name): find does.
  const [mine] = await new AV.Query('SdkNote').equalTo('objectId', note.id).include('owner', 'secret').includeACL(true).find();
  const owner = mine.get('owner') as AV.User;
  assert.equal(owner.get('username'), username);
  assert.equal(owner.getSessionToken(), undefined);
  assert.equal((mine.get('secret') as AV.Object).get('note'), 'mine');
  assert.equal((mine.get('secret') as AV.Object).getACL()?.getReadAccess(user.id as string), true);
  assert.equal((mine.get('secret') as AV.Object).getACL()?.getPublicReadAccess(), false);

  await AV.User.logOut();
  const theirs = await new AV.Query('SdkNote').include('owner', 'secret').get(note.id as string);
  assert.equal((theirs.get('owner') as AV.User).get('username'), username);
  assert.equal((theirs.get('owner') as AV.User).getSessionToken(), undefined);
  assert.equal((theirs.get('secret') as AV.Object).id, secret.id);
  assert.equal((theirs.get('secret') as AV.Object).get('note'), undefined);
});
