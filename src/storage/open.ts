import type { Config } from '../config.ts';
import { loadSecretKeys } from '../secret-keys.ts';
import type { Store } from './store.ts';
import { openPostgresStore } from './postgres/open.ts';
import { openSqliteStore } from './sqlite/open.ts';

export type StoreConfig = Pick<Config, 'databaseUrl' | 'sqlitePath' | 'dataDir' | 'statementTimeoutMs' | 'secretKey' | 'secretKeyFile'>;

/** Opens the configured store, its secrets sealed with the configured keys (src/secret-keys.ts). */
export async function openStore(config: StoreConfig): Promise<Store> {
  const { box: secrets } = loadSecretKeys(config);
  return config.databaseUrl
    ? openPostgresStore({ url: config.databaseUrl, statementTimeoutMs: config.statementTimeoutMs, secrets })
    : openSqliteStore({ path: config.sqlitePath, secrets });
}
