// CPU time of the processes under test and of PostgreSQL's, read from /proc (Linux only).
import { readdirSync, readFileSync } from 'node:fs';

/** A per-process CPU sampler: how busy each server under test was (from /proc, Linux only). */
export function cpuTime(pid: number): number {
  return statCpu(`/proc/${pid}/stat`);
}

/** utime + stime of a /proc stat file (a process's or a thread's), in seconds; NaN when it is gone. */
function statCpu(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in seconds (USER_HZ 100)
  } catch {
    return NaN;
  }
}

/** CPU seconds of a process's main thread (the event loop; its other threads are libuv's pool and V8's helpers), from /proc. */
export function mainThreadCpu(pid: number): number {
  return statCpu(`/proc/${pid}/task/${pid}/stat`);
}

/**
 * CPU seconds used so far by the PostgreSQL processes on this machine (from /proc): with
 * `database`, only that database's backends and the server's own processes (WAL writer,
 * checkpointer, …), so other people's sessions on the same server are not counted.
 */
export function postgresCpu(database?: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const clientBackend = /\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(title);
      if (database !== undefined && clientBackend && !title.includes(` ${database} `)) continue;
      out.set(Number(entry), cpuTime(Number(entry)) || 0);
    } catch {
      // the process ended
    }
  }
  return out;
}

/** CPU used since `before` by the PostgreSQL processes alive now (a process that ended in between is not counted). */
export function postgresCpuSince(before: Map<number, number>, database?: string): number {
  let total = 0;
  for (const [pid, cpu] of postgresCpu(database)) total += cpu - (before.get(pid) ?? 0);
  return total;
}
