import type { Migration } from './migrate.ts';

/**
 * The console's overview charts (src/console/traffic.ts): requests, errors, logins, lockouts and pushes
 * counted per minute and per hour. Each node adds its counts to the shared rows every few seconds
 * (`n = n + excluded.n`), so the charts show the cluster, not one process; old buckets are pruned.
 */
function tables(integer: string): string[] {
  return [
    `CREATE TABLE stat_buckets (grain TEXT NOT NULL, at ${integer} NOT NULL, app TEXT NOT NULL, kind TEXT NOT NULL,
       label TEXT NOT NULL, n ${integer} NOT NULL, PRIMARY KEY (grain, at, app, kind, label))`,
  ];
}

export const statBuckets: Migration = { sqlite: tables('INTEGER'), postgres: tables('BIGINT') };
