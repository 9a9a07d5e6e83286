import { ApiError, fail } from '../lib/errors.ts';
import { own } from '../lib/lookup.ts';
import type { Json, JsonObject } from './types.ts';
import { checkJson, deepEqual, isGeoPoint, isObject, writePath } from './values.ts';
import { holdsRelationOrNothing, isRelationOp, parseRelationOp } from './relations.ts';
import type { RelationChange } from '../storage/relation-store.ts';

export type Operation =
  | { kind: 'set'; path: string[]; value: Json }
  | { kind: 'delete'; path: string[] }
  | { kind: 'increment'; path: string[]; amount: number }
  | { kind: 'add' | 'addUnique' | 'remove'; path: string[]; objects: Json[] }
  | { kind: 'bitAnd' | 'bitOr' | 'bitXor'; path: string[]; value: number }
  /** Members added to or removed from a relation: stored beside the object, never in its fields. */
  | { kind: 'relation'; path: string[]; changes: RelationChange[] };

/** Why an arithmetic result is refused (README "Limits"): JSON has no Infinity, and past 2^53 counting stops being exact. */
const outOfRange = `cannot be stored (numbers must be finite, and whole numbers within ±${Number.MAX_SAFE_INTEGER} to count exactly)`;

function finiteNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail('incorrectType', `${what} must be a number.`);
  return value;
}

function parseOperation(path: string[], spec: Record<string, unknown>): Operation {
  if (isRelationOp(spec.__op)) return { kind: 'relation', path, changes: parseRelationOp(path, spec) };
  switch (spec.__op) {
    case 'Delete':
      return { kind: 'delete', path };
    case 'Increment':
      return { kind: 'increment', path, amount: finiteNumber(spec.amount ?? 1, 'Increment amount') };
    case 'Decrement':
      return { kind: 'increment', path, amount: -finiteNumber(spec.amount ?? 1, 'Decrement amount') };
    case 'Add':
    case 'AddUnique':
    case 'Remove': {
      if (!Array.isArray(spec.objects)) fail('incorrectType', `${spec.__op} needs an "objects" array.`);
      const kind = spec.__op === 'Add' ? 'add' : spec.__op === 'AddUnique' ? 'addUnique' : 'remove';
      return { kind, path, objects: spec.objects.map((item) => checkJson(item)) };
    }
    case 'BitAnd':
    case 'BitOr':
    case 'BitXor': {
      const value = spec.value;
      if (!Number.isSafeInteger(value)) fail('incorrectType', `${spec.__op} needs an integer "value".`);
      const kind = spec.__op === 'BitAnd' ? 'bitAnd' : spec.__op === 'BitOr' ? 'bitOr' : 'bitXor';
      return { kind, path, value: value as number };
    }
    default:
      // Code 1, as the hosted service answered an `__op` it did not know (the PHP SDK's testSetHashValue sends "add").
      return fail('unknownOperation', `Unsupported operation '${String(spec.__op)}'.`);
  }
}

/** Reads a write body's fields (except those the caller has taken out) as operations. */
export function parseOperations(fields: Record<string, unknown>): Operation[] {
  return Object.entries(fields).map(([key, value]) => {
    const path = writePath(key);
    if (isObject(value) && '__op' in value) return parseOperation(path, value);
    return { kind: 'set', path, value: checkJson(value) };
  });
}

function parentOf(data: JsonObject, path: string[], create: boolean): JsonObject | null {
  let node: JsonObject = data;
  for (const segment of path.slice(0, -1)) {
    // Own fields only: a field named 'constructor' or 'toString' that is not there is not there.
    const next = own(node, segment);
    if (isObject(next)) {
      node = next as JsonObject;
    } else if (create && (next === undefined || next === null)) {
      const fresh: JsonObject = {};
      node[segment] = fresh;
      node = fresh;
    } else if (create) {
      throw new ApiError('incorrectType', `Cannot set '${path.join('.')}': '${segment}' is not an object.`);
    } else {
      return null;
    }
  }
  return node;
}

