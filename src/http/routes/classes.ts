import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isoDate } from '../../lib/clock.ts';
import { parseWriteBody, type ObjectService } from '../../objects/service.ts';
import { toWire, wireJson } from '../../objects/wire.ts';
import { ApiError } from '../../lib/errors.ts';
import { own } from '../../lib/lookup.ts';
import { conditionOf, flag, listParams, queryOf, sendsObjectBack, type Query } from '../params.ts';

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
}

/** A response marked by the batch runner gets `null` for a missing object, as the service answers there. */
export const batchHeader = 'x-roost-batch';

/** Whether a read's query is valid and asks for neither `keys` nor the ACL: its fields go out as stored. */
function sendsFieldsAsStored(query: Query): boolean {
  try {
    const params = listParams(query);
    return params.projection === null && !params.returnAcl;
  } catch {
    return false; // the full path reports the error, after the read as always
  }
}

/** What a read that found nothing answers: 404 when the class has no objects, else {} (null inside a batch). */
export function missing(request: FastifyRequest, found: null | 'noClass'): null | Record<string, never> {
  if (found === 'noClass') throw new ApiError('objectNotFound', 'Class or object does not exist.');
  return request.headers[batchHeader] ? null : {};
}

export function genericHandlers(objects: ObjectService): ClassHandlers {
  return {
    async create(request, reply, className) {
      const saved = await objects.create(request.ctx, className, parseWriteBody(request.body));
      reply.status(201).header('Location', `/1.1/classes/${className}/${saved.objectId}`);
      if (sendsObjectBack(queryOf(request), request.ctx, saved)) return toWire(saved);
      return { objectId: saved.objectId, createdAt: isoDate(saved.createdAt) };
    },

    async get(request, reply, className, objectId) {
      const query = queryOf(request);
      if (sendsFieldsAsStored(query)) {
        const stored = await objects.getJson(request.ctx, className, objectId);
        if (stored === null || stored === 'noClass') return missing(request, stored);
        reply.type('application/json; charset=utf-8');
        return wireJson({ className, objectId }, stored);
      }
      const found = await objects.get(request.ctx, className, objectId);
      if (found === null || found === 'noClass') return missing(request, found);
      const params = listParams(query);
      return toWire(found, { projection: params.projection, returnAcl: params.returnAcl });
    },

    async update(request, _reply, className, objectId) {
      const query = queryOf(request);
      const saved = await objects.update(
        request.ctx,
        className,
        objectId,
        parseWriteBody(request.body ?? {}),
        conditionOf(query),
      );
      if (sendsObjectBack(query, request.ctx, saved)) return toWire(saved, { returnAcl: flag(query, 'returnACL') });
      return { updatedAt: isoDate(saved.updatedAt), objectId: saved.objectId };
    },

    async remove(request, _reply, className, objectId) {
      await objects.remove(request.ctx, className, objectId, conditionOf(queryOf(request)));
      return {};
    },

    async find(request, _reply, className) {
      const params = listParams(queryOf(request));
      const [results, count] = await Promise.all([
        objects.find(request.ctx, className, params),
        params.count ? objects.count(request.ctx, className, params.where) : Promise.resolve(undefined),
      ]);
      const body: { results: unknown[]; count?: number } = {
        results: results.map((object) =>
          toWire(object, { projection: params.projection, returnAcl: params.returnAcl }),
        ),
      };
      if (count !== undefined) body.count = count;
      return body;
    },
  };
}

export function registerClassRoutes(
  app: FastifyInstance,
  options: { generic: ClassHandlers; builtIn: Record<string, ClassHandlers> },
): void {
  const handlersFor = (className: string) => own(options.builtIn, className) ?? options.generic;

  app.post<{ Params: ClassParams }>('/1.1/classes/:className', (request, reply) =>
    handlersFor(request.params.className).create(request, reply, request.params.className),
  );
  app.get<{ Params: ClassParams }>('/1.1/classes/:className', (request, reply) =>
    handlersFor(request.params.className).find(request, reply, request.params.className),
  );
  app.get<{ Params: ObjectParams }>('/1.1/classes/:className/:objectId', (request, reply) =>
    handlersFor(request.params.className).get(request, reply, request.params.className, request.params.objectId),
  );
  app.put<{ Params: ObjectParams }>('/1.1/classes/:className/:objectId', (request, reply) =>
    handlersFor(request.params.className).update(request, reply, request.params.className, request.params.objectId),
  );
  // The JS SDK's destroyAll sends comma-joined ids in one DELETE.
  app.delete<{ Params: ObjectParams }>('/1.1/classes/:className/:objectId', async (request, reply) => {
    const handlers = handlersFor(request.params.className);
    for (const objectId of request.params.objectId.split(',').filter(Boolean)) {
      await handlers.remove(request, reply, request.params.className, objectId);
    }
    return {};
  });
}
