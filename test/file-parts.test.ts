// Uploads whose size the SDK does not know (issue #20; docs/files.md): POST /1.1/fileTokens without metaData.size
// answers `qiniu`, and Roost speaks the two qiniu protocols the SDK's uploader uses: multipart v2 (a Node stream:
// start, parts from 1 one after another, complete or abort) and the form upload (`{base64}` data). On local disk and
// in an S3 bucket (s3rver); the refusals: a forged or expired token, another key, parts out of order or missing,
// an aborted upload, each leaving neither bytes nor record.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { ManualClock, startServer, testDatabase, type TestServer } from './helpers/harness.ts';
import { startS3, type TestS3 } from './helpers/s3.ts';
import { filesFolder, filesUnder } from './helpers/files.ts';

let server: TestServer;
let folder: string;
let s3: TestS3;
let bucketed: TestServer;
const clock = new ManualClock(Date.now());

before(async () => {
  folder = await filesFolder();
  server = await startServer({ clock, env: { FILES_DIR: folder } });
  s3 = await startS3();
  bucketed = await startServer({ env: { ...s3.env(), FILES_DIR: await filesFolder() }, database: await testDatabase() });
});
after(async () => {
  await server?.close();
  await bucketed?.close();
  await s3?.close();
});

const md5 = (bytes: string | Buffer) => createHash('md5').update(bytes).digest('hex');
const forbidden = { code: 403, error: 'The file upload token is invalid or has expired.' };

interface Granted {
  objectId: string;
  token: string;
  url: string;
  upload_url: string;
  bucket: string;
  key: string;
  provider: string;
}

/** fileTokens as the SDK sends it for a Node stream: metaData without a size. */
async function grant(on: TestServer, name = 'streamed.bin'): Promise<Granted> {
  // Signed at the server's clock, which a test moves.
  const headers = { 'X-LC-Sign': on.client.signature(on.clock.now()) };
  const granted = await on.client.request('POST', '/1.1/fileTokens', { body: { name, metaData: { owner: 'unknown' } }, headers });
  assert.equal(granted.status, 200, granted.text);
  return granted.body;
}

/** The SDK's ShardUploader base URL: the key in qiniu's URL-safe base64 (padding kept). */
const uploadsOf = (granted: Granted, key = granted.key) =>
  `${granted.upload_url}/buckets/${granted.bucket}/objects/${Buffer.from(key).toString('base64').replace(/\+/g, '-').replace(/\//g, '_')}/uploads`;

