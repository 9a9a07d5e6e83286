import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { roostScript } from './scripts.ts';

export interface RoostProcess {
  url: string;
  child: ChildProcess;
  /** Keys of the "default" application, when this process created it. */
  defaultKeys: { appId: string; appKey: string; masterKey: string } | null;
  lines: string[];
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs `src/main.ts` (or the `entry` given, see roostScript) as a separate Roost process and waits until it listens; `nodeArgs`
 * go to node (e.g. --cpu-prof).
 */
export function spawnRoost(env: Record<string, string>, nodeArgs: string[] = [], entry = roostScript('main')): Promise<RoostProcess> {
  // Its own data folder, where a first start leaves the keys file (stdout is a pipe, not a terminal).
  const dataDir = env.DATA_DIR ?? mkdtempSync(join(tmpdir(), 'roost-node-'));
  const child = spawn(process.execPath, [...nodeArgs, ...entry], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keys: Record<string, string> = {};
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    // A node that never listens is stopped, so it cannot outlive the test as an orphan.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`roost did not start:\n${lines.join('\n')}`));
    }, 30_000);
    child.once('exit', (code) => reject(new Error(`roost exited with ${code}:\n${lines.join('\n')}`)));
    createInterface({ input: child.stderr! }).on('line', (line) => lines.push(line));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const key = /^\s+(appId|appKey|masterKey):\s+(\S+)$/.exec(line);
      if (key) keys[key[1]] = key[2];
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; url?: string; keysFile?: string };
      if (entry.keysFile) {
        for (const match of readFileSync(entry.keysFile, 'utf8').matchAll(/^\s+(appId|appKey|masterKey):\s+(\S+)$/gm)) keys[match[1]] = match[2];
      }
      if (entry.msg === 'roost is listening' && entry.url) {
        clearTimeout(timer);
        resolve({
          url: entry.url,
          child,
          lines,
          defaultKeys: keys.appId ? { appId: keys.appId, appKey: keys.appKey, masterKey: keys.masterKey } : null,
          async stop(signal: NodeJS.Signals = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            await exited;
          },
        });
      }
    });
  });
}
