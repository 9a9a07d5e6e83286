import type { Json, JsonObject } from './types.ts';
import { isObject } from './values.ts';

/**
 * File values in objects. The SDKs write a file as its whole record (`_toFullJSON`), REST clients and
 * CQL's file() as `{"__type":"File","id":…}`; either is kept as written and answered as the hosted
 * service did, the record itself with `__type: "File"` (the JavaScript SDK's recordings), read at
 * answer time so a URL changed since (roost files mirror) shows everywhere the file is used.
 */

/** The `_File` objectId a File value names, if it names one. */
export function fileIdOf(value: unknown): string | null {
  if (!isObject(value) || value.__type !== 'File') return null;
  const id = value.objectId ?? value.id;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** Calls `visit` with each File value of answered objects: a field's, an array element's, an included object's. */
function eachFile(objects: readonly JsonObject[], visit: (holder: JsonObject | Json[], at: string | number, id: string) => void): void {
  const walk = (object: JsonObject) => {
    for (const [key, value] of Object.entries(object)) {
      if (Array.isArray(value)) value.forEach((item, index) => look(value, index, item));
      else look(object, key, value);
    }
  };
  const look = (holder: JsonObject | Json[], at: string | number, value: Json) => {
    const id = fileIdOf(value);
    if (id !== null) visit(holder, at, id);
    else if (isObject(value) && value.__type === 'Pointer' && typeof value.objectId === 'string' && Object.keys(value).length > 3) walk(value as JsonObject);
  };
  objects.forEach(walk);
}

export function fileIdsIn(objects: readonly JsonObject[]): Set<string> {
  const ids = new Set<string>();
  eachFile(objects, (_holder, _at, id) => ids.add(id));
  return ids;
}

/** Puts each file's record (as answered) in place of the values naming it; a value whose record is gone stays as kept. */
export function putFiles(objects: readonly JsonObject[], records: ReadonlyMap<string, JsonObject>): void {
  eachFile(objects, (holder, at, id) => {
    const record = records.get(id);
    if (record) (holder as Record<string | number, Json>)[at] = { ...record, __type: 'File' };
  });
}

/** Whether an object's stored JSON text may hold a File value (the get-by-id fast path sends only text without one). */
export function mayHoldFile(dataJson: string): boolean {
  return /"__type":\s*"File"/.test(dataJson);
}
