import type { FastifyInstance, FastifyRequest } from 'fastify';
import { subRequestRunner, type SubAnswer } from './routes/batch.ts';

/**
 * Runs `GET /1.1/classes/<className>?<params>` for `request`'s caller through the same route a client's
 * find takes: scan and CQL are finds, so the ACL, the `_User` rules, include, subqueries, relations and
 * geo apply to them exactly as to a REST query, with no second copy of any of it.
 */
export function findThroughClassRoute(
  app: FastifyInstance,
  request: FastifyRequest,
  className: string,
  params: Record<string, string>,
): Promise<SubAnswer> {
  const search = new URLSearchParams(params).toString();
  const url = `/1.1/classes/${encodeURIComponent(className)}?${search}`;
  return subRequestRunner(app, request, false)({ method: 'GET', url, body: undefined });
}
