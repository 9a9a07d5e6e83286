// Files (issue #20; docs/files.md) over HTTP on the local-disk backend: the SDKs' upload (POST /1.1/fileTokens,
// the PUT of the bytes to upload_url, POST /1.1/fileCallback), the REST upload, external URLs, serving (Range,
// ETag, Content-Type, Cache-Control), deletion, `_File` queries under ACLs, File values in objects and through
// include, per-app size and type limits, and uploads that never finish leaving neither bytes nor record.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { ManualClock, startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import { filesFolder, filesUnder, sendBytes } from './helpers/files.ts';
import sharp from 'sharp';

let server: TestServer;
let folder: string;
let owner: SignedUpUser;
let stranger: SignedUpUser;

before(async () => {
  folder = await filesFolder();
  server = await startServer({ env: { FILES_DIR: folder, APP_CACHE_MS: '0' } });
  owner = await signUp(server.client);
  stranger = await signUp(server.client);
});
after(async () => {
  await server?.close();
});

const md5 = (bytes: string | Buffer) => createHash('md5').update(bytes).digest('hex');

/** fileTokens, then the PUT of the bytes as the SDK's s3 uploader sends it. */
async function upload(name: string, bytes: string, extra: Record<string, unknown> = {}, session?: string) {
  const client = session ? server.client.withSession(session) : server.client;
  const granted = await client.post('/1.1/fileTokens', { name, metaData: { size: Buffer.byteLength(bytes), owner: 'unknown' }, ...extra });
  assert.equal(granted.status, 200, granted.text);
  const put = await fetch(granted.body.upload_url, {
    method: 'PUT',
    body: bytes,
    headers: { 'Content-Type': granted.body.mime_type, 'Cache-Control': 'public, max-age=31536000' },
  });
  return { granted: granted.body, put };
}

