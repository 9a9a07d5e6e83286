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
export function parseIndexSpec(body: unknown): { name: string; keys: IndexKey[]; unique: boolean } {
  if (!isObject(body)) fail('invalidIndex');
  const unknown = Object.keys(body).filter((key) => key !== 'name' && key !== 'keys' && key !== 'unique');
  if (unknown.length) fail('invalidIndex', `Unknown index option '${unknown[0]}'.`);
  if (typeof body.name !== 'string') fail('invalidIndex', 'The index needs a name.');
  checkIndexName(body.name);
  const keys = body.keys;
  if (!isObject(keys) || Object.keys(keys).length === 0 || Object.keys(keys).length > maxKeys) {
    fail('invalidIndex', `The index needs keys: {"field": 1 or -1}, ${maxKeys} at most.`);
  }
  if (body.unique !== undefined && typeof body.unique !== 'boolean') fail('invalidIndex', 'unique is true or false.');
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
