import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isoDate } from '../../lib/clock.ts';
import { parseWriteBody, touchedRoots, type ObjectService } from '../../objects/service.ts';
import { toWire, touchedFields, wireJson, wirePageJson } from '../../objects/wire.ts';
import { ApiError } from '../../lib/errors.ts';
import { own } from '../../lib/lookup.ts';
import { maxLimit } from '../../objects/query.ts';
import { conditionOf, createQuery, deleteQuery, findQuery, flag, listParams, listQuery, param, queryOf, sendsObjectBack, updateQuery, type ListParams, type Query } from '../params.ts';
import { declared, objectBody, pathParams, writeBody } from '../schema.ts';
import type { FoundJson, JsonObject, StoredObject } from '../../objects/types.ts';
import type { Caller } from '../../objects/acl.ts';
import { includedRootJson, includesAsStored, includingRoot, planInclude, type IncludePlan, type IncludingRoot } from '../../objects/include.ts';
import { answerObject, answerObjects, withFileRecordsOf } from '../answer.ts';
import { mayHoldFile } from '../../objects/file-values.ts';

interface ClassParams {
  className: string;
}
interface ObjectParams extends ClassParams {
  objectId: string;
}

/** Handlers of one class; built-in classes (_User, _Installation) supply their own. */
export interface ClassHandlers {
  create(request: FastifyRequest, reply: FastifyReply, className: string): Promise<unknown>;
  get(request: FastifyRequest, reply: FastifyReply, className: string, objectId: string): Promise<unknown>;
  update(request: FastifyRequest, reply: FastifyReply, className: string, objectId: string): Promise<unknown>;
  remove(request: FastifyRequest, reply: FastifyReply, className: string, objectId: string): Promise<unknown>;
  find(request: FastifyRequest, reply: FastifyReply, className: string): Promise<unknown>;
  /**
   * Refusals answered before the body is read, as these handlers answered them before route schemas
   * (who may write the class at all): the routes run them ahead of the body's validation.
   */
  admit?: {
    create?(request: FastifyRequest): Promise<void>;
    update?(request: FastifyRequest, objectId: string): Promise<void>;
  };
}

const classParams = pathParams('className');
const objectParams = pathParams('className', 'objectId');

/**
 * Most ids one DELETE may join with commas: a query's largest page, so `query.limit(1000).destroyAll()`
 * (one path holding every id) still works; the router's segment limit (server.ts) leaves room for them.
 */
export const maxIdsPerDelete = maxLimit;

/** A response marked by the batch runner gets `null` for a missing object, as the service answers there. */
export const batchHeader = 'x-roost-batch';

/** Whether a read's query is valid and asks for none of `keys`, the ACL and `include`: its fields go out as stored. */
function sendsFieldsAsStored(query: Query): boolean {
  try {
    const params = listParams(query);
    return params.projection === null && !params.returnAcl && params.include === null;
  } catch {
    return false; // the full path reports the error, after the read as always
  }
}

/**
 * Whether a query page goes out as its objects' stored fields (wirePageJson): no `keys`, ACL or
 * `include`, and a class of the application's own (built-in classes have views of their own, src/http/answer.ts,
 * and _Installation rows may hold text push wrote with json_set). A page holding a File value takes the full
 * path, which reads the files' records.
 */
function sendsPageAsStored(className: string, params: ListParams, includes: boolean): boolean {
  return params.projection === null && !params.returnAcl && (params.include === null || includes) && !className.startsWith('_');
}

/**
 * The page's objects as JSON text with their includes (a one-level include: includesAsStored), each
 * included object spliced in as its stored text (src/objects/include.ts); null when the full path must
 * answer (a class with a view of its own, a File value, a server-owned key among stored fields).
 */
async function includedPage(objects: ObjectService, caller: Caller, found: readonly FoundJson[], plan: IncludePlan): Promise<string[] | null> {
  const roots: IncludingRoot[] = [];
  for (const one of found) {
    const root = includingRoot(one.dataJson, plan);
    if (root === null) return null;
    roots.push(root);
  }
  const included = await objects.readIncludedJson(caller, roots.map((root) => root.data), plan);
  if (included === null) return null;
  return found.map((one, index) => includedRootJson(one, roots[index], plan, included));
}

/** A found object parsed; its ACL is not read (the page sends none). */
function storedOf(className: string, found: FoundJson): StoredObject {
  return { className, objectId: found.objectId, createdAt: found.createdAt, updatedAt: found.updatedAt, acl: null, data: JSON.parse(found.dataJson) };
}

/** What a read that found nothing answers: 404 when the class has no objects, else {} (null inside a batch). */
export function missing(request: FastifyRequest, found: null | 'noClass'): null | Record<string, never> {
  // The hosted service's words, grammar included (reference §2, §11).
  if (found === 'noClass') throw new ApiError('objectNotFound', "Class or object doesn't exists.");
  return request.headers[batchHeader] ? null : {};
}

