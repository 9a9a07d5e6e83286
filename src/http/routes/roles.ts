import type { FastifyInstance } from 'fastify';
import { roleClass } from '../../objects/roles.ts';
import type { ClassHandlers } from './classes.ts';
import { createQuery, deleteQuery, findQuery, listQuery, updateQuery } from '../params.ts';
import { declared, objectBody, pathParams, writeBody } from '../schema.ts';

interface ObjectParams {
  objectId: string;
}
const objectParams = pathParams('objectId');

/**
 * /1.1/roles[/<id>], the documented paths of `_Role`: the same handlers as /1.1/classes/_Role, which
 * the SDKs use (reference §6).
 */
export function registerRoleRoutes(app: FastifyInstance, options: { handlers: ClassHandlers }): void {
  const h = options.handlers;
  app.post('/1.1/roles', declared({ body: objectBody, querystring: createQuery }), (request, reply) => h.create(request, reply, roleClass));
  app.get('/1.1/roles', declared({ querystring: findQuery }), (request, reply) => h.find(request, reply, roleClass));
  app.get<{ Params: ObjectParams }>('/1.1/roles/:objectId', declared({ params: objectParams, querystring: listQuery }), (request, reply) =>
    h.get(request, reply, roleClass, request.params.objectId),
  );
  app.put<{ Params: ObjectParams }>('/1.1/roles/:objectId', declared({ params: objectParams, body: writeBody, querystring: updateQuery }), (request, reply) =>
    h.update(request, reply, roleClass, request.params.objectId),
  );
  app.delete<{ Params: ObjectParams }>('/1.1/roles/:objectId', declared({ params: objectParams, querystring: deleteQuery }), (request, reply) =>
    h.remove(request, reply, roleClass, request.params.objectId),
  );
}
