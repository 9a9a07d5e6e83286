import type { Json } from '../objects/types.ts';

/** The type names the hosted service gave fields (GET /1.1/schemas, the 111 error). */
export type FieldTypeName =
  | 'String'
  | 'Number'
  | 'Boolean'
  | 'Date'
  | 'Object'
  | 'Array'
  | 'GeoPoint'
  | 'File'
  | 'Bytes'
  | 'Pointer'
  | 'Relation'
  | 'ACL';

/** A field's type; a Pointer or Relation also names the class it points to. */
export interface FieldType {
  type: FieldTypeName;
  className?: string;
}

/** A field of a class as kept: its type, and the value a create that leaves it out gets (`default`, absent when none). */
export interface FieldSchema {
  name: string;
  type: FieldType;
  default?: Json;
}

/**
 * The fields of each class with the type each was first written with (src/objects/schemas.ts).
 * A field's type never changes once kept: the first writer wins, on every node, by the primary key.
 */
export interface SchemaStore {
  /**
   * Keeps each field's type unless the class has that field already, and answers the type kept for
   * every field named (the earlier writer's where there was one), in one statement.
   */
  learn(appId: string, className: string, fields: ReadonlyArray<{ name: string; type: FieldType }>): Promise<Map<string, FieldType>>;
  /** The class's fields in name order; none for a class never written. */
  fields(appId: string, className: string): Promise<FieldSchema[]>;
  /** Every class of the application that has fields, by name, each with its fields in name order. */
  classes(appId: string): Promise<Map<string, FieldSchema[]>>;
  /** Sets the field's default (`undefined` clears it); false when the class has no such field. */
  setDefault(appId: string, className: string, name: string, value: Json | undefined): Promise<boolean>;
}
