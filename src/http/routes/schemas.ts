import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import type { ClassSchemas } from '../../objects/schemas.ts';
import { requireMaster } from '../context.ts';

/** Class schemas, with the master key: as the hosted service listed them, and Roost's way to set defaults (README). */
export function registerSchemaRoutes(app: FastifyInstance, options: { schemas: ClassSchemas }): void {
  const { schemas } = options;
  app.get('/1.1/schemas', async (request) => {
    requireMaster(request);
    return schemas.describeAll(request.ctx.appId);
  });

  app.get<{ Params: { className: string } }>('/1.1/schemas/:className', async (request) => {
    requireMaster(request);
    const schema = await schemas.describe(request.ctx.appId, request.params.className);
    if (schema === null) throw new ApiError('objectNotFound');
    return schema;
  });

  const update = async (request: { ctx: { appId: string }; params: { className: string }; body: unknown }) =>
    schemas.update(request.ctx.appId, request.params.className, request.body);
  app.put<{ Params: { className: string } }>('/1.1/schemas/:className', async (request) => {
    requireMaster(request);
    return update(request);
  });
  app.post<{ Params: { className: string } }>('/1.1/schemas/:className', async (request) => {
    requireMaster(request);
    return update(request);
  });
}
