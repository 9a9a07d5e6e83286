// Files (#20): the throughput of a file upload (POST /1.1/files/<name>, bytes streamed to the local-disk backend)
// and of its download (GET of its URL) against a bare fs stream copy of the same bytes on the same disk, and the
// server's memory above idle while a large upload streams through. Targets (issue #20): at least 70% of the copy,
// under 64 MiB above idle.
//
//   npm run bench:files                   # prints the table
//   npm run bench:files -- --record       # also rewrites the "files" section of bench/RESULTS.md
//
// Knobs (environment): BENCH_FILE_MIB size of the timed file (100), BENCH_BIG_MIB size of the memory run (500),
// BENCH_ROUNDS (15), BENCH_PROFILE=1 (the server writes a CPU profile into bench/profiles/, see profile-top.js).
//
// How it is measured: a 100 MiB copy takes 0.15–0.3 s, so one round is mostly noise. Each round times every path
// back to back, in an order that rotates from round to round, and the figure is the median of the per-round ratios
// (copy seconds / path seconds), with their spread; an untimed round first warms the JIT and the page cache. Like
// for like: everything reads and writes in one folder of the system's temporary folder (TMPDIR), the server's
// FILES_DIR included; the copy is fs.createReadStream → fs.createWriteStream with the defaults, and beside it the same
// copy made durable as an upload is before it is answered (fsync of the file, then of its folder): the headline ratio
// is against the first, as the issue states it, the second column against the other. Each round downloads
// the file an earlier upload made, then deletes it (DELETE /1.1/files/<id>), so the disk holds the same bytes from
// round to round.
//
// The clients. The server is measured with curl (the headline rows): a C client that reads the file and the socket
// without a runtime's per-chunk cost, as a real uploader or downloader would. The same transfers with node:http
// (64 KiB socket reads, stream plumbing, GC) are timed beside them: on 2 cores that client takes a core's worth of
// time from the server, so its rows measure client and server together. curl's time counts its start (a few ms).
// The MD5 row is the upload's floor: the server hashes every byte (metaData._checksum) on one core, so an upload
// cannot finish before createHash('md5') has gone over the same bytes in memory.
import { createReadStream, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createHash, randomBytes } from 'node:crypto';
import { buildRoost, cleanup, cpuTime, createRoostApp, envNumber, fixed, log, machine, median, profileArgs, recordSection, roostEnv, startRoost, table, type AppKeys } from './lib.ts';

const fileMib = envNumber('BENCH_FILE_MIB', 100);
const bigMib = envNumber('BENCH_BIG_MIB', 500);
const rounds = envNumber('BENCH_ROUNDS', 15);
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

interface Uploaded {
  url: string;
  objectId: string;
}

/** Streams a file as the body of POST /1.1/files/<name>; answers the record's URL and id. */
function upload(url: string, keys: AppKeys, path: string, size: number): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const target = new URL(`${url}/1.1/files/bench.bin`);
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'X-LC-Id': keys.appId, 'X-LC-Key': keys.masterKey + ',master', 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => (res.statusCode === 201 ? resolve(JSON.parse(text) as Uploaded) : reject(new Error(`${res.statusCode} ${text}`))));
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

/**
 * The copy as an upload keeps its bytes: the file flushed (fsync) before it is closed, then its folder, as
 * LocalDiskBackend.put does before the upload is answered. The headline ratio stays against the copy without.
 */
async function syncedCopy(source: string, target: string): Promise<void> {
  await pipeline(createReadStream(source), createWriteStream(target, { flush: true }));
  const folder = await open(dirname(target), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/** Runs curl; answers what it printed (the body of an answer when it failed: --fail-with-body). */
function curl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '--fail-with-body', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`curl ${args.join(' ')}: exit ${code} ${out}`))));
  });
}

/** The upload with curl: -T streams the file (--data-binary would read it all first); no Expect: 100-continue round trip. */
async function curlUpload(url: string, keys: AppKeys, path: string): Promise<Uploaded> {
  const headers = [`X-LC-Id: ${keys.appId}`, `X-LC-Key: ${keys.masterKey},master`, 'Content-Type: application/octet-stream', 'Expect:'];
  return JSON.parse(await curl(['-X', 'POST', '-T', path, ...headers.flatMap((header) => ['-H', header]), `${url}/1.1/files/bench.bin`])) as Uploaded;
}

