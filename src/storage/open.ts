import type { Config } from '../config.ts';
import type { Store } from './store.ts';
import { openPostgresStore } from './postgres/open.ts';
import { openSqliteStore } from './sqlite/open.ts';

export async function openStore(config: Pick<Config, 'databaseUrl' | 'sqlitePath' | 'statementTimeoutMs'>): Promise<Store> {
  return config.databaseUrl
    ? openPostgresStore({ url: config.databaseUrl, statementTimeoutMs: config.statementTimeoutMs })
    : openSqliteStore({ path: config.sqlitePath });
}
