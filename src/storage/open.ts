import type { Config } from '../config.ts';
import { loadSecretKeys } from '../secret-keys.ts';
import type { Store } from './store.ts';

export type StoreConfig = Pick<Config, 'databaseUrl' | 'sqlitePath' | 'dataDir' | 'statementTimeoutMs' | 'sqliteBusyTimeoutMs' | 'secretKey' | 'secretKeyFile'>;

/** Opens the configured store, its secrets sealed with the configured keys (src/secret-keys.ts). */
export async function openStore(config: StoreConfig): Promise<Store> {
  const { box: secrets } = loadSecretKeys(config);
  // Only the configured database's driver and store are loaded: a process never needs both.
  if (config.databaseUrl) {
    const { openPostgresStore } = await import('./postgres/open.ts');
    return openPostgresStore({ url: config.databaseUrl, statementTimeoutMs: config.statementTimeoutMs, secrets });
  }
  const { openSqliteStore } = await import('./sqlite/open.ts');
  return openSqliteStore({ path: config.sqlitePath, busyTimeoutMs: config.sqliteBusyTimeoutMs, secrets });
}
