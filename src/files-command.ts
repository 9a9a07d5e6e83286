import { parseArgs } from 'node:util';
import type { Config } from './config.ts';
import { withAppStore } from './app-store-command.ts';
import { systemClock } from './lib/clock.ts';
import { mirrorFiles, type MirrorProgress } from './files/mirror.ts';
import { openFileBackend } from './files/open-backend.ts';

export const filesUsage = `files mirror --app APPID [--parallel N] [--timeout MS] [--external]
                                          copy the bytes of _File records kept elsewhere (the hosted CDN) into
                                          this server's file backend and point the records there; progress on
                                          stderr, a report on stdout (exit 1 if any failed); run again to resume`;

/** How often progress goes to stderr. */
const progressEveryMs = 2000;

function integerOption(raw: string | undefined, fallback: number, min: number, max: number, name: string, usage: (message: string) => never): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) usage(`--${name} must be a whole number from ${min} to ${max}`);
  return value;
}

const line = (progress: MirrorProgress) =>
  `roost: files: ${progress.seen} looked at, ${progress.mirrored} mirrored, ${progress.skipped} skipped, ${progress.failed} failed\n`;

/** `roost files mirror`: src/files/mirror.ts from a shell. */
export async function filesCommand(args: string[], config: Config, usage: (message: string) => never): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'mirror') usage(`unknown files command "${sub ?? ''}"`);
  const { values } = parseArgs({
    args: rest,
    options: { app: { type: 'string' }, parallel: { type: 'string' }, timeout: { type: 'string' }, external: { type: 'boolean' } },
  });
  const appId = values.app ?? usage('files mirror needs --app APPID');
  const parallel = integerOption(values.parallel, 4, 1, 64, 'parallel', usage);
  const idleTimeoutMs = integerOption(values.timeout, 60_000, 100, 3_600_000, 'timeout', usage);
  const backend = await openFileBackend(config);
  try {
    return await withAppStore(config, appId, async (store) => {
      let last = 0;
      const report = await mirrorFiles({
        store,
        backend,
        appId,
        parallel,
        idleTimeoutMs,
        external: values.external === true,
        now: () => systemClock.now(),
        onProgress: (progress) => {
          if (Date.now() - last < progressEveryMs) return;
          last = Date.now();
          process.stderr.write(line(progress));
        },
      });
      process.stderr.write(line(report));
      process.stdout.write(JSON.stringify(report, null, 2) + '\n');
      return report.failed > 0 ? 1 : 0;
    });
  } finally {
    await backend.close?.();
  }
}
