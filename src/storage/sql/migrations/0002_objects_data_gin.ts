import type { Migration } from './migrate.ts';

/**
 * PostgreSQL: a GIN index (jsonb_path_ops) on objects.data, so an equality or $in on any field, compiled
 * as containment of the whole document (o.data @> '{"a":{"b":v}}', src/storage/postgres/dialect.ts), is
 * index-assisted with no index declared on the field. SQLite has no such index kind: nothing to do.
 * Built inside the migration's transaction (CONCURRENTLY cannot be), which holds writes to objects
 * while it builds; IF NOT EXISTS lets a large installation build it CONCURRENTLY ahead of the upgrade
 * (docs/operations.md).
 */
export const objectsDataGin: Migration = {
  sqlite: [],
  postgres: ['CREATE INDEX IF NOT EXISTS objects_data_gin ON objects USING GIN (data jsonb_path_ops)'],
};
