// The MD5 of an upload's bytes (src/files/md5.ts): hashed on a worker thread past the first MiB, on the event
// loop below it; every split of the bytes, files on a batch boundary, uploads hashed at once and one that fails
// midway answer as createHash does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Md5 } from '../src/files/md5.ts';

const MiB = 1024 * 1024;
const expected = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

async function hashed(bytes: Buffer, chunkSizes: number[]): Promise<string> {
  const hash = new Md5();
  let offset = 0;
  for (let i = 0; offset < bytes.length; i++) {
    const size = chunkSizes[i % chunkSizes.length];
    await hash.update(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return hash.digest();
}

test('every size around the batch boundary, split any way, hashes as createHash', async () => {
  for (const size of [0, 1, MiB - 1, MiB, MiB + 1, 2 * MiB, 3 * MiB + 12345]) {
    const bytes = randomBytes(size);
    assert.equal(await hashed(bytes, [65536]), expected(bytes), `${size} in 64 KiB chunks`);
    assert.equal(await hashed(bytes, [7, 300_001, 2 * MiB + 3]), expected(bytes), `${size} in odd chunks`);
  }
});

test('a file far past the in-flight bound waits for the worker and still hashes right', async () => {
  const bytes = randomBytes(40 * MiB);
  assert.equal(await hashed(bytes, [4 * MiB + 1]), expected(bytes));
});

test('uploads hashed at once, and one aborted among them, do not mix', async () => {
  const files = Array.from({ length: 4 }, (_, i) => randomBytes(3 * MiB + i));
  const aborted = new Md5();
  await aborted.update(randomBytes(2 * MiB));
  const answers = Promise.all(files.map((bytes, i) => hashed(bytes, [100_000 + i * 999])));
  aborted.abort();
  assert.deepEqual(await answers, files.map(expected));
});

test('the caller’s chunks are left as they were (the worker gets copies)', async () => {
  const bytes = randomBytes(3 * MiB);
  const copy = Buffer.from(bytes);
  await hashed(bytes, [MiB]);
  assert.ok(bytes.equals(copy));
  assert.equal(bytes.length, 3 * MiB);
});
