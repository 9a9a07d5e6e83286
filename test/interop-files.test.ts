// Files through the official JavaScript SDK (npm leancloud-storage; issue #20): new AV.File(name, buffer).save()
// (fileTokens, the s3 uploader's PUT, fileCallback), AV.File.withURL, a user's avatar saved and read back as an
// AV.File (on save, query, include, login, fetch and become), File#fetch and #destroy, `new AV.Query(AV.File)`
// (the recorded "#File Query") and `new AV.Query('_File')`, files whose size the SDK does not know (base64, a
// Node stream), and save({keepFileName: true}).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AV from 'leancloud-storage';
import { sdkServer } from './helpers/sdk.ts';

const scratch = mkdtempSync(join(tmpdir(), 'roost-sdk-files-'));
const server = sdkServer({ env: { FILES_DIR: join(scratch, 'files') } });
after(() => rmSync(scratch, { recursive: true, force: true }));

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

test("new AV.Query('_File') answers _File objects the SDK keeps as AV.Object; first() and scan() answer AV.File", async () => {
  const file = await new AV.File('queried.txt', Buffer.from('by name')).save();
  // The SDK maps only the AV.File class to AV.File: a query by the class name builds AV.Object subclasses of
  // '_File' (AV.Object._getSubclass), on the hosted service as here, with the record's fields as attributes.
  const [byName] = await new AV.Query('_File').equalTo('objectId', file.id).find();
  assert.ok(byName instanceof AV.Object && !(byName instanceof AV.File));
  assert.equal(byName.className, '_File');
  assert.equal(byName.id, file.id);
  assert.deepEqual([byName.get('name'), byName.get('url'), byName.get('mime_type')], ['queried.txt', file.url(), 'text/plain']);
  assert.equal(byName.get('metaData').size, 7);
  assert.equal(byName.get('metaData')._checksum, createHash('md5').update('by name').digest('hex'));

  const first = await new AV.Query(AV.File).equalTo('name', 'queried.txt').first();
  assert.ok(first instanceof AV.File);
  assert.deepEqual([first.id, first.url(), first.size()], [file.id, file.url(), 7]);
  const scanned: AV.File[] = [];
  const scan = new AV.Query(AV.File).equalTo('name', 'queried.txt').scan(undefined, { useMasterKey: true });
  for (let next = await scan.next(); !next.done; next = await scan.next()) scanned.push(next.value as AV.File);
  assert.deepEqual(scanned.map((one) => [one instanceof AV.File, one.id, one.url()]), [[true, file.id, file.url()]]);
  // Query#get of AV.File fails inside the SDK itself (it calls AV.Object#parse, which AV.File lacks), before
  // reading the answer: File#fetch (AV.File.createWithoutData(id).fetch()) is the SDK's way to read one file.
  await assert.rejects(new AV.Query(AV.File).get(file.id as string), /parse is not a function/);
});