test('fileTokens answers an s3 upload to a Roost URL; the PUT keeps the bytes and writes the record', async () => {
  const { granted, put } = await upload('hello.txt', 'hello world');
  assert.deepEqual(Object.keys(granted), ['objectId', 'createdAt', 'token', 'url', 'mime_type', 'provider', 'upload_url', 'bucket', 'key']);
  assert.match(granted.objectId, /^[0-9a-f]{24}$/);
  assert.equal(granted.provider, 's3');
  assert.equal(granted.mime_type, 'text/plain');
  assert.equal(granted.bucket, 'local');
  assert.ok(granted.upload_url.startsWith(`${server.url}/files-upload/`));
  assert.match(granted.key, new RegExp(`^${server.appId}/[A-Za-z0-9_-]{40}\\.txt$`));
  assert.equal(granted.url, `${server.url}/files/${granted.key}`);
  assert.equal(put.status, 200);
  assert.equal(put.headers.get('etag'), `"${md5('hello world')}"`);

  const read = await server.client.get(`/1.1/files/${granted.objectId}`);
  assert.equal(read.status, 200);
  const { createdAt, updatedAt, ...fields } = read.body;
  assert.deepEqual(fields, {
    name: 'hello.txt',
    url: granted.url,
    mime_type: 'text/plain',
    key: granted.key,
    provider: 'local',
    bucket: 'local',
    metaData: { size: 11, owner: 'unknown', _checksum: md5('hello world') },
    objectId: granted.objectId,
  });
  assert.equal(createdAt, updatedAt);

  const served = await fetch(granted.url);
  assert.equal(served.status, 200);
  assert.equal(await served.text(), 'hello world');
  assert.equal(served.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(served.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.equal(served.headers.get('accept-ranges'), 'bytes');
  const etag = served.headers.get('etag');
  assert.ok(etag);

  const ranged = await fetch(granted.url, { headers: { Range: 'bytes=6-10' } });
  assert.equal(ranged.status, 206);
  assert.equal(ranged.headers.get('content-range'), 'bytes 6-10/11');
  assert.equal(await ranged.text(), 'world');
  // Cache-Control named, or fetch adds "no-cache", which asks for the bytes whatever the tag.
  const cached = await fetch(granted.url, { headers: { 'If-None-Match': etag, 'Cache-Control': 'max-age=0' } });
  assert.equal(cached.status, 304);
  const head = await fetch(granted.url, { method: 'HEAD' });
  assert.equal(head.headers.get('content-length'), '11');
});

test('an upload token is good for one upload, on its own signature, until it expires', async () => {
  const { granted } = await upload('once.txt', 'first');
  const again = await fetch(granted.upload_url, { method: 'PUT', body: 'other' });
  assert.equal(again.status, 403);
  assert.deepEqual(await again.json(), { code: 403, error: 'This upload token was used already.' });
  assert.equal(await (await fetch(granted.url)).text(), 'first');

  assert.ok(!server.logs.join('').includes(granted.token.slice(0, 40)), 'the upload token reaches no log line');
  assert.ok(server.logs.join('').includes('/files-upload/<token>'));
  const bulky = await server.client.post('/1.1/fileTokens', { name: 'x.txt', metaData: { note: 'n'.repeat(9000) } });
  assert.deepEqual([bulky.status, bulky.body], [400, { code: 116, error: "A file's metaData and ACL may hold at most 8192 bytes." }]);
  const badAcl = await server.client.post('/1.1/fileTokens', { name: 'x.txt', ACL: { '*': { read: 'yes' } } });
  assert.deepEqual([badAcl.status, badAcl.body.code], [400, 123]);
  const forged = await fetch(`${server.url}/files-upload/${granted.token.slice(0, -4)}AAAA`, { method: 'PUT', body: 'x' });
  assert.equal(forged.status, 403);
  assert.deepEqual(await forged.json(), { code: 403, error: 'The file upload token is invalid or has expired.' });
});

test('more bytes than metaData.size are refused, and leave neither bytes nor record', async () => {
  const granted = (await server.client.post('/1.1/fileTokens', { name: 'short.bin', metaData: { size: 4 } })).body;
  const put = await fetch(granted.upload_url, { method: 'PUT', body: 'more than four' });
  assert.equal(put.status, 413);
  assert.deepEqual(await put.json(), { code: 413, error: 'A file may hold at most 4 bytes.' });
  assert.equal((await server.client.get(`/1.1/files/${granted.objectId}`)).status, 404);
  assert.equal((await fetch(granted.url)).status, 404);
  const fewer = (await server.client.post('/1.1/fileTokens', { name: 'short.bin', metaData: { size: 4 } })).body;
  const short = await fetch(fewer.upload_url, { method: 'PUT', body: 'ab' });
  assert.equal(short.status, 400);
  assert.deepEqual(await short.json(), { code: 111, error: 'The upload sent 2 bytes where metaData.size said 4.' });
  assert.equal((await fetch(fewer.url)).status, 404);
});

test('fileCallback with result false removes the record and the bytes; true keeps them', async () => {
  const kept = await upload('kept.txt', 'kept');
  assert.deepEqual((await server.client.post('/1.1/fileCallback', { token: kept.granted.token, result: true })).body, {});
  assert.equal((await server.client.get(`/1.1/files/${kept.granted.objectId}`)).status, 200);

  const { granted } = await upload('failed.txt', 'failed');
  const settled = await server.client.post('/1.1/fileCallback', { token: granted.token, result: false });
  assert.equal(settled.status, 200);
  assert.deepEqual(settled.body, {});
  assert.equal((await server.client.get(`/1.1/files/${granted.objectId}`)).status, 404);
  assert.equal((await fetch(granted.url)).status, 404);
  const bad = await server.client.post('/1.1/fileCallback', { token: 'nope', result: false });
  assert.equal(bad.status, 403);
});

test('an upload whose connection drops leaves no half file and no record', async () => {
  const granted = (await server.client.post('/1.1/fileTokens', { name: 'dropped.bin', metaData: { size: 1_000_000 } })).body;
  const target = new URL(granted.upload_url);
  await new Promise<void>((resolve) => {
    const put = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: 'PUT', headers: { 'Content-Length': '1000000' } });
    put.on('error', () => resolve());
    put.write(Buffer.alloc(300_000, 1), () => setTimeout(() => put.destroy(), 100));
    put.on('close', () => resolve());
  });
  for (let i = 0; i < 50 && (await filesUnder(folder)).some((path) => path.startsWith('.partial/')); i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual((await filesUnder(folder)).filter((path) => path.startsWith('.partial/') || path === granted.key), []);
  assert.equal((await server.client.get(`/1.1/files/${granted.objectId}`)).status, 404);
  // The token was not spent: the upload may be made again.
  const retried = await fetch(granted.upload_url, { method: 'PUT', body: Buffer.alloc(1_000_000, 2) });
  assert.equal(retried.status, 200);
});

/** A GET of a path as given, not normalised the way fetch and URL do ("/a/../b" stays itself). */
function rawGet(path: string): Promise<number> {
  const target = new URL(server.url);
  return new Promise((resolve, reject) => {
    const get = httpRequest({ host: target.hostname, port: target.port, path, method: 'GET' }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    get.on('error', reject);
    get.end();
  });
}

test('keep_file_name (the SDK\'s keepFileName): the key and the URL end with the name as given, and nothing leaves the folder', async () => {
  const name = '中文 photo (1) 100% #2?.txt';
  const { granted, put } = await upload(name, 'kept name', { keep_file_name: true });
  assert.equal(put.status, 200);
  assert.match(granted.key, new RegExp(`^${server.appId}/[A-Za-z0-9_-]{20}/`));
  assert.equal(granted.key.split('/')[2], name);
  // As the SDK's own test of the hosted service has it: the URL ends with the name, encoded.
  assert.ok(granted.url.endsWith(`/${encodeURIComponent(name)}`), granted.url);
  const served = await fetch(granted.url);
  assert.deepEqual([served.status, await served.text(), served.headers.get('content-type')], [200, 'kept name', 'text/plain; charset=utf-8']);
  const record = (await server.client.get(`/1.1/files/${granted.objectId}`)).body;
  assert.deepEqual([record.name, record.key, record.url, record.metaData.size], [name, granted.key, granted.url, 9]);
  assert.ok((await filesUnder(folder)).includes(granted.key));
  // Without it, the key stays 40 random characters and the extension.
  const plain = await upload(name, 'plain');
  assert.match(plain.granted.key, new RegExp(`^${server.appId}/[A-Za-z0-9_-]{40}\\.txt$`));

  const refusal = {
    code: 122,
    error: "With keepFileName the name ends the file's URL: it may not start with a dot nor hold more than 255 bytes.",
  };
  for (const bad of ['..', '.', '.env', '文'.repeat(86)]) {
    const refused = await server.client.post('/1.1/fileTokens', { name: bad, keep_file_name: true });
    assert.deepEqual([refused.status, refused.body], [400, refusal], bad);
  }
  for (const bad of ['../x.txt', 'a\\b.txt', 'a\u0000b.txt', '']) {
    const refused = await server.client.post('/1.1/fileTokens', { name: bad, keep_file_name: true });
    assert.deepEqual([refused.status, refused.body], [400, { code: 122, error: 'Invalid file name.' }], bad);
  }
  // A name of 85 three-byte characters (255 bytes) is kept; 86 was refused above.
  assert.equal((await upload('文'.repeat(85), 'x', { keep_file_name: true })).put.status, 200);

  assert.deepEqual((await server.client.delete(`/1.1/files/${granted.objectId}`)).body, {});
  assert.deepEqual((await filesUnder(folder)).filter((path) => path.includes(granted.key.split('/')[1])), []);
  assert.ok(!existsSync(join(folder, server.appId, granted.key.split('/')[1])), 'the name\'s folder goes with it');
  assert.equal((await fetch(granted.url)).status, 404);

  // Paths that would leave the app's folder, or reach Roost's own, answer 404 whatever their spelling.
  const [, folderPart] = granted.key.split('/');
  for (const path of [
    `/files/${server.appId}/${folderPart}/..%2F..%2F..%2Fetc%2Fpasswd`,
    `/files/${server.appId}/../../etc/passwd`,
    `/files/${server.appId}/${folderPart}/%2e%2e`,
    `/files/${server.appId}/%2e%2e/%2e%2e/etc/passwd`,
    `/files/${server.appId}/${folderPart}/a%5C..%5C..%5Cx`,
    `/files/${server.appId}/${folderPart}/a%00b`,
    `/files/${server.appId}/${folderPart}/x/y`,
    `/files/${server.appId}/${folderPart}/`,
    `/files/%2Fetc/passwd`,
    `/files/.partial/x`,
    `/files/.thumbs/${server.appId}/${folderPart}/x`,
    `/files/${server.appId}/${folderPart}/${'a'.repeat(600)}`,
  ]) {
    assert.equal(await rawGet(path), 404, path);
  }
});

test('a PUT with more bytes than its Content-Length (a Node stream longer than the metaData.size the SDK sent) keeps nothing', async () => {
  const size = 2_000_000;
  const granted = (await server.client.post('/1.1/fileTokens', { name: 'longer.txt', metaData: { size } })).body;
  const target = new URL(granted.upload_url);
  // The bytes past Content-Length reach the server as the start of a next request, which is malformed.
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(`PUT ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: text/plain\r\nContent-Length: ${size}\r\n\r\n`);
      socket.write(Buffer.concat([Buffer.alloc(size, 'a'), Buffer.from(' and more bytes!')]));
    });
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
  assert.match(answer, /^HTTP\/1\.1 400 /);
  assert.ok(answer.endsWith('{"code":1,"error":"Malformed HTTP request."}'), answer);
  // The upload handler may still be running: let it finish writing the bytes, then give it time to (wrongly) write the record.
  for (let i = 0; i < 100 && (await filesUnder(folder)).some((path) => path.startsWith('.partial/')); i++) await new Promise((r) => setTimeout(r, 50));
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal((await server.client.get(`/1.1/files/${granted.objectId}`)).status, 404);
  assert.deepEqual((await filesUnder(folder)).filter((path) => path === granted.key || path.startsWith('.partial/')), []);
  assert.equal((await fetch(granted.url)).status, 404);
});

