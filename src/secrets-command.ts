import type { Config } from './config.ts';
import { newSecretKeyText } from './lib/secret-box.ts';
import { keyFilePath, prependKeyToFile } from './secret-keys.ts';
import { openStoreAtStart } from './startup.ts';

export const secretsUsage = `secrets new-key                         print a new key for ROOST_SECRET_KEY
  secrets rotate-key                      key file: put a new key first in it, then seal every secret with it
  secrets reseal                          seal every secret with the first configured key (after changing ROOST_SECRET_KEY)`;

async function reseal(config: Config): Promise<number> {
  const store = await openStoreAtStart(config);
  try {
    const rows = await store.resealSecrets(false);
    process.stdout.write(`sealed again: ${rows} record${rows === 1 ? '' : 's'}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** `roost secrets …`: the keys that seal secrets in the database (src/secret-keys.ts, docs/operations.md). */
export async function secretsCommand(args: string[], config: Config, usage: (message: string) => never): Promise<number> {
  const [sub, ...rest] = args;
  if (rest.length > 0) usage(`secrets ${sub} takes no arguments`);
  if (sub === 'new-key') {
    process.stdout.write(newSecretKeyText() + '\n');
    return 0;
  }
  if (sub === 'reseal') return reseal(config);
  if (sub === 'rotate-key') {
    const path = keyFilePath(config);
    if (path === null) {
      process.stderr.write(
        'roost: the keys come from ROOST_SECRET_KEY (or there is none): put a new key (`roost secrets new-key`) first in ROOST_SECRET_KEY, ' +
          'keep the old one after it, restart every node, then run `roost secrets reseal`\n',
      );
      return 1;
    }
    // Opened first: a wrong or missing key file stops here, before it is changed.
    await (await openStoreAtStart(config)).close();
    prependKeyToFile(path);
    return reseal(config);
  }
  usage(`unknown secrets command "${sub ?? ''}"`);
}
