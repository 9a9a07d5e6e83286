import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { roostScript } from './scripts.ts';

const run = promisify(execFile);

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `roost …` (src/cli.ts) as an operator does, on the database `env` names; resolves with the exit
 * status and both streams, whatever the status.
 */
export async function roostCli(env: Record<string, string>, ...args: string[]): Promise<CliOutcome> {
  // A PostgreSQL DATABASE_URL of the test run's own environment must not win over a SQLite database's env.
  const childEnv = { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'warn', ...env };
  try {
    const { stdout, stderr } = await run(process.execPath, [...roostScript('cli'), ...args], { env: childEnv });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
