#!/usr/bin/env node
// The password-hash limit of bench/accounts.ts: how many argon2id checks per second this machine
// does with Roost's own parameters (imported from the build), through the same binding and the
// same libuv thread pool a Roost process uses. A login costs one check, so this is the ceiling
// of login throughput. Runs in its own process, like the servers.
//   node bench/hash-limit.js ROOST_DIR CONCURRENCY SECONDS   → prints one JSON line
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { hash, verify } from '@node-rs/argon2';

const [dir = process.cwd(), concurrencyArg = '16', secondsArg = '10'] = process.argv.slice(2);
const passwords = await import(pathToFileURL(join(dir, 'dist', 'accounts', 'passwords.js')).href);
const { passwordParams } = passwords;
// Roost runs at most hashParallelism() hashes at once (one per core); older builds let all requests at
// libuv's pool. The limit is the better of the two ways on this machine, so neither flatters Roost.
const parallel = passwords.hashParallelism?.() ?? null;
const concurrency = Number(concurrencyArg);
const seconds = Number(secondsArg);

const password = 'bench-password-1';
const stored = await hash(password, passwordParams);
// Warm the thread pool and the allocator first.
await Promise.all(Array.from({ length: concurrency }, () => verify(stored, password)));

/** Checks per second with `workers` checks in flight for `span` seconds. */
async function measure(workers, span) {
  let done = 0;
  const started = process.hrtime.bigint();
  const deadline = Date.now() + span * 1000;
  async function worker() {
    while (Date.now() < deadline) {
      if (!(await verify(stored, password))) throw new Error('verify failed');
      done++;
    }
  }
  const cpuBefore = process.cpuUsage();
  await Promise.all(Array.from({ length: workers }, worker));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  return { workers, hashes: done, seconds: elapsed, rate: done / elapsed, cpu: (cpu.user + cpu.system) / 1e6 / elapsed };
}
const ways = parallel === null || parallel >= concurrency ? [await measure(concurrency, seconds)] : [await measure(concurrency, seconds / 2), await measure(parallel, seconds / 2)];
const best = ways.reduce((a, b) => (b.rate > a.rate ? b : a));
process.stdout.write(
  JSON.stringify({
    params: passwordParams,
    threads: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
    ...best,
    ways: ways.map((way) => ({ workers: way.workers, rate: way.rate })),
  }) + '\n',
);
