import { sql, type Kysely } from 'kysely';
import type { Json } from '../../objects/types.ts';
import type { FieldSchema, FieldType, SchemaStore } from '../schema-store.ts';

interface Row {
  class_name: string;
  name: string;
  type: string;
  default_value: string | null;
}

function schemaOf(row: Row): FieldSchema {
  const field: FieldSchema = { name: row.name, type: JSON.parse(row.type) as FieldType };
  if (row.default_value !== null) field.default = JSON.parse(row.default_value) as Json;
  return field;
}

/** Types and defaults as JSON text (src/storage/sql/migrations/0005_class_fields.ts): the same SQL on both databases. */
export class SqlSchemaStore implements SchemaStore {
  private readonly db: Kysely<any>;

  constructor(options: { db: Kysely<any> }) {
    this.db = options.db;
  }

  async learn(appId: string, className: string, fields: ReadonlyArray<{ name: string; type: FieldType }>): Promise<Map<string, FieldType>> {
    if (fields.length === 0) return new Map();
    const values = sql.join(fields.map((field) => sql`(${appId}, ${className}, ${field.name}, ${JSON.stringify(field.type)})`));
    // The no-op update makes RETURNING answer the row kept, when another writer's came first too;
    // a concurrent insert of the same field waits for that writer and then reads its type.
    const { rows } = await sql<{ name: string; type: string }>`INSERT INTO class_fields (app_id, class_name, name, type) VALUES ${values}
      ON CONFLICT (app_id, class_name, name) DO UPDATE SET type = class_fields.type RETURNING name, type`.execute(this.db);
    return new Map(rows.map((row) => [row.name, JSON.parse(row.type) as FieldType]));
  }

  async fields(appId: string, className: string): Promise<FieldSchema[]> {
    const { rows } = await sql<Row>`SELECT class_name, name, type, default_value FROM class_fields
      WHERE app_id = ${appId} AND class_name = ${className} ORDER BY name`.execute(this.db);
    return rows.map(schemaOf);
  }

  async classes(appId: string): Promise<Map<string, FieldSchema[]>> {
    const { rows } = await sql<Row>`SELECT class_name, name, type, default_value FROM class_fields
      WHERE app_id = ${appId} ORDER BY class_name, name`.execute(this.db);
    const classes = new Map<string, FieldSchema[]>();
    for (const row of rows) {
      const fields = classes.get(row.class_name) ?? [];
      fields.push(schemaOf(row));
      classes.set(row.class_name, fields);
    }
    return classes;
  }

  async setDefault(appId: string, className: string, name: string, value: Json | undefined): Promise<boolean> {
    const text = value === undefined ? null : JSON.stringify(value);
    const result = await sql`UPDATE class_fields SET default_value = ${text}
      WHERE app_id = ${appId} AND class_name = ${className} AND name = ${name}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }
}