test('an avatar is an AV.File in the answers of logIn, become, fetch, and when set before signUp', async () => {
  const avatar = await new AV.File('face.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 1])).save();
  const user = new AV.User();
  user.setUsername(`face-${Date.now()}`);
  user.setPassword('secret-pass');
  user.set('avatar', avatar);
  await user.signUp();
  const check = (from: string, value: unknown) => {
    assert.ok(value instanceof AV.File, from);
    assert.deepEqual([value.id, value.url(), value.size(), value.name()], [avatar.id, avatar.url(), 5, 'face.png'], from);
  };
  check('signUp', user.get('avatar'));
  const session = user.getSessionToken();
  await AV.User.logOut();
  check('logIn', (await AV.User.logIn(user.getUsername(), 'secret-pass')).get('avatar'));
  check('current', AV.User.current()?.get('avatar'));
  check('become', (await AV.User.become(session)).get('avatar'));
  check('fetch', (await AV.User.current()!.fetch()).get('avatar'));
  // An external URL is an avatar as well.
  const external = await AV.File.withURL('gravatar.png', 'https://www.gravatar.com/avatar/0?s=64').save();
  await AV.User.current()!.save({ avatar: external });
  const back = (await AV.User.current()!.fetch()).get('avatar') as AV.File;
  assert.ok(back instanceof AV.File);
  assert.deepEqual([back.id, back.url(), back.metaData('__source')], [external.id, 'https://www.gravatar.com/avatar/0?s=64', 'external']);
  await AV.User.logOut();
});

test('sizes the SDK does not know are the bytes received: base64 data, a Node stream with its metaData.size', async () => {
  // The SDK sets metaData.size only for buffers, arrays and blobs: a base64 file goes without one.
  const base64 = await new AV.File('中文.txt', { base64: Buffer.from('working at avoscloud is great!').toString('base64') }).save();
  assert.equal(base64.size(), undefined, 'the SDK does not know the size');
  const fetched = await AV.File.createWithoutData(base64.id as string).fetch();
  assert.equal(fetched.size(), 30);
  assert.equal(fetched.metaData('_checksum'), createHash('md5').update('working at avoscloud is great!').digest('hex'));

  const path = join(scratch, 'streamed.txt');
  writeFileSync(path, 'streamed bytes!');
  const streamed = new AV.File('streamed.txt', createReadStream(path));
  streamed.metaData('size', 15);
  await streamed.save();
  assert.equal((await AV.File.createWithoutData(streamed.id as string).fetch()).size(), 15);
  assert.equal(await (await fetch(streamed.url())).text(), 'streamed bytes!');

  // A stream longer than its metaData.size (the SDK's Content-Length) keeps nothing: tested over HTTP in
  // test/files.test.ts, not here: the SDK's own request (superagent, a piped stream) sometimes never settles when
  // the server closes the connection on the extra bytes (2 runs in 5), so a test of it here hung, whatever Roost did.
});

test('a Node stream without metaData.size goes up in parts (qiniu\'s protocol), small and over 16 MiB, and reads back byte-equal', async () => {
  const small = await new AV.File('stream-small.txt', Readable.from([Buffer.from('streamed '), Buffer.from('in parts')])).save();
  assert.equal(small.size(), undefined, 'the SDK does not know the size');
  assert.equal(await (await fetch(small.url())).text(), 'streamed in parts');
  const smallRecord = await AV.File.createWithoutData(small.id as string).fetch();
  assert.deepEqual([smallRecord.size(), smallRecord.metaData('_checksum')], [17, createHash('md5').update('streamed in parts').digest('hex')]);

  // Two parts: 16 MiB and the rest, sent by the SDK's StreamUploader one after the other.
  const big = Buffer.alloc(16 * 1024 * 1024 + 12345);
  for (let i = 0; i < big.length; i += 4096) big.writeUInt32BE(i, i);
  const path = join(scratch, 'big.bin');
  writeFileSync(path, big);
  const saved = await new AV.File('big.bin', createReadStream(path, { highWaterMark: 1024 * 1024 })).save();
  const served = Buffer.from(await (await fetch(saved.url())).arrayBuffer());
  assert.equal(served.length, big.length);
  assert.ok(served.equals(big), 'the bytes read back are the bytes sent');
  const record = await AV.File.createWithoutData(saved.id as string).fetch();
  assert.deepEqual([record.size(), record.metaData('_checksum')], [big.length, createHash('md5').update(big).digest('hex')]);
  assert.deepEqual(readdirSync(join(scratch, 'files', '.parts')), [], 'no part is left behind');
  const logs = server().logs.join('');
  const partPuts = logs.split('\n').filter((line) => line.includes('"route":"/files-qiniu/:token/buckets/:bucket/objects/:key/uploads/:uploadId/:partNumber"'));
  // Readable.from of two buffers reads as two chunks (object mode): a part each; the large file is 16 MiB and the rest.
  assert.equal(partPuts.length, 4, 'two parts for the small stream, two for the large one');
  assert.ok(!logs.includes((saved as unknown as { _token: string })._token), 'the upload token never reaches a log line');
});

test('a Node stream that fails midway: the SDK aborts the upload, and nothing is kept', async () => {
  const broken = new Readable({ read() {} });
  broken.push(Buffer.from('the first part'));
  const saving = new AV.File('broken.txt', broken).save();
  setTimeout(() => broken.destroy(new Error('the disk went away')), 200);
  await assert.rejects(saving, /the disk went away/);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(await new AV.Query(AV.File).equalTo('name', 'broken.txt').count({ useMasterKey: true }), 0);
  assert.deepEqual(readdirSync(join(scratch, 'files', '.parts')), [], 'the abort removed the parts');
  assert.ok(server().logs.join('').includes('"method":"DELETE","route":"/files-qiniu/:token/buckets/:bucket/objects/:key/uploads/:uploadId"'));
});

test('save({keepFileName: true}) keeps the name at the end of the URL (the SDK\'s own test of it)', async () => {
  const fileName = '中文.txt';
  const file = new AV.File(fileName, { base64: 'd29ya2luZyBhdCBhdm9zY2xvdWQgaXMgZ3JlYXQh' });
  file.metaData('format', 'txt file');
  file.setACL(new AV.ACL());
  await file.save({ keepFileName: true });
  assert.match(file.url(), new RegExp(encodeURIComponent(fileName) + '$'));
  assert.equal(file.metaData('format'), 'txt file');
  assert.equal(file.get('mime_type'), 'text/plain');
  assert.equal(await (await fetch(file.url())).text(), 'working at avoscloud is great!');
  await file.destroy({ useMasterKey: true });
  assert.equal((await fetch(file.url())).status, 404);
});