test('POST /1.1/files/<name> stores the body as a file', async () => {
  const sent = await sendBytes(server.client, 'POST', '/1.1/files/hello.txt', 'Hello, World!', { 'Content-Type': 'text/plain' });
  assert.equal(sent.status, 201);
  assert.deepEqual(Object.keys(sent.body), ['size', 'bucket', 'url', 'name', 'createdAt', 'objectId']);
  assert.equal(sent.body.size, 13);
  assert.equal(sent.body.name, 'hello.txt');
  assert.equal(sent.headers.get('location'), `/1.1/files/${sent.body.objectId}`);
  assert.equal(await (await fetch(sent.body.url)).text(), 'Hello, World!');
  const image = await sendBytes(server.client, 'POST', '/1.1/files/photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  const record = (await server.client.get(`/1.1/files/${image.body.objectId}`)).body;
  assert.equal(record.mime_type, 'image/png');
  assert.equal((await fetch(record.url)).headers.get('content-type'), 'image/png');
  // Past BODY_LIMIT_BYTES (1 MiB): file bodies stream, they are not JSON bodies.
  const large = Buffer.alloc(3 * 1024 * 1024, 7);
  const big = await sendBytes(server.client, 'POST', '/1.1/files/large.bin', large);
  assert.equal(big.status, 201, big.text);
  assert.equal(big.body.size, large.length);
  assert.ok(Buffer.from(await (await fetch(big.body.url)).arrayBuffer()).equals(large));
  const unnamed = await sendBytes(server.client, 'POST', '/1.1/files/%2F..%2Fx', 'x');
  assert.equal(unnamed.status, 400);
  assert.deepEqual(unnamed.body, { code: 122, error: 'Invalid file name.' });
});

test('AV.File.withURL: POST /1.1/files with a url keeps a record of bytes kept elsewhere', async () => {
  const url = 'http://example.com/screen.jpg?resize=202%2C360';
  const saved = await server.client.post('/1.1/files', { name: 'screen.jpg', url, metaData: { owner: 'unknown', __source: 'external', size: 0 } });
  assert.equal(saved.status, 201);
  assert.deepEqual(Object.keys(saved.body), ['objectId', 'createdAt']);
  const record = (await server.client.get(`/1.1/files/${saved.body.objectId}`)).body;
  assert.equal(record.url, url);
  assert.equal(record.mime_type, 'image/jpeg');
  assert.equal(record.bucket, null);
  assert.deepEqual(record.metaData, { owner: 'unknown', __source: 'external', size: 0 });
  const bad = await server.client.post('/1.1/files', { name: 'x.jpg', url: 'javascript:alert(1)' });
  assert.deepEqual([bad.status, bad.body.code], [400, 111]);
  // Deleting it removes the record only.
  assert.deepEqual((await server.client.delete(`/1.1/files/${saved.body.objectId}`)).body, {});
  assert.equal((await server.client.get(`/1.1/files/${saved.body.objectId}`)).status, 404);
});

test('DELETE /1.1/files/<id> follows the ACL and removes record and bytes', async () => {
  const acl = { [owner.objectId]: { read: true, write: true }, '*': { read: true } };
  const { granted } = await upload('mine.txt', 'mine', { ACL: acl }, owner.sessionToken);
  const record = (await server.client.get(`/1.1/files/${granted.objectId}`)).body;
  assert.equal(record.metaData.owner, owner.objectId);
  const refused = await server.client.withSession(stranger.sessionToken).delete(`/1.1/files/${granted.objectId}`);
  assert.equal(refused.status, 403);
  assert.equal((await fetch(granted.url)).status, 200);
  const removed = await server.client.withSession(owner.sessionToken).delete(`/1.1/files/${granted.objectId}`);
  assert.deepEqual([removed.status, removed.body], [200, {}]);
  assert.equal((await fetch(granted.url)).status, 404);
  assert.equal((await server.master.get(`/1.1/files/${granted.objectId}`)).status, 404);
  assert.ok(!(await filesUnder(folder)).includes(granted.key));
});

test('_File is queried under ACLs through /1.1/classes and written only through the file API', async () => {
  const hidden = await upload('private-query.txt', 'private', { ACL: { [owner.objectId]: { read: true, write: true } } }, owner.sessionToken);
  const where = { where: { name: 'private-query.txt' } };
  assert.deepEqual((await server.client.get('/1.1/classes/_File', { query: where })).body, { results: [] });
  const mine = await server.client.withSession(owner.sessionToken).get('/1.1/classes/_File', { query: where });
  assert.deepEqual(mine.body.results.map((r: { objectId: string }) => r.objectId), [hidden.granted.objectId]);
  const byId = await server.client.withSession(owner.sessionToken).get(`/1.1/classes/_File/${hidden.granted.objectId}`);
  assert.equal(byId.body.name, 'private-query.txt');
  const created = await server.client.post('/1.1/classes/_File', { name: 'x', url: 'http://x' });
  assert.deepEqual([created.status, created.body.code], [403, 119]);
  const updated = await server.client.put(`/1.1/classes/_File/${hidden.granted.objectId}`, { name: 'y' });
  assert.deepEqual([updated.status, updated.body.code], [403, 119]);
  const removed = await server.master.delete(`/1.1/classes/_File/${hidden.granted.objectId}`);
  assert.equal(removed.status, 200);
  assert.equal((await fetch(hidden.granted.url)).status, 404);
});

test('a File value in an object is answered as its record, on get, find and through include', async () => {
  const { granted } = await upload('avatar.png', 'png bytes');
  const record = (await server.client.get(`/1.1/files/${granted.objectId}`)).body;
  const asFile = { ...record, __type: 'File' };
  const profile = await server.client.post('/1.1/classes/FileProfile', { title: 'p', avatar: { __type: 'File', id: granted.objectId }, gallery: [{ __type: 'File', id: granted.objectId }] });
  assert.equal(profile.status, 201);
  const read = await server.client.get(`/1.1/classes/FileProfile/${profile.body.objectId}`);
  assert.deepEqual(read.body.avatar, asFile);
  assert.deepEqual(read.body.gallery, [asFile]);
  const found = await server.client.get('/1.1/classes/FileProfile', { query: { where: { objectId: profile.body.objectId } } });
  assert.deepEqual(found.body.results[0].avatar, asFile);
  const post = await server.client.post('/1.1/classes/FilePost', { profile: { __type: 'Pointer', className: 'FileProfile', objectId: profile.body.objectId } });
  const included = await server.client.get(`/1.1/classes/FilePost/${post.body.objectId}`, { query: { include: 'profile' } });
  assert.deepEqual(included.body.profile.avatar, asFile);
  // A value as the SDK writes it (the whole record) is answered as the record now is.
  const sdkStyle = await server.client.post('/1.1/classes/FileProfile', { avatar: { ...asFile, url: 'http://stale.example/x.png' } });
  assert.deepEqual((await server.client.get(`/1.1/classes/FileProfile/${sdkStyle.body.objectId}`)).body.avatar, asFile);
  // A file since deleted: the value stays as it was kept.
  await server.master.delete(`/1.1/files/${granted.objectId}`);
  assert.deepEqual((await server.client.get(`/1.1/classes/FileProfile/${profile.body.objectId}`)).body.avatar, { __type: 'File', id: granted.objectId });
});

test('File values are answered as their records by writes with fetchWhenSave / new=true, sign-up, login and users/me', async () => {
  const { granted } = await upload('face.png', 'face bytes');
  const asFile = { ...(await server.client.get(`/1.1/files/${granted.objectId}`)).body, __type: 'File' };
  const value = { __type: 'File', id: granted.objectId };
  const created = await server.client.post('/1.1/classes/FileProfile', { avatar: value, gallery: [value] }, { query: { fetchWhenSave: 'true' } });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body.avatar, asFile);
  assert.deepEqual(created.body.gallery, [asFile]);
  const updated = await server.client.put(`/1.1/classes/FileProfile/${created.body.objectId}`, { cover: value }, { query: { new: 'true' } });
  assert.equal(updated.status, 200);
  assert.deepEqual(updated.body.cover, asFile);
  // Without the flag the answer holds no fields, as before.
  assert.deepEqual(Object.keys((await server.client.put(`/1.1/classes/FileProfile/${created.body.objectId}`, { cover: value })).body).sort(), ['objectId', 'updatedAt']);

  const user = await signUp(server.client, { avatar: value });
  assert.deepEqual(user.body.avatar, asFile);
  const login = await server.client.withSession(undefined).post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(login.status, 200);
  assert.deepEqual(login.body.avatar, asFile);
  const me = await user.client.get('/1.1/users/me');
  assert.equal(me.status, 200);
  assert.deepEqual(me.body.avatar, asFile);
  const changed = await user.client.put(`/1.1/users/${user.objectId}`, { banner: value }, { query: { fetchWhenSave: 'true' } });
  assert.deepEqual(changed.body.banner, asFile);
});