async function curlDownload(url: string, path: string): Promise<void> {
  await curl(['-o', path, url]);
}

/** CPU seconds of this process and of the children it has waited for (curl), from /proc/self/stat. */
function clientCpuTime(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = process.cpuUsage();
  return (own.user + own.system) / 1e6 + (Number(fields[13]) + Number(fields[14])) / 100; // cutime + cstime, USER_HZ 100
}

/** CPU seconds of each thread of a process by thread id, the event loop's split into user and system (Linux /proc). */
function threadCpu(pid: number): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const [user, system] = [Number(fields[11]) / 100, Number(fields[12]) / 100];
      if (tid === String(pid)) seconds.set('user', user).set('system', system);
      else seconds.set(tid, user + system);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return seconds;
}

/**
 * Where an upload's server CPU went: the event loop (user, system), the busiest other thread (the MD5 worker: it
 * hashes every byte) and the rest (libuv's file writes, V8's helpers).
 */
function uploadThreads(before: Map<string, number>, after: Map<string, number>): Record<'user' | 'system' | 'worker' | 'rest', number> {
  const spent = [...after].map(([tid, seconds]) => [tid, seconds - (before.get(tid) ?? 0)] as const);
  const others = spent.filter(([tid]) => tid !== 'user' && tid !== 'system').map(([, seconds]) => seconds);
  const worker = Math.max(0, ...others);
  const own = (name: string) => spent.find(([tid]) => tid === name)?.[1] ?? 0;
  return { user: own('user'), system: own('system'), worker, rest: others.reduce((a, b) => a + b, 0) - worker };
}

/** The MD5 of the file's bytes in memory, in 1 MiB updates as the server's hashing worker takes them. */
function md5Of(bytes: Buffer): string {
  const hash = createHash('md5');
  for (let offset = 0; offset < bytes.length; offset += MiB) hash.update(bytes.subarray(offset, offset + MiB));
  return hash.digest('hex');
}

/** The process's resident memory in bytes (Linux /proc). */
function rss(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** Deletes an uploaded file (record and bytes). */
async function remove(url: string, keys: AppKeys, objectId: string): Promise<void> {
  const response = await fetch(`${url}/1.1/files/${objectId}`, { method: 'DELETE', headers: { 'X-LC-Id': keys.appId, 'X-LC-Key': keys.masterKey + ',master' } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`DELETE file ${objectId}: ${response.status}`);
}

/** The value below which `share` of the sorted values lie (nearest rank). */
function quantile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))];
}

