import type { FastifyInstance } from 'fastify';
import { roleClass } from '../../objects/roles.ts';
import type { ClassHandlers } from './classes.ts';

interface ObjectParams {
  objectId: string;
}

/**
 * /1.1/roles[/<id>], the documented paths of `_Role`: the same handlers as /1.1/classes/_Role, which
 * the SDKs use (reference §6).
 */
export function registerRoleRoutes(app: FastifyInstance, options: { handlers: ClassHandlers }): void {
  const h = options.handlers;
  app.post('/1.1/roles', (request, reply) => h.create(request, reply, roleClass));
  app.get('/1.1/roles', (request, reply) => h.find(request, reply, roleClass));
  app.get<{ Params: ObjectParams }>('/1.1/roles/:objectId', (request, reply) => h.get(request, reply, roleClass, request.params.objectId));
  app.put<{ Params: ObjectParams }>('/1.1/roles/:objectId', (request, reply) =>
    h.update(request, reply, roleClass, request.params.objectId),
  );
  app.delete<{ Params: ObjectParams }>('/1.1/roles/:objectId', (request, reply) =>
    h.remove(request, reply, roleClass, request.params.objectId),
  );
}
