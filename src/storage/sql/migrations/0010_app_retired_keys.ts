import type { Migration } from './migrate.ts';

/**
 * Keys replaced by `roost app rotate` that stay valid for a grace period: a JSON list of
 * {kind, key (sealed), until}. Text on both databases: it is only ever read whole.
 */
export const appRetiredKeys: Migration = {
  sqlite: ["ALTER TABLE apps ADD COLUMN retired_keys TEXT NOT NULL DEFAULT '[]'"],
  postgres: ["ALTER TABLE apps ADD COLUMN IF NOT EXISTS retired_keys TEXT NOT NULL DEFAULT '[]'"],
};
