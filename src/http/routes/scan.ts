import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import type { ObjectService } from '../../objects/service.ts';
import { nextCursor, scanRequest } from '../../objects/scan.ts';
import { findAnswer, type ClassAccess } from '../class-access.ts';
import { param, queryOf } from '../params.ts';
import { declared, pathParams, queryParams } from '../schema.ts';

const scanParams = ['where', 'scan_key', 'limit', 'cursor', 'keys', 'include', 'returnACL'] as const;

/**
 * GET /1.1/scan/classes/<class>: a class read page by page with a cursor, master key only (reference §13).
 * Each page is the find of the class's own service, answered as its REST find answers.
 */
export function registerScanRoutes(app: FastifyInstance, options: { secret: string; access: ClassAccess; objects: ObjectService }): void {
  app.get<{ Params: { className: string } }>('/1.1/scan/classes/:className', declared({ params: pathParams('className'), querystring: queryParams(...scanParams) }), async (request) => {
    if (!request.ctx.master) throw new ApiError('masterKeyRequired', 'Scan needs the master key.');
    const { className } = request.params;
    const query = queryOf(request);
    const scope = { appId: request.ctx.appId, className, secret: options.secret };
    const page = scanRequest(scope, Object.fromEntries(scanParams.map((name) => [name, param(query, name)])));
    const { results } = await findAnswer(options.access, options.objects, request.ctx, className, page.params);
    return { results, cursor: nextCursor(scope, page, results) };
  });
}
