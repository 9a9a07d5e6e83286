import { toUserWire } from '../accounts/user-fields.ts';
import type { Caller } from '../objects/acl.ts';
import { planInclude, renderIncluded, type IncludeTree, type ObjectView } from '../objects/include.ts';
import type { Projection } from '../objects/query.ts';
import type { ObjectService } from '../objects/service.ts';
import type { JsonObject, StoredObject } from '../objects/types.ts';
import { toWire } from '../objects/wire.ts';
import { fileIdsIn, putFiles } from '../objects/file-values.ts';
import { table } from '../lib/lookup.ts';

/** Classes whose objects go out otherwise than toWire, wherever they are answered (root or included). */
const views = table<(caller: Caller, objects: ObjectService) => ObjectView>({
  // No password, hash or token; authData only for the user itself and the master key.
  _User: (caller) => (object, options) => toUserWire(object, { ...options, viewer: caller }),
  // The url signed when files are private.
  _File: (_caller, objects) => (object, options) => objects.fileView(toWire(object, options)),
});

/** How `caller` sees an object of any class. */
export function viewFor(caller: Caller, objects: ObjectService): ObjectView {
  const byClass = new Map<string, ObjectView>();
  return (object, options) => {
    let view = byClass.get(object.className);
    if (!view) byClass.set(object.className, (view = views[object.className]?.(caller, objects) ?? toWire));
    return view(object, options);
  };
}

export interface ReadAnswer {
  include: IncludeTree | null;
  projection: Projection | null;
  returnAcl: boolean;
}

/**
 * Objects read by `caller` as they go out: relation fields as descriptors, `keys`, `returnACL`, and `include` expanded with one read per
 * level and class (ObjectService.readIncluded), each object in its class's view, File values as their records (src/objects/file-values.ts).
 */
export async function answerObjects(
  objects: ObjectService,
  caller: Caller,
  roots: readonly StoredObject[],
  params: ReadAnswer,
): Promise<JsonObject[]> {
  const plan = planInclude(params.include, params.projection);
  const [described, included] = await Promise.all([objects.describe(caller.appId, roots), objects.readIncluded(caller, roots, plan)]);
  const options = { view: viewFor(caller, objects), returnAcl: params.returnAcl };
  return withFileRecords(objects, caller.appId, described.map((root) => renderIncluded(root, plan, included, options)));
}

/**
 * File values of answered objects as their `_File` records (src/objects/file-values.ts). Every answer that
 * carries an object's fields goes through here: reads, and the writes, sign-ups and logins that answer
 * without a read, so `AV._decode` rebuilds an AV.File whichever path the object came back by.
 */
export async function withFileRecords<T extends JsonObject>(objects: ObjectService, appId: string, answered: T[]): Promise<T[]> {
  const fileIds = fileIdsIn(answered);
  if (fileIds.size > 0) putFiles(answered, await objects.fileRecords(appId, [...fileIds]));
  return answered;
}

/** withFileRecords of one answer. */
export async function withFileRecordsOf<T extends JsonObject>(objects: ObjectService, appId: string, answered: T): Promise<T> {
  return (await withFileRecords(objects, appId, [answered]))[0];
}

/** answerObjects of one object. */
export async function answerObject(objects: ObjectService, caller: Caller, root: StoredObject, params: ReadAnswer): Promise<JsonObject> {
  return (await answerObjects(objects, caller, [root], params))[0];
}
