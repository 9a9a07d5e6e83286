import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import type { ClassSchemas } from '../../objects/schemas.ts';
import { requireMaster, requireMasterAndClass } from '../context.ts';
import { declared, pathParams } from '../schema.ts';

interface ClassParams {
  className: string;
}
const classParams = pathParams('className');
/** Each field's change is the class schemas' to check (its key first, then its shape). */
const changesBody = {
  type: 'object',
  minProperties: 1,
  'x-error': { kind: 'invalidJson', message: 'A schema change is {"<field>": {"type": "…", "className": "…", "default": …}}.' },
};

/** Class schemas, with the master key: as the hosted service listed them, and Roost's way to set defaults (README). */
export function registerSchemaRoutes(app: FastifyInstance, options: { schemas: ClassSchemas }): void {
  const { schemas } = options;
  app.get('/1.1/schemas', async (request) => {
    requireMaster(request);
    return schemas.describeAll(request.ctx.appId);
  });

  app.get<{ Params: ClassParams }>('/1.1/schemas/:className', declared({ params: classParams }), async (request) => {
    requireMaster(request);
    const schema = await schemas.describe(request.ctx.appId, request.params.className);
    if (schema === null) throw new ApiError('objectNotFound');
    return schema;
  });

  // The master key and the class name are answered before the body is read; each field's change is
  // checked by the class schemas, which `roost schema set` shares (src/objects/schema-changes.ts).
  const route = { ...declared({ params: classParams, body: changesBody }), preValidation: requireMasterAndClass };
  const update = async (request: FastifyRequest<{ Params: ClassParams }>) => schemas.update(request.ctx.appId, request.params.className, request.body);
  app.put<{ Params: ClassParams }>('/1.1/schemas/:className', route, update);
  app.post<{ Params: ClassParams }>('/1.1/schemas/:className', route, update);
}
