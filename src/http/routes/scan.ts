import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import { isScanPage, nextCursor, scanRequest } from '../../objects/scan.ts';
import { findThroughClassRoute } from '../class-find.ts';
import { param, queryOf } from '../params.ts';

const scanParams = ['where', 'scan_key', 'limit', 'cursor', 'keys', 'include', 'returnACL'] as const;

/** GET /1.1/scan/classes/<class>: a class read page by page with a cursor, master key only (reference §13). */
export function registerScanRoutes(app: FastifyInstance, options: { secret: string }): void {
  app.get<{ Params: { className: string } }>('/1.1/scan/classes/:className', async (request, reply) => {
    if (!request.ctx.master) throw new ApiError('masterKeyRequired', 'Scan needs the master key.');
    const { className } = request.params;
    const query = queryOf(request);
    const scope = { appId: request.ctx.appId, className, secret: options.secret };
    const page = scanRequest(scope, Object.fromEntries(scanParams.map((name) => [name, param(query, name)])));
    const answer = await findThroughClassRoute(app, request, className, page.params);
    if (answer.status !== 200 || !isScanPage(answer.body)) return reply.status(answer.status).send(answer.body);
    return { results: answer.body.results, cursor: nextCursor(scope, page, answer.body.results) };
  });
}
