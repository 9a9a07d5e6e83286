import { fail } from '../lib/errors.ts';
import type { FieldType, FieldTypeName } from '../storage/schema-store.ts';
import { builtInFieldTypes, sameType, serverFieldTypes, typeOfValue } from './field-types.ts';
import type { Json } from './types.ts';
import { builtInClasses, checkJson, classNamePattern, invalidKey, isObject, writePath } from './values.ts';

/** One field of a schema change (PUT /1.1/schemas/<className>, `roost schema`). */
export interface SchemaChange {
  name: string;
  /** Declared, or implied by the default's value. */
  type?: FieldType;
  /** null: clear the default. */
  default?: Json;
}

const plainTypes = new Set<FieldTypeName>(['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'GeoPoint', 'File', 'Bytes']);
const targetTypes = new Set<FieldTypeName>(['Pointer', 'Relation']);
const entryKeys = new Set(['type', 'className', 'default']);
const serverFieldNames = new Set(serverFieldTypes.map(([name]) => name));

function declaredType(name: string, entry: Record<string, unknown>): FieldType | undefined {
  const { type, className } = entry;
  if (type === undefined) {
    if (className !== undefined) fail('incorrectType', `Field '${name}': className goes with "type": "Pointer" or "Relation".`);
    return undefined;
  }
  if (typeof type === 'string' && plainTypes.has(type as FieldTypeName)) {
    if (className !== undefined) fail('incorrectType', `Field '${name}': a ${type} has no className.`);
    return { type: type as FieldTypeName };
  }
  if (typeof type === 'string' && targetTypes.has(type as FieldTypeName)) {
    if (typeof className !== 'string' || !(classNamePattern.test(className) || builtInClasses.has(className))) {
      fail('invalidClassName', `Field '${name}': a ${type} needs the className it points to.`);
    }
    return { type: type as FieldTypeName, className };
  }
  return fail('incorrectType', `Field '${name}': type must be one of ${[...plainTypes, ...targetTypes].join(', ')}.`);
}

/**
 * Reads `{"<field>": {"type"?, "className"?, "default"?}}`. A default must have the field's type (a
 * Relation has none); the server's fields and the built-in classes' own fields take none.
 */
export function parseSchemaChanges(className: string, body: unknown): SchemaChange[] {
  if (!isObject(body) || Object.keys(body).length === 0) {
    fail('invalidJson', 'A schema change is {"<field>": {"type": "…", "className": "…", "default": …}}.');
  }
  const builtIn = builtInFieldTypes[className];
  return Object.entries(body).map(([name, entry]) => {
    if (serverFieldNames.has(name) || writePath(name).length > 1) invalidKey(name);
    if (!isObject(entry) || Object.keys(entry).some((key) => !entryKeys.has(key))) {
      fail('invalidJson', `Field '${name}': expected {"type": "…", "className": "…", "default": …}.`);
    }
    const change: SchemaChange = { name, type: declaredType(name, entry) };
    if (entry.default === undefined) return change;
    if (builtIn?.has(name)) fail('incorrectType', `The built-in field '${name}' of ${className} takes no default.`);
    const value = checkJson(entry.default);
    change.default = value;
    if (value === null) return change;
    const implied = typeOfValue(value);
    if (implied.type === 'Relation') fail('incorrectType', `Field '${name}': a Relation takes no default.`);
    if (change.type !== undefined && !sameType(change.type, implied)) {
      fail('incorrectType', `Field '${name}': the default is a ${implied.type}, not a ${change.type.type}.`);
    }
    change.type = implied;
    return change;
  });
}
