// Files over HTTP with the S3-compatible backend (s3rver started here): the SDKs' upload and the REST upload
// keep their bytes in the bucket under S3_PREFIX, a private bucket's files are read through Roost (a redirect
// to a freshly signed URL), a public one's straight from S3_PUBLIC_URL, delete removes the object, and an
// upload cut halfway leaves no object and no record.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { startServer, testDatabase, type TestServer } from './helpers/harness.ts';
import { startS3, type TestS3 } from './helpers/s3.ts';
import { sendBytes } from './helpers/files.ts';

let s3: TestS3;
let signed: TestServer;
let open: TestServer;

before(async () => {
  s3 = await startS3();
  signed = await startServer({ env: { ...s3.env({ prefix: 'roost/' }), APP_CACHE_MS: '0' } });
  open = await startServer({ env: { ...s3.env({ public: true }), APP_CACHE_MS: '0' }, database: await testDatabase() });
});
after(async () => {
  await signed?.close();
  await open?.close();
  await s3?.close();
});

/** The object as the bucket holds it, read with the bucket's own credentials-free path (s3rver serves anyone). */
const inBucket = (key: string) => fetch(`${s3.endpoint}/${s3.bucket}/${key}`);

test('a private bucket: the upload goes to the bucket, the URL is Roost\'s and redirects to a signed one', async () => {
  const granted = (await signed.client.post('/1.1/fileTokens', { name: 'photo.jpg', metaData: { size: 5 } })).body;
  assert.equal(granted.provider, 's3');
  assert.equal(granted.bucket, s3.bucket);
  assert.equal(granted.url, `${signed.url}/files/${granted.key}`);
  assert.equal((await fetch(granted.upload_url, { method: 'PUT', body: 'jpeg!' })).status, 200);
  const record = (await signed.client.get(`/1.1/files/${granted.objectId}`)).body;
  assert.deepEqual([record.provider, record.bucket, record.key, record.metaData.size], ['s3', s3.bucket, granted.key, 5]);
  assert.equal(await (await inBucket(`roost/${granted.key}`)).text(), 'jpeg!');

  const redirect = await fetch(granted.url, { redirect: 'manual' });
  assert.equal(redirect.status, 302);
  const location = redirect.headers.get('location') ?? '';
  assert.ok(location.startsWith(`${s3.endpoint}/${s3.bucket}/roost/${granted.key}?`), location);
  assert.match(location, /X-Amz-Signature=/);
  assert.equal(await (await fetch(granted.url)).text(), 'jpeg!');

  assert.deepEqual((await signed.client.delete(`/1.1/files/${granted.objectId}`)).body, {});
  assert.equal((await inBucket(`roost/${granted.key}`)).status, 404);
  assert.equal((await signed.client.get(`/1.1/files/${granted.objectId}`)).status, 404);
  assert.equal((await fetch(`${signed.url}/files/..%2F..%2Fx`, { redirect: 'manual' })).status, 404);
});

test('a public bucket: URLs point at S3_PUBLIC_URL and the REST upload lands there', async () => {
  const sent = await sendBytes(open.client, 'POST', '/1.1/files/hello.txt', 'Hello, S3!', { 'Content-Type': 'text/plain' });
  assert.equal(sent.status, 201, sent.text);
  assert.equal(sent.body.bucket, s3.bucket);
  const record = (await open.client.get(`/1.1/files/${sent.body.objectId}`)).body;
  assert.equal(sent.body.url, `${s3.endpoint}/${s3.bucket}/${record.key}`);
  const served = await fetch(sent.body.url);
  assert.equal(await served.text(), 'Hello, S3!');
  assert.equal(served.headers.get('content-type'), 'text/plain');
});

test('an upload cut halfway leaves no object and no record in the bucket', async () => {
  const granted = (await signed.client.post('/1.1/fileTokens', { name: 'cut.bin', metaData: { size: 8_000_000 } })).body;
  const target = new URL(granted.upload_url);
  await new Promise<void>((resolve) => {
    const put = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: 'PUT', headers: { 'Content-Length': '8000000' } });
    put.on('error', () => resolve());
    put.on('close', () => resolve());
    put.write(Buffer.alloc(6_000_000, 1), () => setTimeout(() => put.destroy(), 200));
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await inBucket(`roost/${granted.key}`)).status, 404);
  assert.equal((await signed.client.get(`/1.1/files/${granted.objectId}`)).status, 404);
  const retried = await fetch(granted.upload_url, { method: 'PUT', body: Buffer.alloc(8_000_000, 3) });
  assert.equal(retried.status, 200);
  assert.equal((await inBucket(`roost/${granted.key}`)).headers.get('content-length'), '8000000');
});
