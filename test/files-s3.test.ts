// Files over HTTP with the S3-compatible backend (s3rver started here): the SDKs' upload and the REST upload
// keep their bytes in the bucket under S3_PREFIX, a private bucket's files are read through Roost (a redirect
// to a freshly signed URL), a public one's straight from S3_PUBLIC_URL, delete removes the object, and an
// upload cut halfway leaves no object and no record; thumbnails are made from the bucket's bytes and kept there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { startServer, testDatabase, type TestServer } from './helpers/harness.ts';
import { startS3, type TestS3 } from './helpers/s3.ts';
import { sendBytes } from './helpers/files.ts';
import sharp from 'sharp';

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

test('keep_file_name in a bucket: the object key and both kinds of URL end with the name', async () => {
  const name = '中文 report (1) 100%.txt';
  for (const server of [signed, open]) {
    const granted = (await server.client.post('/1.1/fileTokens', { name, keep_file_name: true, metaData: { size: 4 } })).body;
    assert.equal(granted.key.split('/')[2], name);
    assert.ok(granted.url.endsWith(`/${encodeURIComponent(name)}`), granted.url);
    assert.equal((await fetch(granted.upload_url, { method: 'PUT', body: 'kept' })).status, 200);
    assert.equal(await (await fetch(granted.url)).text(), 'kept');
    const prefix = server === signed ? 'roost/' : '';
    assert.equal(await (await inBucket(`${prefix}${granted.key.split('/').map(encodeURIComponent).join('/')}`)).text(), 'kept');
    assert.deepEqual((await server.client.delete(`/1.1/files/${granted.objectId}`)).body, {});
    assert.equal((await fetch(granted.url)).status, 404);
  }
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

/** The keys s3rver holds under a prefix (its ListObjects answer, read without credentials). */
async function listed(prefix: string): Promise<string[]> {
  const xml = await (await fetch(`${s3.endpoint}/${s3.bucket}?prefix=${encodeURIComponent(prefix)}`)).text();
  return [...xml.matchAll(/<Key>([^<]+)<\/Key>/g)].map((match) => match[1]).sort();
}

test('thumbnailURL on a private bucket: made from the original in the bucket once, kept under .thumbs/, read through a signed redirect', async () => {
  const png = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#00c' } }).png().toBuffer();
  const sent = await sendBytes(signed.client, 'POST', '/1.1/files/wide.png', png);
  const { key } = (await signed.client.get(`/1.1/files/${sent.body.objectId}`)).body;
  const thumbUrl = `${sent.body.url}?imageView/2/w/50/h/50/q/100/format/png`;
  const first = await fetch(thumbUrl, { redirect: 'manual' });
  assert.equal(first.status, 302);
  assert.equal(first.headers.get('cache-control'), 'private, max-age=60');
  const location = first.headers.get('location') ?? '';
  assert.ok(location.startsWith(`${s3.endpoint}/${s3.bucket}/roost/.thumbs/${key}/f50x50q100.png?`), location);
  assert.match(location, /X-Amz-Signature=/);
  const thumb = await fetch(thumbUrl);
  assert.equal(thumb.headers.get('content-type'), 'image/png');
  const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height], ['png', 50, 25]);
  const crop = await fetch(`${sent.body.url}?imageView/1/w/30/h/30/q/80/format/webp`);
  const cropped = await sharp(Buffer.from(await crop.arrayBuffer())).metadata();
  assert.deepEqual([crop.headers.get('content-type'), cropped.format, cropped.width, cropped.height], ['image/webp', 'webp', 30, 30]);
  assert.deepEqual(await listed(`roost/.thumbs/${key}/`), [`roost/.thumbs/${key}/c30x30q80.webp`, `roost/.thumbs/${key}/f50x50q100.png`]);

  for (const [query, status, error] of [
    ['imageView/2/w/0/h/10', 400, 'A thumbnail is asked as imageView/<1|2>/w/<1-4096>/h/<1-4096>[/q/<1-100>][/format/png|jpg|webp|gif], w×h at most 8388608 pixels.'],
    ['imageView/2/w/10/h/10/format/bmp', 400, 'A thumbnail is asked as imageView/<1|2>/w/<1-4096>/h/<1-4096>[/q/<1-100>][/format/png|jpg|webp|gif], w×h at most 8388608 pixels.'],
  ] as const) {
    const refused = await fetch(`${sent.body.url}?${query}`, { redirect: 'manual' });
    assert.deepEqual([refused.status, await refused.json()], [status, { code: 1, error }], query);
  }
  const text = await sendBytes(signed.client, 'POST', '/1.1/files/plain.txt', 'not an image');
  const notImage = await fetch(`${text.body.url}?imageView/2/w/10/h/10`, { redirect: 'manual' });
  assert.deepEqual([notImage.status, await notImage.json()], [400, { code: 1, error: 'This file is not an image a thumbnail can be made of.' }]);
  const missing = await fetch(`${signed.url}/files/${signed.appId}/${'x'.repeat(40)}.png?imageView/2/w/10/h/10`, { redirect: 'manual' });
  assert.equal(missing.status, 404);

  // At most 16 sizes of one file, as on local disk (the URL is public).
  for (let side = 1; side <= 14; side++) assert.equal((await fetch(`${sent.body.url}?imageView/2/w/${side}/h/${side}`, { redirect: 'manual' })).status, 302);
  const seventeenth = await fetch(`${sent.body.url}?imageView/2/w/99/h/99`, { redirect: 'manual' });
  assert.deepEqual([seventeenth.status, (await seventeenth.json()).error], [400, 'At most 16 thumbnail sizes are made of one file.']);
  assert.equal((await fetch(`${sent.body.url}?imageView/2/w/1/h/1`, { redirect: 'manual' })).status, 302, 'a kept size is still served');

  // Deleting the file deletes its thumbnails.
  assert.deepEqual((await signed.master.delete(`/1.1/files/${sent.body.objectId}`)).body, {});
  assert.deepEqual(await listed(`roost/.thumbs/${key}/`), []);
  assert.deepEqual(await listed(`roost/${key}`), []);
});

test('thumbnailURL on a public bucket: the URL is the bucket\'s, which ignores the query (no thumbnail)', async () => {
  const png = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#0c0' } }).png().toBuffer();
  const sent = await sendBytes(open.client, 'POST', '/1.1/files/small.png', png);
  const served = await fetch(`${sent.body.url}?imageView/2/w/5/h/5/q/100/format/png`);
  assert.ok(Buffer.from(await served.arrayBuffer()).equals(png));
});
