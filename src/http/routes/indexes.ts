import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import { checkIndexName, parseIndexSpec, shownIndex } from '../../objects/index-spec.ts';
import { checkClassName } from '../../objects/values.ts';
import type { ClassIndexStore } from '../../storage/class-index-store.ts';
import { requireMaster } from '../context.ts';

/** Indexes users declare on fields of a class, with the master key (LeanCloud's console had them). */
export function registerIndexRoutes(app: FastifyInstance, options: { indexes: ClassIndexStore }): void {
  app.get<{ Params: { className: string } }>('/1.1/indexes/:className', async (request) => {
    requireMaster(request);
    checkClassName(request.params.className);
    const indexes = await options.indexes.list(request.ctx.appId, request.params.className);
    return { results: indexes.map(shownIndex) };
  });

  app.post<{ Params: { className: string } }>('/1.1/indexes/:className', async (request, reply) => {
    requireMaster(request);
    checkClassName(request.params.className);
    const spec = parseIndexSpec(request.body);
    const index = await options.indexes.create(request.ctx.appId, request.params.className, spec);
    if (index === 'exists') throw new ApiError('indexExists');
    if (index === 'duplicates') throw new ApiError('indexDuplicates');
    reply.code(201);
    return shownIndex(index);
  });

  app.delete<{ Params: { className: string; name: string } }>('/1.1/indexes/:className/:name', async (request) => {
    requireMaster(request);
    checkClassName(request.params.className);
    checkIndexName(request.params.name);
    if (!(await options.indexes.drop(request.ctx.appId, request.params.className, request.params.name))) throw new ApiError('indexNotFound');
    return {};
  });
}