/** The relation changes of a write's operations, in order. */
export function relationChanges(operations: readonly Operation[]): RelationChange[] {
  return operations.flatMap((op) => (op.kind === 'relation' ? op.changes : []));
}

/** Applies operations to a copy of the data; a type clash is an ApiError value. */
export function applyOperations(current: JsonObject, operations: Operation[]): JsonObject | ApiError {
  const data = structuredClone(current);
  try {
    for (const op of operations) {
      const field = op.path[op.path.length - 1];
      if (op.kind === 'delete') {
        const parent = parentOf(data, op.path, false);
        if (parent) delete parent[field];
        continue;
      }
      if (op.kind === 'relation') {
        // The members live beside the object; its field may only be empty or a relation already.
        if (!holdsRelationOrNothing(own(data, field))) return new ApiError('invalidRelation');
        continue;
      }
      const parent = parentOf(data, op.path, true) as JsonObject;
      const existing = own(parent, field);
      const name = op.path.join('.');
      switch (op.kind) {
        case 'set':
          parent[field] = op.value;
          break;
        case 'increment': {
          if (existing !== undefined && existing !== null && typeof existing !== 'number') {
            return new ApiError('incorrectType', `Cannot increment '${name}': it is not a number.`);
          }
          const base = (existing as number | null) ?? 0;
          const sum = base + op.amount;
          // JSON has no Infinity (it was stored as null), and a whole-number counter past 2^53 stops counting exactly.
          const wholeNumbers = Number.isSafeInteger(base) && Number.isSafeInteger(op.amount);
          if (!Number.isFinite(sum) || (wholeNumbers && !Number.isSafeInteger(sum))) {
            return new ApiError('incorrectType', `Cannot increment '${name}': the result ${outOfRange}.`);
          }
          parent[field] = sum;
          break;
        }
        case 'bitAnd':
        case 'bitOr':
        case 'bitXor': {
          if (existing !== undefined && existing !== null && !Number.isSafeInteger(existing)) {
            return new ApiError('incorrectType', `Cannot apply ${op.kind} to '${name}': it is not an integer.`);
          }
          const base = BigInt((existing as number | null) ?? 0);
          const operand = BigInt(op.value);
          const result = op.kind === 'bitAnd' ? base & operand : op.kind === 'bitOr' ? base | operand : base ^ operand;
          const value = Number(BigInt.asIntN(64, result));
          if (!Number.isSafeInteger(value)) {
            return new ApiError('incorrectType', `Cannot apply ${op.kind} to '${name}': the result ${outOfRange}.`);
          }
          parent[field] = value;
          break;
        }
        default: {
          if (existing !== undefined && existing !== null && !Array.isArray(existing)) {
            return new ApiError('incorrectType', `Cannot apply ${op.kind} to '${name}': it is not an array.`);
          }
          const list = [...((existing as Json[] | null) ?? [])];
          if (op.kind === 'add') list.push(...op.objects);
          else if (op.kind === 'addUnique') {
            for (const item of op.objects) if (!list.some((have) => deepEqual(have, item))) list.push(item);
          } else {
            parent[field] = list.filter((have) => !op.objects.some((item) => deepEqual(have, item)));
            break;
          }
          parent[field] = list;
        }
      }
    }
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  return oneGeoPoint(data) ?? data;
}

/**
 * At most one GeoPoint field per object (the hosted rule, reference §10): the store keeps that one's
 * coordinates in indexed columns (src/storage/sql/object-row.ts). 111, as Parse answered it.
 */
function oneGeoPoint(data: JsonObject): ApiError | null {
  const fields = Object.keys(data).filter((key) => isGeoPoint(data[key]));
  if (fields.length < 2) return null;
  return new ApiError('incorrectType', `An object may have only one GeoPoint field; this one would have ${fields.map((f) => `'${f}'`).join(' and ')}.`);
}
