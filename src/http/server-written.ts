import type { FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors.ts';
import { parseWriteBody, type ObjectService } from '../objects/service.ts';
import type { ClassAccess, ClassAccessOverrides } from './class-access.ts';
import type { ClassHandlers } from './routes/classes.ts';

/**
 * Built-in classes the server writes through an API of their own (`_Follower` and `_Followee` through
 * the friendship API, `_Status` through /1.1/statuses): read through /1.1/classes as any class, under
 * each object's ACL; written there, and through CQL, with the master key only. `how` names the API.
 */
export function serverWrittenClassHandlers(generic: ClassHandlers, how: string): ClassHandlers {
  const masterOnly = async (request: FastifyRequest) => {
    if (!request.ctx.master) throw new ApiError('operationForbidden', how);
  };
  return {
    ...generic,
    create: async (request, reply, className) => (await masterOnly(request), generic.create(request, reply, className)),
    update: async (request, reply, className, objectId) => (await masterOnly(request), generic.update(request, reply, className, objectId)),
    remove: async (request, reply, className, objectId) => (await masterOnly(request), generic.remove(request, reply, className, objectId)),
    admit: { create: masterOnly, update: masterOnly },
  };
}

/** The same classes as scan and CQL reach them. */
export function serverWrittenClassAccess(objects: ObjectService, how: string): Partial<ClassAccess> {
  const refuse = (master: boolean) => {
    if (!master) throw new ApiError('operationForbidden', how);
  };
  return {
    create: async (ctx, className, body) => (refuse(ctx.master), objects.create(ctx, className, parseWriteBody(body))),
    update: async (ctx, className, objectId, body, condition) => (refuse(ctx.master), objects.update(ctx, className, objectId, parseWriteBody(body), condition)),
    remove: async (ctx, className, objectId, condition) => (refuse(ctx.master), objects.remove(ctx, className, objectId, condition)),
  };
}

/** The classes the server writes through an API of their own, and the API each refusal names. */
const socialWrites = {
  _Follower: 'Follows are written through /1.1/users/<id>/friendship/<target>.',
  _Followee: 'Follows are written through /1.1/users/<id>/friendship/<target>.',
  _Status: 'Statuses are sent through /1.1/statuses.',
};

export function socialClassHandlers(generic: ClassHandlers): Record<string, ClassHandlers> {
  return Object.fromEntries(Object.entries(socialWrites).map(([className, how]) => [className, serverWrittenClassHandlers(generic, how)]));
}

export function socialClassAccess(objects: ObjectService): ClassAccessOverrides {
  return Object.fromEntries(Object.entries(socialWrites).map(([className, how]) => [className, serverWrittenClassAccess(objects, how)]));
}
