import type { Migration } from './migrate.ts';

/**
 * The indexes users declare on fields of a class (POST /1.1/indexes/<className>): what was asked for,
 * by the name the user gave it, and the database index that holds it (src/storage/sql/class-index-store.ts).
 * The index itself lives in the database's catalogue, which also says whether it is built.
 */
const table = `CREATE TABLE class_indexes (app_id TEXT NOT NULL, class_name TEXT NOT NULL, name TEXT NOT NULL,
  keys TEXT NOT NULL, index_name TEXT NOT NULL UNIQUE, created_at BIGINT NOT NULL, PRIMARY KEY (app_id, class_name, name))`;

export const classIndexes: Migration = { sqlite: [table], postgres: [table] };
