import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import type { AppRegistry } from './apps/registry.ts';

type WithRegistry = <T>(work: (registry: AppRegistry) => Promise<T>) => Promise<T>;

export const appKeysUsage = `app keys APPID                          show the application's keys (and rotated ones still accepted)
  app rotate APPID --key|--master-key [--grace 7d]
                                          issue a new key; the old one stays accepted for the grace period (default 0: refused at once)
  app delete APPID [--yes]                delete the application and everything it holds (says what first; asks unless --yes)`;

const units: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "7d", "12h", "30m", "45s" or "0" in milliseconds; null when it is none of these. */
export function parseGrace(text: string): number | null {
  const match = /^(\d{1,6})([smhd]?)$/.exec(text);
  if (!match || (match[2] === '' && match[1] !== '0')) return null;
  return Number(match[1]) * (units[match[2]] ?? 0);
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

function noApp(appId: string): number {
  process.stderr.write(`roost: no application with id ${appId}\n`);
  return 1;
}

/** `roost app keys|rotate|delete`; usage errors go to `usage`. */
export async function appKeysCommand(
  sub: string,
  args: string[],
  withRegistry: WithRegistry,
  usage: (message: string) => never,
  /** Removes the application's file bytes from the configured backend (local disk or S3). */
  removeFiles: (appId: string) => Promise<void> = async () => undefined,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { key: { type: 'boolean' }, 'master-key': { type: 'boolean' }, grace: { type: 'string' }, yes: { type: 'boolean' } },
  });
  const appId = positionals[0];
  if (!appId) usage(`app ${sub} needs an APPID`);
  if (sub === 'keys') {
    const app = await withRegistry((registry) => registry.freshApp(appId));
    if (!app) return noApp(appId);
    const now = Date.now();
    const retired = app.retiredKeys.filter((entry) => entry.until > now).map((entry) => ({ kind: entry.kind, key: entry.key, acceptedUntil: new Date(entry.until).toISOString() }));
    print({ appId: app.appId, appKey: app.appKey, masterKey: app.masterKey, ...(retired.length > 0 ? { rotated: retired } : {}) });
    return 0;
  }
  if (sub === 'rotate') {
    if (Boolean(values.key) === Boolean(values['master-key'])) usage('app rotate needs one of --key or --master-key');
    const graceMs = parseGrace(values.grace ?? '0');
    if (graceMs === null) usage(`--grace wants a duration like 7d, 12h, 30m or 0, got "${values.grace}"`);
    const kind = values.key ? 'appKey' : 'masterKey';
    const app = await withRegistry((registry) => registry.rotate(appId, kind, graceMs));
    if (!app) return noApp(appId);
    print({ appId: app.appId, [kind]: app[kind], oldKeyAcceptedUntil: graceMs > 0 ? new Date(Date.now() + graceMs).toISOString() : null });
    return 0;
  }
  // delete
  return withRegistry(async (registry) => {
    const contents = await registry.contents(appId);
    if (!contents) return noApp(appId);
    process.stderr.write(
      `This deletes application ${appId} and everything it holds: ${contents.objects} objects in ${contents.classes} classes, ` +
        `${contents.users} users, ${contents.installations} installations, ${contents.roles} roles, ${contents.leaderboards} leaderboards, ` +
        'with their sessions, status inboxes, push history and the bytes of its files.\n',
    );
    if (!values.yes) {
      if (!process.stdin.isTTY) {
        process.stderr.write('roost: not deleted: add --yes to delete without being asked (no terminal to ask on)\n');
        return 1;
      }
      const prompt = createInterface({ input: process.stdin, output: process.stderr });
      const answer = await prompt.question(`Type the application id to confirm: `);
      prompt.close();
      if (answer.trim() !== appId) {
        process.stderr.write('roost: not deleted\n');
        return 1;
      }
    }
    await registry.delete(appId);
    // After the records: a failure here leaves bytes no record names, never a record without its bytes.
    await removeFiles(appId);
    process.stdout.write(`deleted application ${appId}\n`);
    return 0;
  });
}