test('files through /1.1/batch: GET and DELETE of /1.1/files/<id>, external URLs, objects created holding File values', async () => {
  const { granted } = await upload('batched.txt', 'batched');
  const record = (await server.client.get(`/1.1/files/${granted.objectId}`)).body;
  const value = { __type: 'File', id: granted.objectId };
  const batch = await server.client.post('/1.1/batch', {
    requests: [
      { method: 'GET', path: `/1.1/files/${granted.objectId}` },
      { method: 'GET', path: '/1.1/files/000000000000000000000000' },
      { method: 'POST', path: '/1.1/files', body: { name: 'far.png', url: 'https://example.com/far.png', metaData: {} } },
      { method: 'POST', path: '/1.1/classes/FileProfile', body: { avatar: value }, params: { fetchWhenSave: true } },
      { method: 'POST', path: '/1.1/classes/FileProfile', body: { avatar: { ...record, __type: 'File' } } },
    ],
  });
  assert.equal(batch.status, 200, batch.text);
  assert.deepEqual(batch.body[0], { success: record });
  assert.deepEqual(batch.body[1], { success: null });
  assert.deepEqual(Object.keys(batch.body[2].success), ['objectId', 'createdAt']);
  assert.equal((await server.client.get(`/1.1/files/${batch.body[2].success.objectId}`)).body.url, 'https://example.com/far.png');
  assert.deepEqual(batch.body[3].success.avatar, { ...record, __type: 'File' });
  const saved = await server.client.get(`/1.1/classes/FileProfile/${batch.body[4].success.objectId}`);
  assert.deepEqual(saved.body.avatar, { ...record, __type: 'File' });

  // Deleting through a batch follows the ACL as DELETE /1.1/files/<id> does, and removes the bytes.
  const removed = await server.master.post('/1.1/batch', { requests: [{ method: 'DELETE', path: `/1.1/files/${granted.objectId}` }] });
  assert.deepEqual(removed.body, [{ success: {} }]);
  assert.equal((await server.client.get(`/1.1/files/${granted.objectId}`)).status, 404);
  assert.deepEqual((await filesUnder(folder)).filter((path) => path === granted.key), []);
  // A REST upload carries bytes, which a batch cannot: refused with the batch's own error.
  const upload2 = await server.client.post('/1.1/batch', { requests: [{ method: 'POST', path: '/1.1/files/x.txt', body: {} }] });
  assert.equal(upload2.status, 400);
  assert.equal(upload2.body.code, 107);
});

