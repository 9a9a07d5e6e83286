import type { FastifyInstance } from 'fastify';
import type { ClassIndexes } from '../../objects/class-indexes.ts';
import { requireMaster } from '../context.ts';

/** Indexes users declare on fields of a class, with the master key (LeanCloud's console had them). */
export function registerIndexRoutes(app: FastifyInstance, options: { indexes: ClassIndexes }): void {
  const { indexes } = options;
  app.get<{ Params: { className: string } }>('/1.1/indexes/:className', async (request) => {
    requireMaster(request);
    return { results: await indexes.list(request.ctx.appId, request.params.className) };
  });

  app.post<{ Params: { className: string } }>('/1.1/indexes/:className', async (request, reply) => {
    requireMaster(request);
    const index = await indexes.create(request.ctx.appId, request.params.className, request.body);
    reply.code(201);
    return index;
  });

  app.delete<{ Params: { className: string; name: string } }>('/1.1/indexes/:className/:name', async (request) => {
    requireMaster(request);
    await indexes.drop(request.ctx.appId, request.params.className, request.params.name);
    return {};
  });
}
