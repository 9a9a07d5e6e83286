import type { Migration } from './migrate.ts';

/**
 * Relations (`AddRelation`, `$relatedTo`): one row per member, read from either side through an
 * index. The primary key lists an owner's members (`$relatedTo`, and the probe of a page's rows);
 * relations_target_idx finds the owners holding a target (a reverse query, a role's members, the rows
 * of a deleted target). `relation_keys` holds which fields of a class are relations and the class
 * they point to, fixed when first written, so every object of the class reads the field's descriptor.
 */
const statements = [
  `CREATE TABLE relations (app_id TEXT NOT NULL, owner_class TEXT NOT NULL, owner_id TEXT NOT NULL, key TEXT NOT NULL,
    target_class TEXT NOT NULL, target_id TEXT NOT NULL,
    PRIMARY KEY (app_id, owner_class, owner_id, key, target_class, target_id))`,
  'CREATE INDEX relations_target_idx ON relations (app_id, target_class, target_id, owner_class, key, owner_id)',
  `CREATE TABLE relation_keys (app_id TEXT NOT NULL, class_name TEXT NOT NULL, key TEXT NOT NULL, target_class TEXT NOT NULL,
    PRIMARY KEY (app_id, class_name, key))`,
];

export const relations: Migration = { sqlite: statements, postgres: statements };
