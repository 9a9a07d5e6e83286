// roost files mirror (issue #20 point 5): imported `_File` records whose URLs point at the old CDN (a local server
// here, with a slow file, a 404 and a connection dropped halfway) get their bytes copied into the backend and their
// url updated; failures are reported (exit 1) and leave the record as it was; a second run resumes, copying only
// what is still elsewhere; File values in other objects follow the record; external files stay unless asked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { filesFolder, filesUnder } from './helpers/files.ts';
import { roostCli } from './helpers/cli.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { mirrorFiles } from '../src/files/mirror.ts';
import { openFileBackend } from '../src/files/open-backend.ts';
import type { FileBackend } from '../src/files/backend.ts';

let database: TestDatabase;
let server: TestServer;
let folder: string;
let cdn: Server;
let cdnUrl: string;
/** The old CDN's files; `drop` answers half its bytes then closes, `missing` 404s until `restored`. */
let restored = false;

before(async () => {
  folder = await filesFolder();
  database = await testDatabase();
  server = await startServer({ database, env: { FILES_DIR: folder } });
  cdn = createServer((request, response) => {
    const path = request.url ?? '';
    if (path === '/a.txt') return void response.end('alpha');
    if (path === '/slow.bin') {
      response.writeHead(200, { 'Content-Length': '6' });
      let sent = 0;
      const tick = setInterval(() => {
        response.write('s');
        if (++sent === 6) {
          clearInterval(tick);
          response.end();
        }
      }, 60);
      return;
    }
    if (path === '/missing.png' && restored) return void response.end('png!');
    if (path === '/drop.bin') {
      response.writeHead(200, { 'Content-Length': '1000' });
      response.write(Buffer.alloc(300, 1));
      setTimeout(() => response.socket?.destroy(), 50);
      return;
    }
    if (path === '/stall.bin') {
      response.writeHead(200, { 'Content-Length': '10' });
      response.write('12345');
      return; // never ends
    }
    response.statusCode = 404;
    response.end('not found');
  });
  await new Promise<void>((resolve) => cdn.listen(0, '127.0.0.1', resolve));
  cdnUrl = `http://127.0.0.1:${(cdn.address() as AddressInfo).port}`;
});
after(async () => {
  cdn?.closeAllConnections();
  await new Promise((resolve) => cdn?.close(resolve));
  await server?.close();
  await database?.drop();
});

const record = (name: string, path: string, extra: Record<string, unknown> = {}) => ({
  name,
  url: `${cdnUrl}${path}`,
  mime_type: 'application/octet-stream',
  key: `hosted-${name}`,
  bucket: 'hosted',
  metaData: { owner: 'unknown', size: 0, ...((extra.metaData as object) ?? {}) },
});

const mirror = (...args: string[]) =>
  roostCli({ ...database.env, FILES_DIR: folder, ROOST_SECRET: server.config.secret, PUBLIC_URL: server.url }, 'files', 'mirror', '--app', server.appId, '--timeout', '2000', ...args);

