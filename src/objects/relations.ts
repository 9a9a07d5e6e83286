import { fail } from '../lib/errors.ts';
import { own, table } from '../lib/lookup.ts';
import type { RelationChange } from '../storage/relation-store.ts';
import type { ClassSchemas } from './schemas.ts';
import type { JsonObject, StoredJson, StoredObject, Where } from './types.ts';
import { builtInClasses, classNamePattern, isObject } from './values.ts';

/** Most pointers one AddRelation or RemoveRelation may name (hosted: 128 beyond, D-err). */
export const maxRelationObjects = 1000;

const relationOps = table({ AddRelation: 'add', RemoveRelation: 'remove' } as const);

/** Whether an `__op` is a relation's (or a Batch, which the JS SDK sends only for relations). */
export function isRelationOp(op: unknown): boolean {
  return typeof op === 'string' && (op === 'Batch' || relationOps[op] !== undefined);
}

/** The hosted service's one answer to any relation op it cannot read (128 "Invalid relation data."). */
function invalid(): never {
  return fail('invalidRelation');
}

function isClassName(value: unknown): value is string {
  return typeof value === 'string' && (classNamePattern.test(value) || builtInClasses.has(value));
}

/** One AddRelation or RemoveRelation: 1 to 1000 pointers, all of one class. */
function parseOne(key: string, spec: unknown): RelationChange {
  if (!isObject(spec)) return invalid();
  const kind = typeof spec.__op === 'string' ? relationOps[spec.__op] : undefined;
  const objects = spec.objects;
  if (!kind || !Array.isArray(objects) || objects.length === 0 || objects.length > maxRelationObjects) return invalid();
  let targetClass: string | undefined;
  const ids = new Set<string>();
  for (const item of objects) {
    if (!isObject(item) || (item.__type !== 'Pointer' && item.__type !== 'Object') || !isClassName(item.className)) return invalid();
    if (typeof item.objectId !== 'string' || item.objectId === '') return invalid();
    if ((targetClass ??= item.className) !== item.className) return invalid();
    ids.add(item.objectId);
  }
  const members = [...ids];
  return { key, targetClass: targetClass as string, add: kind === 'add' ? members : [], remove: kind === 'remove' ? members : [] };
}

/**
 * A relation op on a field as relation changes, applied in order: AddRelation, RemoveRelation, or the
 * JS SDK's `{"__op":"Batch","ops":[…]}` of both. A relation lives on a top-level field of one target class.
 */
export function parseRelationOp(path: string[], spec: Record<string, unknown>): RelationChange[] {
  if (path.length !== 1) return invalid();
  const [key] = path;
  if (spec.__op !== 'Batch') return [parseOne(key, spec)];
  if (!Array.isArray(spec.ops) || spec.ops.length === 0) return invalid();
  // A Batch of array operations (Add, Remove…) on one field: the hosted service failed it with 304, a database
  // error (the PHP SDK's testBatchOperationOnArray); Roost runs a Batch of relation operations only.
  if (spec.ops.some((op) => !isObject(op) || relationOps[String(op.__op)] === undefined)) fail('batchNotRelation');
  const changes = spec.ops.map((op) => parseOne(key, op));
  if (changes.some((change) => change.targetClass !== changes[0].targetClass)) return invalid();
  return changes;
}

/** What a relation field reads as on every object of its class: never its members. */
export function relationDescriptor(targetClass: string): JsonObject {
  return { __type: 'Relation', className: targetClass };
}

/** Whether a stored value may sit in a field a relation op writes: nothing, null, or a relation's descriptor (imported data). */
export function holdsRelationOrNothing(value: unknown): boolean {
  return value === undefined || value === null || (isObject(value) && value.__type === 'Relation');
}

/** Relation fields of a class, by name, with the class each points to. */
export type RelationFields = Readonly<Record<string, string>>;

/**
 * Which fields of each class are relations, and the class each relates to: the class schema's Relation
 * fields (src/objects/schemas.ts, their one record; `_Role`'s `users` and `roles` built in), read once
 * per class and node and kept. A field's type never changes once set, so what this node writes is known
 * at once (`learn`); a field another node makes a relation is seen within the schema's cache time.
 */
