import type { Migration } from './migrate.ts';

/**
 * A class's relation fields are recorded once, in its schema (class_fields, type
 * {"type":"Relation","className":…}): relation_keys kept them a second time, and the two could
 * disagree (a relation added at sign-up reached relation_keys only, so GET /1.1/schemas left it out).
 * Fields only relation_keys knew are copied over; where class_fields already has the field, it stays.
 */
const copy = (quoted: string) => `INSERT INTO class_fields (app_id, class_name, name, type)
  SELECT app_id, class_name, key, '{"type":"Relation","className":' || ${quoted} || '}' FROM relation_keys WHERE true
  ON CONFLICT (app_id, class_name, name) DO NOTHING`;

export const relationFieldsInClassFields: Migration = {
  sqlite: [copy('json_quote(target_class)'), 'DROP TABLE relation_keys'],
  postgres: [copy('to_jsonb(target_class)::text'), 'DROP TABLE relation_keys'],
};