async function call(method: string, url: string, body?: string | Buffer | object, token?: string) {
  const headers: Record<string, string> = token ? { Authorization: `UpToken ${token}` } : {};
  let sent: string | Buffer | undefined;
  if (body !== undefined && !(typeof body === 'string' || Buffer.isBuffer(body))) {
    headers['Content-Type'] = 'application/json';
    sent = JSON.stringify(body);
  } else sent = body;
  const response = await fetch(url, { method, headers, body: typeof sent === 'string' || sent === undefined ? sent : new Uint8Array(sent) });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Starts an upload as the SDK does and answers its id. */
async function start(granted: Granted): Promise<string> {
  const started = await call('POST', uploadsOf(granted), undefined, granted.token);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  assert.match(started.body.uploadId, /^[0-9a-f]{32}$/);
  return started.body.uploadId;
}

async function recordOf(on: TestServer, objectId: string) {
  return on.master.get(`/1.1/classes/_File/${objectId}`);
}

test('fileTokens without metaData.size answers qiniu at a Roost URL; with it, s3 as before', async () => {
  const granted = await grant(server, 'a.txt');
  assert.deepEqual(Object.keys(granted), ['objectId', 'createdAt', 'token', 'url', 'mime_type', 'provider', 'upload_url', 'bucket', 'key']);
  assert.equal(granted.provider, 'qiniu');
  assert.equal(granted.upload_url, `${server.url}/files-qiniu/${granted.token}`);
  assert.equal(granted.bucket, 'local');
  const sized = (await server.client.post('/1.1/fileTokens', { name: 'a.txt', metaData: { size: 3 } })).body;
  assert.deepEqual([sized.provider, sized.upload_url], ['s3', `${server.url}/files-upload/${sized.token}`]);
});

for (const [label, on] of [
  ['local disk', () => server],
  ['an S3 bucket', () => bucketed],
] as const) {
  test(`parts sent one after another become the file, its record sized and checksummed from the bytes (${label})`, async () => {
    const granted = await grant(on());
    const uploadId = await start(granted);
    const first = Buffer.alloc(70_000, 'a');
    const second = Buffer.from('and the rest');
    const one = await call('PUT', `${uploadsOf(granted)}/${uploadId}/1`, first, granted.token);
    assert.deepEqual(one, { status: 200, body: { etag: md5(first), md5: md5(first) } });
    const two = await call('PUT', `${uploadsOf(granted)}/${uploadId}/2`, second, granted.token);
    assert.equal(two.status, 200);
    const parts = [
      { partNumber: 1, etag: one.body.etag },
      { partNumber: 2, etag: two.body.etag },
    ];
    const done = await call('POST', `${uploadsOf(granted)}/${uploadId}`, { parts, fname: 'streamed.bin', mimeType: 'application/octet-stream' }, granted.token);
    const whole = Buffer.concat([first, second]);
    assert.deepEqual(done, { status: 200, body: { hash: md5(whole), key: granted.key } });
    const record = await recordOf(on(), granted.objectId);
    assert.deepEqual([record.body.metaData, record.body.key], [{ owner: 'unknown', size: whole.length, _checksum: md5(whole) }, granted.key]);
    const served = await fetch(granted.url);
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(whole));
    // The token made its one upload: another start with it is refused.
    assert.deepEqual(await call('POST', uploadsOf(granted), undefined, granted.token), {
      status: 403,
      body: { code: 403, error: 'This upload token was used already.' },
    });
  });

  test(`the form upload (the SDK's for {base64} data) keeps the file part (${label})`, async () => {
    const granted = await grant(on(), 'form.txt');
    const form = new FormData();
    form.append('file', new Blob(['form bytes\r\n--not the boundary']), 'form.txt');
    form.append('name', 'form.txt');
    form.append('key', granted.key);
    form.append('token', granted.token);
    const sent = await fetch(granted.upload_url, { method: 'POST', body: form });
    assert.deepEqual([sent.status, await sent.json()], [200, { hash: md5('form bytes\r\n--not the boundary') }]);
    assert.equal(await (await fetch(granted.url)).text(), 'form bytes\r\n--not the boundary');
    // A form without a file part, or cut before its file part ends: refused, nothing kept.
    const fieldsOnly = await grant(on(), 'form.txt');
    const noFile = new FormData();
    noFile.append('token', fieldsOnly.token);
    const refused = await fetch(fieldsOnly.upload_url, { method: 'POST', body: noFile });
    assert.deepEqual([refused.status, await refused.json()], [400, { code: 1, error: 'The form holds no file part.' }]);
    const cutShort = await grant(on(), 'form.txt');
    const cut = await fetch(cutShort.upload_url, {
      method: 'POST',
      headers: { 'Content-Type': 'multipart/form-data; boundary=XyZ' },
      body: '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="form.txt"\r\n\r\nonly the start of it',
    });
    assert.deepEqual([cut.status, await cut.json()], [400, { code: 1, error: 'The form ended before its file part did.' }]);
    for (const granted of [fieldsOnly, cutShort]) {
      assert.deepEqual((await recordOf(on(), granted.objectId)).body, {}, 'no record');
      assert.equal((await fetch(granted.url)).status, 404);
    }
    const plain = await call('POST', (await grant(on(), 'form.txt')).upload_url, 'not a form');
    assert.deepEqual(plain, { status: 400, body: { code: 1, error: 'A form upload is multipart/form-data with the file as its first file part.' } });
  });
}

test('a forged token, another key, or an Authorization naming another token is refused (403)', async () => {
  const granted = await grant(server);
  const forged = { ...granted, upload_url: `${server.url}/files-qiniu/${granted.token.slice(0, -4)}AAAA` };
  assert.deepEqual(await call('POST', uploadsOf(forged)), { status: 403, body: forbidden });
  const otherKey = `${granted.key.split('/')[0]}/someone-elses.bin`;
  assert.deepEqual(await call('POST', uploadsOf(granted, otherKey), undefined, granted.token), {
    status: 403,
    body: { code: 403, error: 'This upload token grants another key.' },
  });
  const other = await grant(server);
  assert.deepEqual(await call('POST', uploadsOf(granted), undefined, other.token), {
    status: 403,
    body: { code: 403, error: 'The Authorization header names another upload token.' },
  });
  // A part PUT with a forged token under a real upload id: nothing is written.
  const uploadId = await start(granted);
  assert.deepEqual((await call('PUT', `${uploadsOf(forged)}/${uploadId}/1`, 'bytes')).status, 403);
  assert.deepEqual(await filesUnder(join(folder, '.parts')), []);
});

