import type { Migration } from './migrate.ts';

/**
 * A role's name is unique in its application (reference §6): the database holds it, so two roles
 * created together with one name cannot both be stored (src/storage/sql/object-row.ts, roleName).
 * Partial: only `_Role` rows are in it.
 */
export const roleNames: Migration = {
  sqlite: [
    "CREATE UNIQUE INDEX IF NOT EXISTS objects_role_name_key ON objects (app_id, json_extract(data, '$.name')) WHERE class_name = '_Role'",
  ],
  postgres: ["CREATE UNIQUE INDEX IF NOT EXISTS objects_role_name_key ON objects (app_id, (data ->> 'name')) WHERE class_name = '_Role'"],
};
