// The local-disk backend's file writer (src/files/synced-file.ts): flushed in the background every 16 MiB while it
// grows, fsynced before 'finish'. Its bytes are the stream's, split any way and past several flushes; it never
// writes over a file that exists; a source that fails midway leaves its descriptor closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SyncedFile } from '../src/files/synced-file.ts';

const MiB = 1024 * 1024;
const folder = mkdtempSync(join(tmpdir(), 'roost-synced-file-'));
test.after(() => rmSync(folder, { recursive: true, force: true }));

function* pieces(bytes: Buffer, sizes: number[]): Generator<Buffer> {
  let offset = 0;
  for (let i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length];
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

const openFiles = () => readdirSync('/proc/self/fd').length;

test('a file past several background flushes holds the stream’s bytes, whatever the chunks', async () => {
  const bytes = randomBytes(40 * MiB + 12345);
  for (const [name, sizes] of [['socket-sized', [65536]], ['odd', [7, 300_001, 3 * MiB + 5]]] as const) {
    const path = join(folder, name);
    await pipeline(Readable.from(pieces(bytes, [...sizes])), new SyncedFile(path, MiB));
    assert.ok(readFileSync(path).equals(bytes), name);
  }
  const empty = join(folder, 'empty');
  await pipeline(Readable.from([]), new SyncedFile(empty, MiB));
  assert.equal(readFileSync(empty).length, 0);
});

test('a file that exists is refused and left as it was', async () => {
  const path = join(folder, 'taken');
  writeFileSync(path, 'kept');
  await assert.rejects(pipeline(Readable.from([Buffer.from('other')]), new SyncedFile(path, MiB)), { code: 'EEXIST' });
  assert.equal(readFileSync(path, 'utf8'), 'kept');
});

test('a source that fails midway (past a flush) fails the write and closes the file', async () => {
  const before = openFiles();
  async function* dropped() {
    for (let i = 0; i < 20; i++) yield randomBytes(MiB);
    throw new Error('connection dropped');
  }
  const writer = new SyncedFile(join(folder, 'dropped'), MiB);
  await assert.rejects(pipeline(Readable.from(dropped()), writer), /connection dropped/);
  // pipeline answers at the first error; the file closes once a background flush under way has returned.
  if (!writer.closed) await new Promise((resolve) => writer.once('close', resolve));
  assert.equal(openFiles(), before);
});
