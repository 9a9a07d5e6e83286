import { ApiError, fail } from '../lib/errors.ts';
import type { BuildProgress, ClassIndex, IndexKey } from '../storage/class-index-store.ts';
import { fieldPath, isObject } from './values.ts';

const indexName = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** Kept in columns the schema indexes already; an index on the JSON would never be read. */
const columnFields = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL']);
const maxKeys = 8;

export function checkIndexName(name: string): void {
  if (!indexName.test(name)) fail('invalidIndex', `Invalid index name '${name}': a letter, then letters, digits or _ (64 at most).`);
}

/** The body of POST /1.1/indexes/<className>: {"name": "byScore", "keys": {"score": -1, "owner.name": 1}, "unique": false}. */
/** The shape of that body, as the route declares it; allOf keeps the order its faults are answered in. */
export const indexSpecSchema = {
  type: 'object',
  'x-error': 'invalidIndex',
  allOf: [
    { additionalProperties: false, properties: { name: {}, keys: {}, unique: {} }, 'x-error': { kind: 'invalidIndex', message: "Unknown index option '{additionalProperty}'." } },
    { required: ['name'], properties: { name: { type: 'string', 'x-error': { kind: 'invalidIndex', message: 'The index needs a name.' }, 'x-missing': { kind: 'invalidIndex', message: 'The index needs a name.' } } } },
    {
      required: ['keys'],
      properties: {
        keys: {
          type: 'object',
          minProperties: 1,
          maxProperties: maxKeys,
          'x-error': { kind: 'invalidIndex', message: `The index needs keys: {"field": 1 or -1}, ${maxKeys} at most.` },
          'x-missing': { kind: 'invalidIndex', message: `The index needs keys: {"field": 1 or -1}, ${maxKeys} at most.` },
        },
      },
    },
    { properties: { unique: { type: 'boolean', 'x-error': { kind: 'invalidIndex', message: 'unique is true or false.' } } } },
  ],
};

/** `body` has passed indexSpecSchema. */
export function parseIndexSpec(body: { name: string; keys: Record<string, unknown>; unique?: boolean }): { name: string; keys: IndexKey[]; unique: boolean } {
  checkIndexName(body.name);
  const keys = body.keys;
  return {
    name: body.name,
    unique: body.unique === true,
    keys: Object.entries(keys).map(([field, direction]) => {
      if (columnFields.has(field)) fail('invalidKeyName', `'${field}' is indexed already.`);
      if (direction !== 1 && direction !== -1) fail('invalidIndex', `The direction of '${field}' is 1 or -1.`);
      return { path: fieldPath(field), descending: direction === -1 };
    }),
  };
}

/**
 * An index as the API and the CLI show it: keys as {"field.path": 1 or -1}, in their order; while building,
 * the progress the database reports; once failed, why, as the error body the request would have had.
 */
export function shownIndex(index: ClassIndex): ShownIndex {
  const keys = Object.fromEntries(index.keys.map((key) => [key.path.join('.'), key.descending ? -1 : 1] as const));
  const shown: ShownIndex = { name: index.name, keys, unique: index.unique, state: index.state };
  if (index.progress) shown.progress = index.progress;
  if (index.failure) {
    const error = index.failure.reason === 'duplicates' ? new ApiError('indexDuplicates') : new ApiError('indexBuildFailed', `The index could not be built: ${index.failure.message}`);
    shown.code = error.code;
    shown.error = error.message;
  }
  return shown;
}

export interface ShownIndex {
  name: string;
  keys: Record<string, 1 | -1>;
  unique: boolean;
  state: ClassIndex['state'];
  progress?: BuildProgress;
  code?: number;
  error?: string;
}
