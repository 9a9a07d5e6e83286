// Device simulators for the push benchmarks: `roost devices simulate` processes whose JSON lines
// (connected, received, stats) the benchmark waits on, and a process's resident memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { root } from './lib.ts';

export interface Simulator {
  child: ChildProcess;
  events: Array<Record<string, any>>;
  waitFor(predicate: (event: Record<string, any>) => boolean, timeoutMs: number): Promise<Record<string, any>>;
}

export function startSimulator(
  url: string,
  keys: { appId: string; appKey: string },
  start: number,
  count: number,
  options: { protocol?: 'own' | 'lc'; concurrency?: number; prefix?: string } = {},
): Simulator {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'devices', 'simulate', '--url', url, '--app-id', keys.appId, '--app-key', keys.appKey,
      '--count', String(count), '--start', String(start), '--prefix', options.prefix ?? 'bench-',
      '--concurrency', String(options.concurrency ?? 250), '--protocol', options.protocol ?? 'own'],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const events: Array<Record<string, any>> = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    events.push(JSON.parse(line));
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    child,
    events,
    async waitFor(predicate, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(predicate);
        if (found) return found;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error('simulator: timed out');
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
  };
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}
