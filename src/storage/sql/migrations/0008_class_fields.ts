import type { Migration } from './migrate.ts';

/**
 * The fields of each class with the type each was first written with, and the value a create gets
 * when it leaves the field out (src/storage/sql/schema-store.ts). `type` and `default_value` are JSON
 * text: `{"type":"Pointer","className":"Post"}`, any JSON value.
 */
const table = `CREATE TABLE class_fields (app_id TEXT NOT NULL, class_name TEXT NOT NULL, name TEXT NOT NULL,
  type TEXT NOT NULL, default_value TEXT, PRIMARY KEY (app_id, class_name, name))`;

export const classFields: Migration = { sqlite: [table], postgres: [table] };