export class RelationSchema {
  private readonly schemas: Pick<ClassSchemas, 'relationFields' | 'knowRelations'>;

  constructor(options: { schemas: Pick<ClassSchemas, 'relationFields' | 'knowRelations'> }) {
    this.schemas = options.schemas;
  }

  /** The relation fields of a class ({} for most classes). */
  fieldsOf(appId: string, className: string): Promise<RelationFields> {
    return this.schemas.relationFields(appId, className);
  }

  /** The class a relation field points to; `className` itself when the field is not a relation. */
  async targetOf(appId: string, className: string, key: string): Promise<string> {
    return own(await this.fieldsOf(appId, className), key) ?? className;
  }

  /** Refuses changes to a field known as a relation to another class, or a relation op on a field another op writes. */
  async check(appId: string, className: string, changes: readonly RelationChange[]): Promise<RelationFields> {
    const fields = await this.fieldsOf(appId, className);
    for (const change of changes) {
      const known = own(fields, change.key);
      if (known !== undefined && known !== change.targetClass) invalid();
    }
    return fields;
  }

  /** What this node wrote is known here at once. */
  learn(appId: string, className: string, changes: readonly RelationChange[]): void {
    this.schemas.knowRelations(appId, className, changes);
  }
}

/** The object as read: each relation field as its descriptor, after the stored fields. */
export function withDescriptors(object: StoredObject, fields: RelationFields): StoredObject {
  const keys = Object.keys(fields);
  if (keys.length === 0) return object;
  const data: JsonObject = { ...object.data };
  for (const key of keys) data[key] = relationDescriptor(fields[key]);
  return { ...object, data };
}

/** withDescriptors of fields still as JSON text (the get-by-id path that sends them as stored). */
export function jsonWithDescriptors<T extends StoredJson>(stored: T, fields: RelationFields): T {
  const keys = Object.keys(fields);
  if (keys.length === 0) return stored;
  const data = JSON.parse(stored.dataJson) as JsonObject;
  for (const key of keys) data[key] = relationDescriptor(fields[key]);
  return { ...stored, dataJson: JSON.stringify(data) };
}

/**
 * A where on a class with relation fields: a relation field compared with a pointer (equality, $in,
 * $ne, $nin, $all) means "the relation holds it", as on the hosted service; a subquery's where is read
 * with its own class's fields; everything else is unchanged.
 */
export function resolveRelationFields(where: Where, className: string, fieldsOf: (className: string) => RelationFields): Where {
  const resolve = (node: Where, fields: RelationFields): Where => {
    switch (node.op) {
      case 'and':
      case 'or':
        return { op: node.op, items: node.items.map((item) => resolve(item, fields)) };
      case 'not':
        return { op: 'not', item: resolve(node.item, fields) };
      case 'inQuery':
      case 'select': {
        const inner = node.query;
        return { ...node, query: { ...inner, where: resolve(inner.where, fieldsOf(inner.className)) } };
      }
      case 'eq':
      case 'in': {
        const targetClass = pointerField(node.path, fields);
        if (targetClass === undefined) return node;
        const values = node.op === 'eq' ? [node.value] : node.values;
        const objectIds = values.filter((value): value is string => typeof value === 'string');
        return { op: 'relationHolds', key: node.path[0], targets: { className: targetClass, objectIds } };
      }
      case 'all': {
        const targetClass = node.path.length === 1 ? own(fields, node.path[0]) : undefined;
        if (targetClass === undefined) return node;
        const items = node.values.map((value): Where => ({
          op: 'relationHolds',
          key: node.path[0],
          targets: { className: targetClass, objectIds: isPointerTo(value, targetClass) ? [value.objectId] : [] },
        }));
        return { op: 'and', items };
      }
      default:
        return node;
    }
  };
  return resolve(where, fieldsOf(className));
}

function isPointerTo(value: unknown, className: string): value is { objectId: string } {
  return isObject(value) && value.__type === 'Pointer' && value.className === className && typeof value.objectId === 'string';
}

/** The target class when `path` is a relation field's pointer id (`likes.objectId`, as a Pointer in a query reads). */
function pointerField(path: string[], fields: RelationFields): string | undefined {
  return path.length === 2 && path[1] === 'objectId' ? own(fields, path[0]) : undefined;
}