test("an app's size and type limits refuse uploads of every kind", async () => {
  const limited = await server.master.put('/1.1/settings', { fileMaxBytes: 8, fileMimeTypes: ['image/*', 'text/plain'] });
  assert.equal(limited.status, 200, limited.text);
  try {
    const big = await sendBytes(server.client, 'POST', '/1.1/files/big.txt', 'nine bytes', { 'Content-Type': 'text/plain' });
    assert.deepEqual([big.status, big.body], [413, { code: 413, error: 'A file may hold at most 8 bytes.' }]);
    const declared = await server.client.post('/1.1/fileTokens', { name: 'big.txt', metaData: { size: 9 } });
    assert.deepEqual([declared.status, declared.body.code], [413, 413]);
    // Without a size the upload goes in parts (qiniu's protocol): the part that passes the limit is refused.
    const undeclared = (await server.client.post('/1.1/fileTokens', { name: 'big.txt', metaData: {} })).body;
    const uploads = `${undeclared.upload_url}/buckets/${undeclared.bucket}/objects/${Buffer.from(undeclared.key).toString('base64url')}/uploads`;
    const { uploadId } = await (await fetch(uploads, { method: 'POST' })).json();
    const part = await fetch(`${uploads}/${uploadId}/1`, { method: 'PUT', body: 'nine bytes' });
    assert.deepEqual([part.status, await part.json()], [413, { code: 413, error: 'A file may hold at most 8 bytes.' }]);
    assert.equal((await fetch(undeclared.url)).status, 404);
    const typed = await sendBytes(server.client, 'POST', '/1.1/files/doc.pdf', 'pdf', { 'Content-Type': 'application/pdf' });
    assert.deepEqual([typed.status, typed.body], [415, { code: 415, error: 'Files of type application/pdf are not accepted by this application.' }]);
    const image = await sendBytes(server.client, 'POST', '/1.1/files/a.gif', 'GIF89a', { 'Content-Type': 'image/gif' });
    assert.equal(image.status, 201);
    const badSetting = await server.master.put('/1.1/settings', { fileMimeTypes: ['not a type'] });
    assert.deepEqual([badSetting.status, badSetting.body.code], [400, 111]);
  } finally {
    await server.master.put('/1.1/settings', { fileMaxBytes: null, fileMimeTypes: [] });
  }
  assert.equal((await sendBytes(server.client, 'POST', '/1.1/files/big.txt', 'nine bytes')).status, 201);
});