type PathName = 'copy' | 'syncedCopy' | 'md5' | 'upload' | 'download' | 'nodeUpload' | 'nodeDownload';
const paths: PathName[] = ['copy', 'syncedCopy', 'md5', 'upload', 'download', 'nodeUpload', 'nodeDownload'];
const labels: Record<PathName, [string, string]> = {
  copy: ['fs stream copy', 'fs streams, defaults'],
  syncedCopy: ['fs stream copy, on the disk as an upload is', 'the same, fsync of file and folder'],
  md5: ["MD5 of the bytes, one core (the upload's floor)", 'createHash, in memory'],
  upload: ['upload (POST /1.1/files/<name>)', 'curl'],
  download: ['download (GET its URL)', 'curl'],
  nodeUpload: ['upload (POST /1.1/files/<name>)', 'node:http'],
  nodeDownload: ['download (GET its URL)', 'node:http'],
};

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
    const server = await startRoost('roost', store, profileArgs());
    stack.push(() => server.stop());

    const source = join(dir, 'source.bin');
    log(`writing a ${fileMib} MiB file`);
    await makeFile(source, fileMib);
    const size = fileMib * MiB;
    const bytes = readFileSync(source);
    const seconds = Object.fromEntries(paths.map((path) => [path, [] as number[]])) as Record<PathName, number[]>;
    const serverCpu = Object.fromEntries(paths.map((path) => [path, [] as number[]])) as Record<PathName, number[]>;
    const clientCpu = Object.fromEntries(paths.map((path) => [path, [] as number[]])) as Record<PathName, number[]>;
    const uploads: Array<ReturnType<typeof uploadThreads>> = [];
    let previous = await upload(server.url, keys, source, size);
    // Round 0 warms up and is not counted.
    for (let round = 0; round <= rounds; round++) {
      const made: Uploaded[] = [];
      const order = paths.map((_, i) => paths[(i + round) % paths.length]);
      const took: Partial<Record<PathName, number>> = {};
      for (const path of order) {
        const work: Record<PathName, () => Promise<unknown>> = {
          copy: () => pipeline(createReadStream(source), createWriteStream(join(dir, 'copy.bin'))),
          syncedCopy: () => syncedCopy(source, join(dir, 'copy.bin')),
          md5: async () => md5Of(bytes),
          upload: async () => made.push(await curlUpload(server.url, keys, source)),
          download: () => curlDownload(previous.url, join(dir, 'download.bin')),
          nodeUpload: async () => made.push(await upload(server.url, keys, source, size)),
          nodeDownload: () => download(previous.url, join(dir, 'download.bin')),
        };
        const cpuBefore = cpuTime(server.pid);
        const threadsBefore = threadCpu(server.pid);
        const clientBefore = clientCpuTime();
        took[path] = await timed(work[path]);
        if (round > 0) {
          seconds[path].push(took[path]);
          serverCpu[path].push(cpuTime(server.pid) - cpuBefore);
          clientCpu[path].push(clientCpuTime() - clientBefore);
          if (path === 'upload') uploads.push(uploadThreads(threadsBefore, threadCpu(server.pid)));
        }
        rmSync(join(dir, 'copy.bin'), { force: true });
        rmSync(join(dir, 'download.bin'), { force: true });
      }
      for (const uploaded of made) {
        await remove(server.url, keys, previous.objectId);
        previous = uploaded;
      }
      log(`round ${round}${round === 0 ? ' (warm-up)' : ''}: copy ${fixed(took.copy!, 3)} s; ` + order.filter((path) => path !== 'copy').map((path) => `${path} ${fixed(took[path]!, 3)} s (${fixed((100 * took.copy!) / took[path]!, 0)}%)`).join(', '));
    }
    await remove(server.url, keys, previous.objectId);
    const ratios = (path: PathName, yardstick: PathName = 'copy') => seconds[yardstick].map((copy, i) => copy / seconds[path][i]);
    const row = (path: PathName) => {
      const r = ratios(path);
      const pct = (value: number) => `${fixed(100 * value, 0)}%`;
      return [
        ...labels[path],
        fixed(fileMib / median(seconds[path]), 0),
        pct(median(r)),
        pct(median(ratios(path, 'syncedCopy'))),
        `${pct(quantile(r, 0.25))}–${pct(quantile(r, 0.75))}`,
        `${pct(Math.min(...r))}–${pct(Math.max(...r))}`,
        fixed(median(clientCpu[path]), 2),
        path === 'copy' || path === 'syncedCopy' || path === 'md5' ? '–' : fixed(median(serverCpu[path]), 2),
      ];
    };

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

    const text = [
      `${fileMib} MiB file, ${rounds} rounds after a warm-up, every path in rotating order within each round; SQLite, local-disk backend on the same disk; client CPU is the bench process's and the curl it ran; ${machine()}.`,
      '',
      table(
        ['path', 'client', 'MiB/s (median)', 'of the copy: median of per-round ratios', 'of the fsynced copy', 'middle half', 'min–max', 'client CPU s', 'server CPU s'],
        paths.map(row),
      ),
      '',
      `Where the curl upload's server CPU went (median per upload): event loop ${fixed(median(uploads.map((u) => u.user)), 2)} s user + ${fixed(median(uploads.map((u) => u.system)), 2)} s system, ` +
        `MD5 worker ${fixed(median(uploads.map((u) => u.worker)), 2)} s, other threads (libuv's file writes, V8) ${fixed(median(uploads.map((u) => u.rest)), 2)} s; curl ${fixed(median(clientCpu.upload), 2)} s.`,
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
