import type { Migration } from './migrate.ts';

/**
 * Leaderboards (src/leaderboards/): a board per statistic name, its archived versions, and one row per
 * member and version holding the member's value. `sort_key` is the value oriented so that a smaller key
 * ranks higher (the value on an ascending board, its negation on a descending one; a board's order never
 * changes), so one index in one direction serves every board: a page of ranks is a range of
 * leaderboard_ranking, a member's rank the count of the keys before its own. leaderboard_member lists
 * what one member holds across boards.
 */
function tables(real: string, integer: string): string[] {
  return [
    `CREATE TABLE leaderboards (app_id TEXT NOT NULL, name TEXT NOT NULL, object_id TEXT NOT NULL, member_type TEXT NOT NULL,
       sort_order TEXT NOT NULL, update_strategy TEXT NOT NULL, version_interval TEXT NOT NULL, version ${integer} NOT NULL,
       activated_at ${integer} NOT NULL, expired_at ${integer}, created_at ${integer} NOT NULL, updated_at ${integer} NOT NULL,
       PRIMARY KEY (app_id, name))`,
    `CREATE TABLE leaderboard_archives (app_id TEXT NOT NULL, name TEXT NOT NULL, version ${integer} NOT NULL, object_id TEXT NOT NULL,
       activated_at ${integer} NOT NULL, deactivated_at ${integer} NOT NULL, PRIMARY KEY (app_id, name, version))`,
    `CREATE TABLE leaderboard_statistics (app_id TEXT NOT NULL, name TEXT NOT NULL, version ${integer} NOT NULL, member TEXT NOT NULL,
       value ${real} NOT NULL, sort_key ${real} NOT NULL, reached_at ${integer} NOT NULL, PRIMARY KEY (app_id, name, version, member))`,
    'CREATE INDEX leaderboard_ranking ON leaderboard_statistics (app_id, name, version, sort_key, reached_at, member)',
    'CREATE INDEX leaderboard_member ON leaderboard_statistics (app_id, member, name)',
  ];
}

export const leaderboards: Migration = { sqlite: tables('REAL', 'INTEGER'), postgres: tables('DOUBLE PRECISION', 'BIGINT') };
