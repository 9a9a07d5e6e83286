import type { Migration } from './migrate.ts';

/**
 * Declared indexes are built in the background (src/storage/sql/class-index-store.ts): the row says
 * whether the build is going on, done or failed (and why), whether the index is unique (to build it
 * again after a restart), and which database session builds it (PostgreSQL reports its progress by
 * that). Indexes declared before were built when declared: ready, unique as the catalogue has them.
 */
const columns = [
  `ALTER TABLE class_indexes ADD COLUMN state TEXT NOT NULL DEFAULT 'ready'`,
  'ALTER TABLE class_indexes ADD COLUMN is_unique INTEGER NOT NULL DEFAULT 0',
  'ALTER TABLE class_indexes ADD COLUMN failure TEXT',
  'ALTER TABLE class_indexes ADD COLUMN builder TEXT',
];

export const classIndexBuilds: Migration = {
  sqlite: [
    ...columns,
    `UPDATE class_indexes SET is_unique = 1 WHERE index_name IN
      (SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE 'CREATE UNIQUE%')`,
  ],
  postgres: [
    ...columns,
    `UPDATE class_indexes SET is_unique = 1 WHERE index_name IN
      (SELECT c.relname FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE i.indisunique)`,
  ],
};