test('FILES_SIGNED_URL_SECONDS: answers show file URLs signed, and only a signed, unexpired URL is served', async () => {
  const clock = new ManualClock(Date.now());
  const privateFiles = await startServer({ clock, env: { FILES_DIR: await filesFolder(), FILES_SIGNED_URL_SECONDS: '60' } });
  try {
    const sent = await sendBytes(privateFiles.client, 'POST', '/1.1/files/secret.txt', 'secret', { 'Content-Type': 'text/plain' });
    assert.equal(sent.status, 201);
    const record = (await privateFiles.client.get(`/1.1/files/${sent.body.objectId}`)).body;
    const [plain, query] = record.url.split('?');
    assert.equal(plain, `${privateFiles.url}/files/${record.key}`);
    assert.match(query, /^expires=\d+&signature=[0-9a-f]{32}$/);
    assert.equal(sent.body.url, record.url);
    const served = await fetch(record.url);
    assert.deepEqual([served.status, await served.text(), served.headers.get('cache-control')], [200, 'secret', 'private, max-age=60']);
    // thumbnailURL appends its query after the signature's: the signature still holds (400: not an image, not 403).
    assert.equal((await fetch(`${record.url}?imageView/2/w/10/h/10`)).status, 400);
    const unsigned = await fetch(plain);
    assert.deepEqual([unsigned.status, (await unsigned.json()).code], [403, 403]);
    assert.equal((await fetch(record.url.slice(0, -1) + (record.url.endsWith('0') ? '1' : '0'))).status, 403);
    // A parameter given twice arrives as a list: refused like any bad signature, never a 500.
    const twice = await fetch(`${record.url}&signature=${query.split('signature=')[1]}`);
    assert.deepEqual([twice.status, (await twice.json()).code], [403, 403]);
    const expiresTwice = await fetch(`${record.url}&${query.split('&')[0]}`);
    assert.deepEqual([expiresTwice.status, (await expiresTwice.json()).code], [403, 403]);
    // The same URL for a while (caches keep working), a File value in an object gets it too, a query as well.
    const holder = await privateFiles.client.post('/1.1/classes/Vault', { doc: { __type: 'File', id: sent.body.objectId } });
    assert.equal((await privateFiles.client.get(`/1.1/classes/Vault/${holder.body.objectId}`)).body.doc.url, record.url);
    assert.equal((await privateFiles.client.get('/1.1/classes/_File')).body.results[0].url, record.url);
    clock.advance(121_000);
    assert.equal((await fetch(record.url)).status, 403);
    const fresh = (await privateFiles.client.get(`/1.1/files/${sent.body.objectId}`)).body.url;
    assert.notEqual(fresh, record.url);
    assert.equal(await (await fetch(fresh)).text(), 'secret');
    // An external URL is not this server's to sign.
    const external = await privateFiles.client.post('/1.1/files', { name: 'x.png', url: 'http://example.com/x.png' });
    assert.equal((await privateFiles.client.get(`/1.1/files/${external.body.objectId}`)).body.url, 'http://example.com/x.png');
  } finally {
    await privateFiles.close();
  }
});

