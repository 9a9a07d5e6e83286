import { own } from '../lib/lookup.ts';
import { parseWriteBody, type FindOptions, type ObjectService } from '../objects/service.ts';
import type { JsonObject, StoredObject, Where } from '../objects/types.ts';
import { answerObjects } from './answer.ts';
import type { RequestContext } from './context.ts';
import { listParams, type Query } from './params.ts';

/**
 * The objects of a class as scan and CQL reach them: the domain service each class's REST routes use
 * (accounts for `_User`, installations for `_Installation`, …) called directly, with the caller's
 * context, so a CQL write or a scan page follows the same ACL, schema and class rules as the REST
 * request it stands for, without a second HTTP round trip.
 */
export interface ClassAccess {
  find(ctx: RequestContext, className: string, options: FindOptions): Promise<StoredObject[]>;
  count(ctx: RequestContext, className: string, where: Where): Promise<number>;
  /** `body` as a REST create's JSON body. */
  create(ctx: RequestContext, className: string, body: JsonObject): Promise<StoredObject>;
  update(ctx: RequestContext, className: string, objectId: string, body: JsonObject, condition?: Where): Promise<StoredObject>;
  remove(ctx: RequestContext, className: string, objectId: string, condition?: Where): Promise<void>;
}

/** What a built-in class does otherwise than a user class; what it leaves out is the plain object service's. */
export type ClassAccessOverrides = Record<string, Partial<ClassAccess>>;

/** The object service for every class, with the built-in classes' own services where they have one. */
export function classAccess(objects: ObjectService, overrides: ClassAccessOverrides): ClassAccess {
  const plain: ClassAccess = {
    find: (ctx, className, options) => objects.find(ctx, className, options),
    count: (ctx, className, where) => objects.count(ctx, className, where),
    create: (ctx, className, body) => objects.create(ctx, className, parseWriteBody(body)),
    update: (ctx, className, objectId, body, condition) => objects.update(ctx, className, objectId, parseWriteBody(body), condition),
    remove: (ctx, className, objectId, condition) => objects.remove(ctx, className, objectId, condition),
  };
  const of = <K extends keyof ClassAccess>(className: string, name: K): ClassAccess[K] => own(overrides, className)?.[name] ?? plain[name];
  return {
    find: (ctx, className, options) => of(className, 'find')(ctx, className, options),
    count: (ctx, className, where) => of(className, 'count')(ctx, className, where),
    create: (ctx, className, body) => of(className, 'create')(ctx, className, body),
    update: (ctx, className, objectId, body, condition) => of(className, 'update')(ctx, className, objectId, body, condition),
    remove: (ctx, className, objectId, condition) => of(className, 'remove')(ctx, className, objectId, condition),
  };
}

/** A find answered as `GET /1.1/classes/<class>?<query>` answers it: `{results}`, and `count` when asked for. */
export async function findAnswer(
  access: ClassAccess,
  objects: ObjectService,
  ctx: RequestContext,
  className: string,
  query: Query,
): Promise<{ results: JsonObject[]; count?: number }> {
  const params = listParams(query);
  const [found, count] = await Promise.all([
    access.find(ctx, className, params),
    params.count ? access.count(ctx, className, params.where) : Promise.resolve(undefined),
  ]);
  const answer: { results: JsonObject[]; count?: number } = { results: await answerObjects(objects, ctx, found, params) };
  if (count !== undefined) answer.count = count;
  return answer;
}
