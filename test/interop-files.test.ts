// Files through the official JavaScript SDK (npm leancloud-storage; issue #20): new AV.File(name, buffer).save()
// (fileTokens, the s3 uploader's PUT, fileCallback), AV.File.withURL, a user's avatar saved and read back as an
// AV.File, File#fetch and #destroy, and `new AV.Query(AV.File)` (the recorded "#File Query").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AV from 'leancloud-storage';
import { sdkServer } from './helpers/sdk.ts';

const server = sdkServer({ env: { FILES_DIR: mkdtempSync(join(tmpdir(), 'roost-sdk-files-')) } });

test('new AV.File(name, buffer).save() uploads the bytes, which the url serves', async () => {
  const file = await new AV.File('buffer-test.txt', Buffer.from('hello world')).save();
  assert.match(file.id as string, /^[0-9a-f]{24}$/);
  assert.equal(file.size(), 11);
  assert.equal(file.ownerId(), 'unknown');
  assert.equal(file.get('mime_type'), 'text/plain');
  const served = await fetch(file.url());
  assert.equal(await served.text(), 'hello world');
  const fetched = await AV.File.createWithoutData(file.id as string).fetch();
  assert.equal(fetched.name(), 'buffer-test.txt');
  assert.equal(fetched.url(), file.url());
  assert.equal(fetched.metaData('size'), 11);
});

test('AV.File.withURL saves a record of an external URL', async () => {
  const url = 'http://i1.wp.com/blog.avoscloud.com/wp-content/uploads/2014/05/screen568x568-1.jpg?resize=202%2C360';
  const file = await AV.File.withURL('screen.jpg', url).save();
  assert.ok(file.id);
  assert.equal(file.metaData('__source'), 'external');
  const fetched = await AV.File.createWithoutData(file.id as string).fetch();
  assert.equal(fetched.url(), url);
  assert.equal(fetched.get('mime_type'), 'image/jpeg');
});

test("a user's avatar is saved and read back as an AV.File", async () => {
  const user = new AV.User();
  user.setUsername(`avatar-${Date.now()}`);
  user.setPassword('secret-pass');
  await user.signUp();
  const avatar = await new AV.File('avatar.png', Buffer.from([0x89, 0x50, 0x4e, 0x47])).save();
  assert.equal(avatar.ownerId(), user.id);
  user.set('avatar', avatar);
  await user.save();
  const read = await new AV.Query(AV.User).get(user.id as string);
  const back = read.get('avatar') as AV.File;
  assert.ok(back instanceof AV.File);
  assert.equal(back.id, avatar.id);
  assert.equal(back.url(), avatar.url());
  assert.equal(back.size(), 4);
  assert.equal(back.get('mime_type'), 'image/png');
  // A PNG of one pixel: its thumbnail is no larger (mode 2 never enlarges).
  const pixel = await new AV.File('pixel.png', Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64')).save();
  const thumb = await fetch(pixel.thumbnailURL(20, 20));
  assert.deepEqual([thumb.status, thumb.headers.get('content-type')], [200, 'image/png']);
  assert.deepEqual([...Buffer.from(await (await fetch(back.url())).arrayBuffer())], [0x89, 0x50, 0x4e, 0x47]);
  const post = await new AV.Object('SdkFilePost', { author: read, attachments: [avatar] }).save();
  const withAuthor = await new AV.Query('SdkFilePost').include('author').get(post.id as string);
  const included = (withAuthor.get('author') as AV.User).get('avatar') as AV.File;
  assert.ok(included instanceof AV.File);
  assert.equal(included.url(), avatar.url());
  assert.ok((withAuthor.get('attachments') as AV.File[])[0] instanceof AV.File);
  await AV.User.logOut();
});

test('File#destroy removes the record and the bytes', async () => {
  const file = await new AV.File('doomed.txt', Buffer.from('bye')).save();
  assert.equal((await fetch(file.url())).status, 200);
  await file.destroy();
  assert.equal((await fetch(file.url())).status, 404);
  assert.equal(await new AV.Query(AV.File).equalTo('objectId', file.id).count(), 0);
});

test('new AV.Query(AV.File) answers AV.File objects (the recorded "#File Query")', async () => {
  const file = await new AV.File('myfile.txt', Buffer.from('leancloud')).save();
  const [found] = await new AV.Query(AV.File).equalTo('objectId', file.id).find();
  assert.ok(found instanceof AV.File);
  assert.equal(found.id, file.id);
  assert.equal(found.name(), 'myfile.txt');
  assert.equal(found.get('mime_type'), 'text/plain');
  assert.equal(found.url(), file.url());
  const all = await new AV.Query(AV.File).find();
  assert.ok(all.length > 0 && all.every((one) => one instanceof AV.File && one.get('metaData')));
  assert.ok(server().url);
});
