import type { Migration } from './migrate.ts';

/**
 * SQLite databases imported before 11bbb94 hold per-value samples (`sqlite_stat4`) from the import's
 * ANALYZE; they tie a statement's plan to its bound app id and class, so SQLite re-planned every page at
 * every run (62% of a statement's time). Imports now drop them (the dialect's afterAnalyze); this drops
 * those already there and keeps the row counts. ANALYZE of the schema table alone first makes both
 * statistics tables exist, so the DELETE runs on any database; the last one reloads what the planner reads.
 */
export const sqliteValueSamples: Migration = {
  sqlite: ['ANALYZE sqlite_schema', 'DELETE FROM sqlite_stat4', 'ANALYZE sqlite_schema'],
  postgres: [],
};
