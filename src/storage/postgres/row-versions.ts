import type { StoredObject } from '../../objects/types.ts';

/**
 * The row version (xmin) an object was read at, by object: filled where PostgreSQL reads select it (get-by-id,
 * session lookups), read by the unlocked update (PostgresStore.updateUnlocked), which writes only if the row still
 * has that version. Keyed by the object itself, so nothing outlives the request holding it, and a stale version
 * only makes the write find nothing and go the locked path: it can never make a write land on a changed row.
 */
const versions = new WeakMap<StoredObject, string>();

export function withVersion(object: StoredObject, version: string): StoredObject {
  versions.set(object, version);
  return object;
}

export function versionOf(object: StoredObject): string | undefined {
  return versions.get(object);
}