test('thumbnailURL: imageView/<mode>/w/h/q/format is answered resized (made once), for images only', async () => {
  const png = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#c00' } }).png().toBuffer();
  const sent = await sendBytes(server.client, 'POST', '/1.1/files/wide.png', png);
  const url = sent.body.url as string;
  const sizeOf = async (response: Response) => {
    const meta = await sharp(Buffer.from(await response.arrayBuffer())).metadata();
    return [meta.format, meta.width, meta.height];
  };
  // The SDK's spelling: url + '?imageView/' + mode + '/w/' + w + '/h/' + h + '/q/' + q + '/format/' + fmt.
  const fit = await fetch(`${url}?imageView/2/w/50/h/50/q/100/format/png`);
  assert.equal(fit.headers.get('content-type'), 'image/png');
  assert.deepEqual(await sizeOf(fit), ['png', 50, 25]);
  const crop = await fetch(`${url}?imageView/1/w/40/h/40/q/80/format/jpg`);
  assert.equal(crop.headers.get('content-type'), 'image/jpeg');
  assert.deepEqual(await sizeOf(crop), ['jpeg', 40, 40]);
  const again = await fetch(`${url}?imageView/2/w/50/h/50/q/100/format/png`);
  assert.equal(again.headers.get('etag'), fit.headers.get('etag'));
  assert.ok((await filesUnder(folder)).some((path) => path.startsWith(`.thumbs/${sent.body.url.split('/files/')[1]}/`)));

  for (let side = 1; side <= 14; side++) assert.equal((await fetch(`${url}?imageView/2/w/${side}/h/${side}`)).status, 200);
  const seventeenth = await fetch(`${url}?imageView/2/w/99/h/99`);
  assert.deepEqual([seventeenth.status, (await seventeenth.json()).error], [400, 'At most 16 thumbnail sizes are made of one file.']);
  assert.equal((await fetch(`${url}?imageView/2/w/1/h/1`)).status, 200, 'a kept size is still served');
  const bad = await fetch(`${url}?imageView/2/w/0/h/50`);
  assert.deepEqual([bad.status, (await bad.json()).code], [400, 1]);
  const huge = await fetch(`${url}?imageView/2/w/4096/h/4096`);
  assert.deepEqual([huge.status, await huge.json()], [
    400,
    { code: 1, error: 'A thumbnail is asked as imageView/<1|2>/w/<1-4096>/h/<1-4096>[/q/<1-100>][/format/png|jpg|webp|gif], w×h at most 8388608 pixels.' },
  ]);
  // An image of more than 50 Mpx is refused from its header, before a pixel is decoded.
  const large = await sharp({ create: { width: 10_000, height: 5_001, channels: 3, background: '#000' } }).png({ compressionLevel: 1 }).toBuffer();
  const largeUrl = (await sendBytes(server.client, 'POST', '/1.1/files/large.png', large)).body.url;
  const tooLarge = await fetch(`${largeUrl}?imageView/2/w/10/h/10`);
  assert.deepEqual([tooLarge.status, await tooLarge.json()], [400, { code: 1, error: 'This image has more than 50000000 pixels: no thumbnail is made of it.' }]);
  const text = await sendBytes(server.client, 'POST', '/1.1/files/plain.txt', 'not an image');
  const notImage = await fetch(`${text.body.url}?imageView/2/w/10/h/10`);
  assert.deepEqual([notImage.status, (await notImage.json()).error], [400, 'This file is not an image a thumbnail can be made of.']);
  // Deleting the file deletes its thumbnails.
  await server.master.delete(`/1.1/files/${sent.body.objectId}`);
  assert.deepEqual((await filesUnder(folder)).filter((path) => path.startsWith('.thumbs/') && path.includes(url.split('/').pop()!)), []);
});
