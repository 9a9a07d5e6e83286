import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import { compileCql, parsePvalues } from '../../objects/cql.ts';
import { isObject } from '../../objects/values.ts';
import { findThroughClassRoute } from '../class-find.ts';
import { param, queryOf } from '../params.ts';

/**
 * /1.1/cloudQuery: a CQL select answered as the find it compiles to (src/objects/cql.ts), with the
 * class named and, for count(*), the count: `{"results":[…],"className":"X","count":N}` (reference §13).
 */
export function registerCloudQueryRoutes(app: FastifyInstance, options: { clock: Clock }): void {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const query = queryOf(request);
    // The SDKs send GET with a query string; a POST body (a statement over a URL's length) is read too.
    const body = isObject(request.body) ? request.body : {};
    const cql = body.cql ?? param(query, 'cql');
    const find = compileCql(cql, parsePvalues(body.pvalues ?? param(query, 'pvalues')), options.clock.now());
    const answer = await findThroughClassRoute(app, request, find.className, find.params);
    if (answer.status !== 200 || !isObject(answer.body)) return reply.status(answer.status).send(answer.body);
    const out: { results: unknown; className: string; count?: unknown } = { results: answer.body.results, className: find.className };
    if (find.count) out.count = answer.body.count;
    return out;
  };
  app.get('/1.1/cloudQuery', handler);
  app.post('/1.1/cloudQuery', handler);
}
