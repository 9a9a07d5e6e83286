import { table } from '../lib/lookup.ts';
import type { FieldType } from '../storage/schema-store.ts';
import type { Operation } from './ops.ts';
import type { Json } from './types.ts';

/**
 * The type a written value gives its field, in the hosted service's names. A field first written as
 * null is locked as Object, as the hosted service documented ("数据类型锁定"); a pointer to `_File`
 * is a File, as the SDKs save files.
 */
export function typeOfValue(value: Json): FieldType {
  if (value === null) return { type: 'Object' };
  if (typeof value === 'string') return { type: 'String' };
  if (typeof value === 'number') return { type: 'Number' };
  if (typeof value === 'boolean') return { type: 'Boolean' };
  if (Array.isArray(value)) return { type: 'Array' };
  switch (value.__type) {
    case 'Date':
      return { type: 'Date' };
    case 'GeoPoint':
      return { type: 'GeoPoint' };
    case 'Bytes':
      return { type: 'Bytes' };
    case 'File':
      return { type: 'File' };
    case 'Pointer':
      return value.className === '_File' ? { type: 'File' } : { type: 'Pointer', className: String(value.className) };
    case 'Relation':
      return { type: 'Relation', className: String(value.className) };
    default:
      return { type: 'Object' };
  }
}

/** What one operation writes to its top-level field: a type, null (allowed on any type), or nothing (a Delete). */
export type Written = { type: FieldType; isNull: boolean } | null;

export function writtenBy(op: Operation): Written {
  // A dotted key writes inside an object: the top-level field is an Object whatever the leaf gets.
  if (op.path.length > 1) return op.kind === 'delete' ? null : { type: { type: 'Object' }, isNull: false };
  switch (op.kind) {
    case 'delete':
      return null;
    case 'set':
      return { type: typeOfValue(op.value), isNull: op.value === null };
    case 'increment':
    case 'bitAnd':
    case 'bitOr':
    case 'bitXor':
      return { type: { type: 'Number' }, isNull: false };
    case 'add':
    case 'addUnique':
    case 'remove':
      return { type: { type: 'Array' }, isNull: false };
    case 'relation':
      // parseRelationOp answers at least one change, all of one target class.
      return { type: { type: 'Relation', className: op.changes[0].targetClass }, isNull: false };
  }
}

export function sameType(a: FieldType, b: FieldType): boolean {
  return a.type === b.type && (a.className ?? null) === (b.className ?? null);
}

/** A type as the hosted service printed it in its 111 message: Clojure's map syntax. */
export function printedType(type: FieldType): string {
  return type.className === undefined ? `{:type "${type.type}"}` : `{:type "${type.type}", :className "${type.className}"}`;
}

/** The fields every object has, typed as the hosted service listed them. */
export const serverFieldTypes: ReadonlyArray<[string, FieldType]> = [
  ['objectId', { type: 'String' }],
  ['ACL', { type: 'ACL' }],
  ['createdAt', { type: 'Date' }],
  ['updatedAt', { type: 'Date' }],
];

const string: FieldType = { type: 'String' };
const boolean: FieldType = { type: 'Boolean' };

/** The built-in classes' own fields, typed from the start (the hosted service's defaults). */
export const builtInFieldTypes = table<ReadonlyMap<string, FieldType>>({
  _User: new Map([
    ['username', string],
    ['password', string],
    ['email', string],
    ['emailVerified', boolean],
    ['mobilePhoneNumber', string],
    ['mobilePhoneVerified', boolean],
    ['authData', { type: 'Object' }],
  ]),
  _Installation: new Map([
    ['installationId', string],
    ['deviceType', string],
    ['deviceToken', string],
    ['channels', { type: 'Array' }],
    ['badge', { type: 'Number' }],
    ['timeZone', string],
    ['deviceProfile', string],
    ['vendor', string],
    ['registrationId', string],
    ['valid', boolean],
    ['user', { type: 'Pointer', className: '_User' }],
  ]),
  _Role: new Map([
    ['name', string],
    ['users', { type: 'Relation', className: '_User' }],
    ['roles', { type: 'Relation', className: '_Role' }],
  ]),
});

/**
 * Adds to `into` the type of each field of `data` it has none for yet, leaving out nulls (an imported
 * null says nothing of the field's type) and the built-in class's own fields.
 */
export function collectFieldTypes(className: string, data: Readonly<Record<string, Json>>, into: Map<string, FieldType>): void {
  const builtIn = builtInFieldTypes[className];
  for (const [name, value] of Object.entries(data)) {
    if (value === null || into.has(name) || builtIn?.has(name)) continue;
    into.set(name, typeOfValue(value));
  }
}
