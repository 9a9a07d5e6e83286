// The FileBackend interface (src/files/backend.ts) on local disk and on an S3-compatible store (s3rver, started
// here): bytes kept and read back whole or by range, size and MD5, all or nothing (too large, a source that fails
// halfway: nothing under the key, no part left over), delete of what is there and of what is not, keys that
// could leave the backend's folder refused.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TooLarge, type FileBackend } from '../../src/files/backend.ts';
import { LocalDiskBackend } from '../../src/files/local-disk.ts';
import { S3Backend } from '../../src/files/s3.ts';
import { startS3, type TestS3 } from '../helpers/s3.ts';
import sharp from 'sharp';

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const options = { contentType: 'application/octet-stream', maxBytes: 64 * 1024 * 1024 };

/** A source that sends `bytes` in chunks, then fails instead of ending (a dropped upload). */
function failingAfter(bytes: Buffer): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(bytes);
      } else setTimeout(() => this.destroy(new Error('connection dropped')), 10);
    },
  });
}

function conformance(name: string, open: () => Promise<{ backend: FileBackend; leftovers(): Promise<string[]>; close(): Promise<void> }>) {
  describe(name, () => {
    let backend: FileBackend;
    let opened: Awaited<ReturnType<typeof open>>;
    before(async () => {
      opened = await open();
      backend = opened.backend;
    });
    after(() => opened?.close());
    const key = (suffix = '.bin') => `app1/${randomBytes(8).toString('hex')}${suffix}`;

    test('put keeps the bytes, with their size and MD5; get reads them whole and by range; head knows the size', async () => {
      const bytes = randomBytes(300_000);
      const at = key();
      assert.deepEqual(await backend.put(at, Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), options), { size: bytes.length, md5: md5(bytes) });
      assert.deepEqual(await backend.head(at), { size: bytes.length });
      assert.ok((await buffer((await backend.get(at))!)).equals(bytes));
      assert.ok((await buffer((await backend.get(at, { start: 1000, end: 1999 }))!)).equals(bytes.subarray(1000, 2000)));
    });

    test('an empty file is a file', async () => {
      const at = key('.txt');
      assert.deepEqual(await backend.put(at, Readable.from([]), options), { size: 0, md5: md5(Buffer.alloc(0)) });
      assert.deepEqual(await backend.head(at), { size: 0 });
    });

    test('a file past several multipart parts streams through', async () => {
      const bytes = randomBytes(12 * 1024 * 1024);
      const at = key();
      const chunks = Array.from({ length: 48 }, (_, i) => bytes.subarray(i * 256 * 1024, (i + 1) * 256 * 1024));
      assert.deepEqual(await backend.put(at, Readable.from(chunks), options), { size: bytes.length, md5: md5(bytes) });
      assert.ok((await buffer((await backend.get(at))!)).equals(bytes));
    });

    test('more than maxBytes is TooLarge and leaves nothing under the key', async () => {
      const at = key();
      await assert.rejects(backend.put(at, Readable.from([randomBytes(600), randomBytes(600)]), { ...options, maxBytes: 1000 }), TooLarge);
      assert.equal(await backend.head(at), null);
      assert.equal(await backend.get(at), null);
      assert.deepEqual(await opened.leftovers(), []);
    });

    test('a source failing halfway leaves nothing under the key', async () => {
      const at = key();
      await assert.rejects(backend.put(at, failingAfter(randomBytes(6 * 1024 * 1024)), options), /connection dropped/);
      assert.equal(await backend.head(at), null);
      assert.deepEqual(await opened.leftovers(), []);
    });

    test('delete removes the bytes; deleting what is not there succeeds', async () => {
      const at = key();
      await backend.put(at, Readable.from([Buffer.from('bye')]), options);
      await backend.delete(at);
      assert.equal(await backend.head(at), null);
      await backend.delete(at);
      await backend.delete(key());
    });

    test("deleteApp removes every key of the application and nothing of another's", async () => {
      const gone = ['appgone/a.bin', 'appgone/b.txt'];
      for (const at of [...gone, 'appkept/c.bin']) await backend.put(at, Readable.from([Buffer.from(at)]), options);
      await backend.deleteApp('appgone');
      for (const at of gone) assert.equal(await backend.head(at), null, at);
      assert.deepEqual(await backend.head('appkept/c.bin'), { size: 'appkept/c.bin'.length });
      await backend.deleteApp('appgone');
    });

    test('keys that could leave the backend are refused; a kept name (keepFileName) is a key', async () => {
      const bad = ['../x', 'app1/../../x', 'app1/a/b/c', '/etc/passwd', 'app1/.', 'app1/..', 'app1/a/..', 'app1/a/.env', 'app1//x', 'app1/a/',
        'app1/a\\b', 'app1/a\u0000b', 'app1/a\nb', '.thumbs/x', 'app1/a.b/c', 'app1/a/' + 'x'.repeat(256), 'app1/' + 'a'.repeat(65) + '/x', 'x'];
      for (const at of bad) {
        await assert.rejects(backend.put(at, Readable.from([Buffer.from('x')]), options), /invalid file key/, at);
        await assert.rejects(backend.get(at), /invalid file key/, at);
        await assert.rejects(backend.delete(at), /invalid file key/, at);
      }
      const kept = `app1/${randomBytes(8).toString('hex')}/中文 (1) 100%.txt`;
      await backend.put(kept, Readable.from([Buffer.from('kept')]), options);
      assert.equal((await buffer((await backend.get(kept))!)).toString(), 'kept');
      assert.ok(backend.url(kept).endsWith(`/${encodeURIComponent('中文 (1) 100%.txt')}`));
      await backend.delete(kept);
      assert.equal(await backend.head(kept), null);
    });

    test('thumbnailUrl (where a backend has it): made from the kept image, gone with the app', async (t) => {
      if (!backend.thumbnailUrl) return t.skip('this backend leaves thumbnails to Roost\'s own serving');
      const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: '#c00' } }).png().toBuffer();
      const at = 'appthumbs/wide.png';
      await backend.put(at, Readable.from([png]), options);
      const spec = { crop: false, width: 10, height: 10, quality: 100, format: 'png' } as const;
      const url = await backend.thumbnailUrl(at, spec);
      assert.equal(typeof url, 'string');
      const meta = await sharp(Buffer.from(await (await fetch(url as string)).arrayBuffer())).metadata();
      assert.deepEqual([meta.width, meta.height], [10, 5]);
      assert.equal(await backend.thumbnailUrl('appthumbs/gone.png', spec), null);
      await backend.put('appthumbs/text.txt', Readable.from([Buffer.from('no image')]), options);
      assert.equal(await backend.thumbnailUrl('appthumbs/text.txt', spec), 'notImage');
      await backend.deleteApp('appthumbs');
      assert.equal((await fetch(url as string)).status, 404);
    });

    test('url names the key under the public address', async () => {
      assert.match(backend.url('app1/abc.png'), /\/app1\/abc\.png$/);
    });
  });
}

conformance('local disk', async () => {
  const root = await mkdtemp(join(tmpdir(), 'roost-backend-'));
  return {
    backend: new LocalDiskBackend(root, () => 'http://files.example'),
    leftovers: async () => (await readdir(join(root, '.partial')).catch(() => [])) as string[],
    close: () => rm(root, { recursive: true, force: true }),
  };
});

conformance('S3-compatible (s3rver)', async () => {
  const s3: TestS3 = await startS3();
  const backend = new S3Backend(
    {
      bucket: s3.bucket,
      prefix: 'roost/',
      region: 'us-east-1',
      endpoint: s3.endpoint,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      publicUrl: null,
      signedUrlSeconds: 60,
    },
    () => 'http://files.example',
  );
  return {
    backend,
    // s3rver lists no multipart uploads (nor aborts them): what a failed put leaves is checked by the key alone.
    leftovers: async () => [],
    close: async () => {
      await backend.close();
      await s3.close();
    },
  };
});
