// Files (#20): the throughput of a file upload (POST /1.1/files/<name>, bytes streamed to the local-disk backend)
// and of its download (GET of its URL) against a bare fs stream copy of the same bytes on the same disk, and the
// server's memory above idle while a large upload streams through. Targets (issue #20): at least 70% of the copy,
// under 64 MiB above idle.
//
//   npm run bench:files                   # prints the table
//   npm run bench:files -- --record       # also rewrites the "files" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_FILE_MIB size of the timed file (100), BENCH_BIG_MIB size of the memory run (500),
// BENCH_ROUNDS (3). The folder is the system's temporary folder (TMPDIR): the copy, the upload and the download all
// read and write there.
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { buildRoost, cleanup, createRoostApp, envNumber, fixed, log, machine, median, recordSection, roostEnv, startRoost, table, type AppKeys } from './lib.ts';

const fileMib = envNumber('BENCH_FILE_MIB', 100);
const bigMib = envNumber('BENCH_BIG_MIB', 500);
const rounds = envNumber('BENCH_ROUNDS', 3);
const record = process.argv.includes('--record');
const MiB = 1024 * 1024;

/** Writes `mib` MiB of random bytes (1 MiB repeated with a counter: incompressible enough, cheap to make). */
async function makeFile(path: string, mib: number): Promise<void> {
  const block = randomBytes(MiB);
  const out = createWriteStream(path);
  for (let i = 0; i < mib; i++) {
    block.writeUInt32BE(i, 0);
    if (!out.write(Buffer.from(block))) await new Promise((resolve) => out.once('drain', resolve));
  }
  out.end();
  await new Promise((resolve) => out.once('finish', resolve));
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** Streams a file as the body of POST /1.1/files/<name>; answers the record's URL. */
function upload(url: string, keys: AppKeys, path: string, size: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const target = new URL(`${url}/1.1/files/bench.bin`);
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'X-LC-Id': keys.appId, 'X-LC-Key': keys.masterKey + ',master', 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text).url as string) : reject(new Error(`${res.statusCode} ${text}`))));
      },
    );
    req.on('error', reject);
    createReadStream(path).pipe(req);
  });
}

/** GETs a file's URL into `path` with node:http, as the upload sends (fetch's web streams would measure the client). */
function download(url: string, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
      pipeline(res, createWriteStream(path)).then(resolve, reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The process's resident memory in bytes (Linux /proc). */
function rss(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-files-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const store = { sqlitePath: join(dir, 'roost.sqlite') };
    process.env.FILES_DIR = join(dir, 'files');
    const keys = createRoostApp(roostEnv(store));
    const server = await startRoost('roost', store);
    stack.push(() => server.stop());

    const source = join(dir, 'source.bin');
    log(`writing a ${fileMib} MiB file`);
    await makeFile(source, fileMib);
    const size = fileMib * MiB;
    const copy: number[] = [];
    const up: number[] = [];
    const down: number[] = [];
    for (let round = 0; round < rounds; round++) {
      copy.push(await timed(() => pipeline(createReadStream(source), createWriteStream(join(dir, 'copy.bin')))));
      let url = '';
      up.push(await timed(async () => (url = await upload(server.url, keys, source, size))));
      down.push(await timed(() => download(url, join(dir, 'download.bin'))));
      rmSync(join(dir, 'copy.bin'));
      rmSync(join(dir, 'download.bin'));
      log(`round ${round + 1}: copy ${fixed(copy[round], 2)} s, upload ${fixed(up[round], 2)} s, download ${fixed(down[round], 2)} s`);
    }
    const rate = (seconds: number) => fileMib / seconds;
    const copyRate = rate(median(copy));

    log(`memory: a ${bigMib} MiB upload`);
    const big = join(dir, 'big.bin');
    rmSync(source);
    await makeFile(big, bigMib);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idle = rss(server.pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(server.pid))), 20);
    await upload(server.url, keys, big, bigMib * MiB);
    clearInterval(sampler);

    const rows = [
      ['fs stream copy', fixed(copyRate, 0), '100%'],
      ['upload (POST /1.1/files/<name>)', fixed(rate(median(up)), 0), `${fixed((100 * rate(median(up))) / copyRate, 0)}%`],
      ['download (GET its URL)', fixed(rate(median(down)), 0), `${fixed((100 * rate(median(down))) / copyRate, 0)}%`],
    ];
    const text = [
      `${fileMib} MiB file, median of ${rounds} rounds, SQLite, local-disk backend on the same disk; ${machine()}.`,
      '',
      table(['path', 'MiB/s', 'of the copy'], rows),
      '',
      `Memory during a ${bigMib} MiB upload: idle ${fixed(idle / MiB, 0)} MiB, peak ${fixed(peak / MiB, 0)} MiB, ${fixed((peak - idle) / MiB, 0)} MiB above idle (target: under 64).`,
    ].join('\n');
    process.stdout.write(text + '\n');
    if (record) recordSection('files', `### Files (bench/files.ts)\n\n${text}`);
  } finally {
    await stopAll();
  }
}

await main();
