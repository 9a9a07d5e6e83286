import { isoDate } from '../lib/clock.ts';
import type { JsonObject, StoredObject } from './types.ts';
import type { Projection } from './query.ts';
import { isObject } from './values.ts';

export interface WireOptions {
  projection?: Projection | null;
  returnAcl?: boolean;
}

function pick(source: JsonObject, path: string[], into: JsonObject): void {
  const [head, ...rest] = path;
  if (!(head in source)) return;
  if (rest.length === 0) {
    into[head] = source[head];
    return;
  }
  const child = source[head];
  if (!isObject(child)) return;
  const target = (isObject(into[head]) ? into[head] : (into[head] = {})) as JsonObject;
  pick(child as JsonObject, rest, target);
}

function drop(data: JsonObject, path: string[]): void {
  const [head, ...rest] = path;
  if (rest.length === 0) delete data[head];
  else if (isObject(data[head])) drop(data[head] as JsonObject, rest);
}

function project(data: JsonObject, projection: Projection): JsonObject {
  let out: JsonObject = data;
  if (projection.include.length > 0) {
    out = {};
    for (const path of projection.include) pick(data, path, out);
  } else {
    out = structuredClone(data);
  }
  for (const path of projection.exclude) drop(out, path);
  return out;
}

/** The object as clients see it: its fields, id and ISO timestamps, and the ACL only when asked for. */
export function toWire(object: StoredObject, options: WireOptions = {}): JsonObject {
  const data = options.projection ? project(object.data, options.projection) : object.data;
  const out: JsonObject = {
    ...data,
    objectId: object.objectId,
    createdAt: isoDate(object.createdAt),
    updatedAt: isoDate(object.updatedAt),
  };
  if (options.returnAcl && object.acl) out.ACL = object.acl;
  return out;
}
