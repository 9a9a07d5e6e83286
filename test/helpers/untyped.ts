import { newObjectId } from '../../src/lib/ids.ts';
import type { JsonObject } from '../../src/objects/types.ts';
import type { Store } from '../../src/storage/store.ts';

/**
 * Stores objects as an import does, past the class schema: for tests of how queries treat one field
 * holding several types (a write through the API of another type than the field's is refused, 111;
 * data imported from elsewhere may still hold them). Answers the objectIds, in order, createdAt rising.
 */
export async function insertUntyped(store: Store, appId: string, className: string, rows: ReadonlyArray<Record<string, unknown>>): Promise<string[]> {
  const ids: string[] = [];
  const start = Date.now();
  for (const [i, data] of rows.entries()) {
    const at = start + i;
    const object = { className, objectId: newObjectId(at), createdAt: at, updatedAt: at, acl: null, data: data as JsonObject };
    const outcome = await store.insertObject(appId, object);
    if (!outcome.ok) throw new Error(`insertUntyped: ${outcome.reason}`);
    ids.push(object.objectId);
  }
  return ids;
}