test('mirror copies what it can, reports what failed, and resumes', async () => {
  // The records arrive as the hosted export has them, through roost import.
  const rows = [
    record('a.txt', '/a.txt'),
    record('slow.bin', '/slow.bin'),
    record('missing.png', '/missing.png'),
    record('drop.bin', '/drop.bin'),
    record('stall.bin', '/stall.bin'),
    { ...record('ext.jpg', '/a.txt'), metaData: { __source: 'external', size: 0 } },
  ].map((row, i) => ({ objectId: `5f0000000000000000000${i}`.padEnd(24, '0'), createdAt: '2020-01-01T00:00:00.000Z', updatedAt: '2020-01-01T00:00:00.000Z', ...row }));
  const exported = join(folder, '..', `_File-${process.pid}.jsonl`);
  await writeFile(exported, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
  const imported = await roostCli({ ...database.env, ROOST_SECRET: server.config.secret }, 'import', '--app', server.appId, '--class', '_File', exported);
  await rm(exported);
  assert.equal(imported.code, 0, imported.stderr);
  const [a, slow, missing, drop, stall, external] = rows.map((row) => row.objectId);
  const holder = await server.client.post('/1.1/classes/Album', { cover: { __type: 'File', id: a } });

  const first = await mirror('--parallel', '2');
  assert.equal(first.code, 1, first.stderr);
  const report = JSON.parse(first.stdout);
  assert.deepEqual([report.seen, report.mirrored, report.skipped, report.failed], [6, 2, 1, 3]);
  assert.deepEqual(
    report.failures.map((failure: { objectId: string; error: string }) => [failure.objectId, failure.error]).sort(),
    [
      [missing, 'HTTP 404'],
      [drop, report.failures.find((f: { objectId: string }) => f.objectId === drop).error],
      [stall, 'stalled'],
    ].sort(),
  );
  assert.match(first.stderr, /6 looked at, 2 mirrored, 1 skipped, 3 failed/);

  const mirrored = (await server.master.get(`/1.1/files/${a}`)).body;
  assert.equal(mirrored.url, `${server.url}/files/${mirrored.key}`);
  assert.deepEqual([mirrored.provider, mirrored.metaData.size, mirrored.metaData.mirroredFrom], ['local', 5, `${cdnUrl}/a.txt`]);
  assert.equal(await (await fetch(mirrored.url)).text(), 'alpha');
  assert.equal(await (await fetch((await server.master.get(`/1.1/files/${slow}`)).body.url)).text(), 'ssssss');
  // Failed ones are untouched: same url, and no bytes left behind.
  assert.equal((await server.master.get(`/1.1/files/${drop}`)).body.url, `${cdnUrl}/drop.bin`);
  assert.equal((await server.master.get(`/1.1/files/${external}`)).body.url, `${cdnUrl}/a.txt`);
  assert.deepEqual((await filesUnder(folder)).filter((path) => path.startsWith('.partial/')), []);
  assert.equal((await filesUnder(folder)).length, 2);
  // The object holding the file answers the new url.
  assert.equal((await server.client.get(`/1.1/classes/Album/${holder.body.objectId}`)).body.cover.url, mirrored.url);

  restored = true;
  const second = await mirror();
  assert.equal(second.code, 1, second.stderr);
  assert.notEqual(second.stdout, '', second.stderr);
  const resumed = JSON.parse(second.stdout);
  assert.deepEqual([resumed.mirrored, resumed.skipped, resumed.failed], [1, 3, 2]);
  assert.equal(await (await fetch((await server.master.get(`/1.1/files/${missing}`)).body.url)).text(), 'png!');

  const third = await mirror('--external');
  assert.equal(third.code, 1, third.stderr);
  const withExternal = JSON.parse(third.stdout);
  assert.equal(withExternal.mirrored, 1);
  assert.equal((await server.master.get(`/1.1/files/${external}`)).body.provider, 'local');
});

test('a connection dropped before the backend starts reading fails that file, not the run', async () => {
  // Runs after the test above: drop.bin and stall.bin are still there to fail. The backend here begins reading
  // only once the drop has happened, as a loaded machine's local disk did (its folder made first) in CI.
  const disk = await openFileBackend(server.config);
  const late: FileBackend = Object.assign(Object.create(disk) as FileBackend, {
    put: async (...args: Parameters<FileBackend['put']>) => {
      await sleep(400);
      return disk.put(...args);
    },
  });
  const report = await mirrorFiles({ store: server.store, backend: late, appId: server.appId, parallel: 4, idleTimeoutMs: 2000, external: false, now: () => Date.now(), onProgress: () => {} });
  assert.deepEqual([report.mirrored, report.failed], [0, 2]);
  assert.deepEqual(report.failures.map((failure) => failure.url).sort(), [`${cdnUrl}/drop.bin`, `${cdnUrl}/stall.bin`]);
});

test('bad arguments are usage errors; an unknown app is refused', async () => {
  assert.equal((await roostCli(database.env, 'files', 'mirror')).code, 2);
  assert.equal((await roostCli(database.env, 'files', 'mirror', '--app', server.appId, '--parallel', '0')).code, 2);
  const unknown = await roostCli(database.env, 'files', 'mirror', '--app', 'nope');
  assert.deepEqual([unknown.code, unknown.stderr], [1, 'roost: no application with id nope\n']);
});
