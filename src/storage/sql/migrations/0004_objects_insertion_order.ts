import type { Migration } from './migrate.ts';

/**
 * A query without `order` lists a class in insertion order: creation time, then the id
 * (src/storage/sql/where.ts). This index gives that order without a sort, and serves everything
 * objects_created_idx (its prefix) did, which it replaces. On PostgreSQL IF NOT EXISTS lets a large
 * installation build it CONCURRENTLY ahead of the upgrade (docs/operations.md), as 0002.
 */
const statements = [
  'CREATE INDEX IF NOT EXISTS objects_created_id_idx ON objects (app_id, class_name, created_at, id)',
  'DROP INDEX IF EXISTS objects_created_idx',
];

export const objectsInsertionOrder: Migration = { sqlite: statements, postgres: statements };
