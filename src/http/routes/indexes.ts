import type { FastifyInstance } from 'fastify';
import { indexSpecSchema } from '../../objects/index-spec.ts';
import { declared, pathParams } from '../schema.ts';
import type { ClassIndexes } from '../../objects/class-indexes.ts';
import { requireMaster, requireMasterAndClass } from '../context.ts';

const classParams = pathParams('className');

/** Indexes users declare on fields of a class, with the master key (LeanCloud's console had them). */
export function registerIndexRoutes(app: FastifyInstance, options: { indexes: ClassIndexes }): void {
  const { indexes } = options;
  app.get<{ Params: { className: string } }>('/1.1/indexes/:className', declared({ params: classParams }), async (request) => {
    requireMaster(request);
    return { results: await indexes.list(request.ctx.appId, request.params.className) };
  });

  // The master key, then the class name, are answered before the body is read.
  app.post<{ Params: { className: string }; Body: Parameters<ClassIndexes['create']>[2] }>(
    '/1.1/indexes/:className',
    { ...declared({ params: classParams, body: indexSpecSchema }), preValidation: requireMasterAndClass },
    async (request, reply) => {
    const index = await indexes.create(request.ctx.appId, request.params.className, request.body);
    reply.code(201);
    return index;
    },
  );

  app.delete<{ Params: { className: string; name: string } }>('/1.1/indexes/:className/:name', declared({ params: pathParams('className', 'name') }), async (request) => {
    requireMaster(request);
    await indexes.drop(request.ctx.appId, request.params.className, request.params.name);
    return {};
  });
}