test('parts out of order, a missing or altered part, an unknown upload: refused, nothing kept', async () => {
  const granted = await grant(server);
  const uploadId = await start(granted);
  const base = `${uploadsOf(granted)}/${uploadId}`;
  assert.deepEqual(await call('PUT', `${base}/2`, 'second', granted.token), {
    status: 400,
    body: { code: 111, error: 'Parts are sent one after another from 1: the next part of this upload is 1.' },
  });
  assert.deepEqual((await call('PUT', `${base}/0`, 'zero', granted.token)).body.code, 111);
  const one = await call('PUT', `${base}/1`, 'first', granted.token);
  assert.equal(one.status, 200);
  assert.equal((await call('PUT', `${base}/1`, 'first again', granted.token)).status, 400);
  const missing = await call('POST', base, { parts: [{ partNumber: 1, etag: one.body.etag }, { partNumber: 2, etag: md5('x') }] }, granted.token);
  assert.deepEqual(missing, {
    status: 400,
    body: { code: 111, error: 'Part 2 is missing or not as it was received: parts are listed from 1, in order, with the etag each PUT answered.' },
  });
  assert.equal((await call('POST', base, { parts: [{ partNumber: 1, etag: md5('other') }] }, granted.token)).status, 400);
  assert.equal((await call('POST', base, {}, granted.token)).status, 400);
  const unknown = await call('PUT', `${uploadsOf(granted)}/${'0'.repeat(32)}/1`, 'x', granted.token);
  assert.deepEqual(unknown, { status: 404, body: { code: 101, error: 'No such upload: it was completed, aborted, expired or never started.' } });
  assert.equal((await call('PUT', `${uploadsOf(granted)}/..%2F..%2Fx/1`, 'x', granted.token)).status, 404);
  assert.deepEqual((await recordOf(server, granted.objectId)).body, {}, 'no record');
});

test('an aborted upload keeps nothing, and its parts go', async () => {
  const granted = await grant(server);
  const uploadId = await start(granted);
  const base = `${uploadsOf(granted)}/${uploadId}`;
  assert.equal((await call('PUT', `${base}/1`, 'first', granted.token)).status, 200);
  assert.deepEqual(await call('DELETE', base, undefined, granted.token), { status: 200, body: {} });
  assert.deepEqual((await filesUnder(join(folder, '.parts'))).filter((path) => path.startsWith(granted.objectId)), []);
  assert.equal((await call('PUT', `${base}/2`, 'second', granted.token)).status, 404);
  assert.equal((await call('POST', base, { parts: [{ partNumber: 1, etag: md5('first') }] }, granted.token)).status, 404);
  assert.equal((await call('DELETE', base, undefined, granted.token)).status, 404);
  assert.deepEqual((await recordOf(server, granted.objectId)).body, {}, 'no record');
  assert.equal((await fetch(granted.url)).status, 404);
});

test('an expired token is refused at every step, and its parts are swept by a later start', async () => {
  const granted = await grant(server);
  const uploadId = await start(granted);
  const base = `${uploadsOf(granted)}/${uploadId}`;
  assert.equal((await call('PUT', `${base}/1`, 'first', granted.token)).status, 200);
  clock.advance(server.config.fileTokenTtlMs + 600_000);
  try {
    assert.deepEqual(await call('PUT', `${base}/2`, 'second', granted.token), { status: 403, body: forbidden });
    assert.deepEqual(await call('POST', base, { parts: [{ partNumber: 1, etag: md5('first') }] }, granted.token), { status: 403, body: forbidden });
    const parts = async () => (await filesUnder(join(folder, '.parts'))).filter((path) => path.startsWith(granted.objectId));
    assert.deepEqual(await parts(), [`${granted.objectId}.${uploadId}/1.${md5('first')}`]);
    await start(await grant(server));
    assert.deepEqual(await parts(), []);
  } finally {
    clock.advance(-(server.config.fileTokenTtlMs + 600_000));
  }
  assert.deepEqual((await recordOf(server, granted.objectId)).body, {}, 'no record');
});

// A deleted application's parts (its uploads can never complete) were swept only by a later upload's start.
test('parts of uploads whose token expired are swept when the server starts; fresher ones stay', async () => {
  const own = await filesFolder();
  const stale = join(own, '.parts', 'staleObject.0123456789abcdef0123456789abcdef');
  const fresh = join(own, '.parts', 'freshObject.0123456789abcdef0123456789abcdef');
  for (const part of [stale, fresh]) {
    await mkdir(part, { recursive: true });
    await writeFile(join(part, `1.${md5('first')}`), 'first');
  }
  const expired = new Date(Date.now() - 3_600_000 - 600_000);
  await utimes(stale, expired, expired);
  const started = await startServer({ env: { FILES_DIR: own, FILE_TOKEN_TTL_MS: '3600000' } });
  try {
    assert.deepEqual(await filesUnder(join(own, '.parts')), [`freshObject.0123456789abcdef0123456789abcdef/1.${md5('first')}`]);
  } finally {
    await started.close();
  }
});