export function genericHandlers(objects: ObjectService): ClassHandlers {
  return {
    async create(request, reply, className) {
      const saved = await objects.create(request.ctx, className, parseWriteBody(request.body));
      reply.status(201).header('Location', `/1.1/classes/${className}/${saved.objectId}`);
      if (await sendsObjectBack(queryOf(request), objects, request.ctx, saved)) return withFileRecordsOf(objects, request.ctx.appId, toWire(saved));
      return { objectId: saved.objectId, createdAt: isoDate(saved.createdAt) };
    },

    async get(request, reply, className, objectId) {
      const query = queryOf(request);
      if (sendsFieldsAsStored(query)) {
        const stored = await objects.getJson(request.ctx, className, objectId);
        if (stored === null || stored === 'noClass') return missing(request, stored);
        if (!mayHoldFile(stored.dataJson)) {
          reply.type('application/json; charset=utf-8');
          return wireJson({ className, objectId }, stored);
        }
      }
      const found = await objects.get(request.ctx, className, objectId);
      if (found === null || found === 'noClass') return missing(request, found);
      return answerObject(objects, request.ctx, found, listParams(query));
    },

    async update(request, _reply, className, objectId) {
      const query = queryOf(request);
      const body = parseWriteBody(request.body ?? {});
      const saved = await objects.update(request.ctx, className, objectId, body, conditionOf(query));
      if (await sendsObjectBack(query, objects, request.ctx, saved)) {
        return withFileRecordsOf(objects, request.ctx.appId, touchedFields(toWire(saved, { returnAcl: flag(query, 'returnACL') }), touchedRoots(body)));
      }
      return { updatedAt: isoDate(saved.updatedAt), objectId: saved.objectId };
    },

    async remove(request, _reply, className, objectId) {
      await objects.remove(request.ctx, className, objectId, conditionOf(queryOf(request)));
      return {};
    },

    async find(request, reply, parentClass) {
      const query = queryOf(request);
      const params = listParams(query);
      // The SDKs' relation.query() when they do not know the target class: sent to the owner's class, answered
      // from the relation's, which the answer names so the SDK builds objects of it.
      const redirect = param(query, 'redirectClassNameForKey');
      const className = redirect ? await objects.relations.targetOf(request.ctx.appId, parentClass, redirect) : parentClass;
      const counted = params.count ? objects.count(request.ctx, className, params.where) : Promise.resolve(undefined);
      const plan = planInclude(params.include, params.projection);
      const includes = params.include !== null && includesAsStored(plan, params.returnAcl);
      const asStored = sendsPageAsStored(className, params, includes) ? await Promise.all([objects.findJson(request.ctx, className, params), counted]) : null;
      if (asStored !== null && !asStored[0].some((one) => mayHoldFile(one.dataJson))) {
        const page = includes ? await includedPage(objects, request.ctx, asStored[0], plan) : null;
        if (!includes || page !== null) {
          reply.type('application/json; charset=utf-8');
          return wirePageJson(className, asStored[0], asStored[1], redirect ? className : undefined, page === null ? undefined : (_one, index) => page[index]);
        }
      }
      // A page holding a File value is parsed and answered in full (its files' records read).
      const [results, count] = asStored === null
        ? await Promise.all([objects.find(request.ctx, className, params), counted])
        : [asStored[0].map((one) => storedOf(className, one)), asStored[1]];
      const body: { results: unknown[]; count?: number; className?: string } = {
        results: await answerObjects(objects, request.ctx, results, params),
      };
      if (count !== undefined) body.count = count;
      if (redirect) body.className = className;
      return body;
    },
  };
}

export function registerClassRoutes(
  app: FastifyInstance,
  options: { generic: ClassHandlers; builtIn: Record<string, ClassHandlers> },
): void {
  const handlersFor = (className: string) => own(options.builtIn, className) ?? options.generic;

  const admitCreate = async (request: FastifyRequest) => {
    await handlersFor((request.params as ClassParams).className).admit?.create?.(request);
  };
  const admitUpdate = async (request: FastifyRequest) => {
    const { className, objectId } = request.params as ObjectParams;
    await handlersFor(className).admit?.update?.(request, objectId);
  };

  const classCreate = declared({ params: classParams, body: objectBody, querystring: createQuery });
  app.post<{ Params: ClassParams }>('/1.1/classes/:className', { ...classCreate, preValidation: admitCreate }, (request, reply) =>
    handlersFor(request.params.className).create(request, reply, request.params.className),
  );
  app.get<{ Params: ClassParams }>('/1.1/classes/:className', declared({ params: classParams, querystring: findQuery }), (request, reply) =>
    handlersFor(request.params.className).find(request, reply, request.params.className),
  );
  app.get<{ Params: ObjectParams }>('/1.1/classes/:className/:objectId', declared({ params: objectParams, querystring: listQuery }), (request, reply) =>
    handlersFor(request.params.className).get(request, reply, request.params.className, request.params.objectId),
  );
  const classUpdate = declared({ params: objectParams, body: writeBody, querystring: updateQuery });
  app.put<{ Params: ObjectParams }>('/1.1/classes/:className/:objectId', { ...classUpdate, preValidation: admitUpdate }, (request, reply) =>
    handlersFor(request.params.className).update(request, reply, request.params.className, request.params.objectId),
  );
  // The JS SDK's destroyAll (inside /1.1/batch) and Java's deleteAll send comma-joined ids in one DELETE.
  app.delete<{ Params: ObjectParams }>('/1.1/classes/:className/:objectId', declared({ params: objectParams, querystring: deleteQuery }), async (request, reply) => {
    const { className } = request.params;
    const handlers = handlersFor(className);
    const objectIds = [...new Set(request.params.objectId.split(',').filter(Boolean))];
    if (objectIds.length > maxIdsPerDelete) throw new ApiError('tooManyIds');
    // Each object under its own ACL: every one the caller may delete is deleted, whatever its place in
    // the list, and the first refusal is the answer (the SDKs report one error for the whole call).
    let refusal: ApiError | null = null;
    for (const objectId of objectIds) {
      try {
        await handlers.remove(request, reply, className, objectId);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        refusal ??= error;
      }
    }
    if (refusal) throw refusal;
    return {};
  });
}
