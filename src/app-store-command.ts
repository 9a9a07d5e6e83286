import type { Config } from './config.ts';
import { ApiError } from './lib/errors.ts';
import { openStoreAtStart } from './startup.ts';
import type { Store } from './storage/store.ts';

/**
 * Runs an operator command against one application's data, as the CLI's per-app commands do: opens the
 * store (migrated), refuses an unknown app, and turns a catalogue refusal into its message on stderr
 * and exit 1. Returns the command's exit code.
 */
export async function withAppStore(config: Config, appId: string, work: (store: Store) => Promise<number>): Promise<number> {
  const store = await openStoreAtStart(config);
  try {
    if (!(await store.getApp(appId))) {
      process.stderr.write(`roost: no application with id ${appId}\n`);
      return 1;
    }
    return await work(store);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    process.stderr.write(`roost: ${error.message} (code ${error.code})\n`);
    return 1;
  } finally {
    await store.close();
  }
}
