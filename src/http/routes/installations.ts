import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isoDate } from '../../lib/clock.ts';
import { parseWriteBody, touchedRoots, type ObjectService } from '../../objects/service.ts';
import { toWire, touchedFields } from '../../objects/wire.ts';
import { installationClass, type InstallationService } from '../../push/installations.ts';
import { ApiError } from '../../lib/errors.ts';
import { conditionOf, createQuery, deleteQuery, findQuery, flag, listParams, listQuery, queryOf, sendsObjectBack, updateQuery } from '../params.ts';
import { declared, objectBody, pathParams, writeBody } from '../schema.ts';
import { answerObject } from '../answer.ts';
import { genericHandlers, missing, type ClassHandlers } from './classes.ts';
import type { ClassAccess } from '../class-access.ts';
import type { Caller } from '../../objects/acl.ts';

interface ObjectParams {
  objectId: string;
}
const objectParams = pathParams('objectId');

/**
 * The hosted service's default class permissions of `_Installation`: delete with the master key only
 * (find too: a rule of every query that reads the class, src/objects/query-reach.ts).
 */
function byClassPermission(caller: Caller, action: 'delete'): void {
  if (!caller.master) throw new ApiError('forbidden', `Forbidden to ${action} by class permissions.`);
}

/**
 * `_Installation` handlers, shared by /1.1/installations (docs, Java SDK) and
 * /1.1/classes/_Installation (JS SDK). A create with a known installationId updates that record;
 * find and delete need the master key; one bound to a user is that user's (src/push/installations.ts).
 */
export function installationHandlers(options: { objects: ObjectService; installations: InstallationService }): ClassHandlers {
  const generic = genericHandlers(options.objects);
  return {
    async create(request, reply, className) {
      const { created, object } = await options.installations.save(request.ctx, parseWriteBody(request.body));
      const base = className === installationClass && request.url.startsWith('/1.1/classes') ? '/1.1/classes/_Installation' : '/1.1/installations';
      reply.status(created ? 201 : 200).header('Location', `${base}/${object.objectId}`);
      if (await sendsObjectBack(queryOf(request), options.objects, request.ctx, object)) return toWire(object);
      const body: Record<string, string> = { objectId: object.objectId, createdAt: isoDate(object.createdAt) };
      if (!created) body.updatedAt = isoDate(object.updatedAt);
      return body;
    },
    async get(request, _reply, _className, objectId) {
      const found = await options.installations.get(request.ctx, objectId);
      if (found === null || found === 'noClass') return missing(request, found);
      return answerObject(options.objects, request.ctx, found, listParams(queryOf(request)));
    },
    async update(request, _reply, _className, objectId) {
      const query = queryOf(request);
      const body = parseWriteBody(request.body ?? {});
      const saved = await options.installations.update(request.ctx, objectId, body, conditionOf(query));
      if (await sendsObjectBack(query, options.objects, request.ctx, saved)) {
        return touchedFields(toWire(saved, { returnAcl: flag(query, 'returnACL') }), touchedRoots(body));
      }
      return { updatedAt: isoDate(saved.updatedAt), objectId: saved.objectId };
    },
    async remove(request, reply, className, objectId) {
      byClassPermission(request.ctx, 'delete');
      return generic.remove(request, reply, className, objectId);
    },
    async find(request, reply, className) {
      return generic.find(request, reply, className);
    },
  };
}

/** `_Installation` as scan and CQL reach it: the installation service and the class's delete permission, as above. */
export function installationClassAccess(options: { objects: ObjectService; installations: InstallationService }): Partial<ClassAccess> {
  return {
    create: async (ctx, _className, body) => (await options.installations.save(ctx, parseWriteBody(body))).object,
    update: (ctx, _className, objectId, body, condition) => options.installations.update(ctx, objectId, parseWriteBody(body), condition),
    remove: (ctx, className, objectId, condition) => {
      byClassPermission(ctx, 'delete');
      return options.objects.remove(ctx, className, objectId, condition);
    },
  };
}

export function registerInstallationRoutes(app: FastifyInstance, options: { handlers: ClassHandlers }): void {
  const h = options.handlers;
  const one = (request: FastifyRequest<{ Params: ObjectParams }>) => request.params.objectId;
  app.post('/1.1/installations', declared({ body: objectBody, querystring: createQuery }), (request, reply) => h.create(request, reply, installationClass));
  app.get('/1.1/installations', declared({ querystring: findQuery }), (request, reply) => h.find(request, reply, installationClass));
  app.get<{ Params: ObjectParams }>('/1.1/installations/:objectId', declared({ params: objectParams, querystring: listQuery }), (request, reply: FastifyReply) =>
    h.get(request, reply, installationClass, one(request)),
  );
  app.put<{ Params: ObjectParams }>('/1.1/installations/:objectId', declared({ params: objectParams, body: writeBody, querystring: updateQuery }), (request, reply) =>
    h.update(request, reply, installationClass, one(request)),
  );
  app.delete<{ Params: ObjectParams }>('/1.1/installations/:objectId', declared({ params: objectParams, querystring: deleteQuery }), async (request, reply) => {
    for (const objectId of one(request).split(',').filter(Boolean)) {
      await h.remove(request, reply, installationClass, objectId);
    }
    return {};
  });
}
