import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { overviewRanges, type OverviewRange, type TrafficStats } from '../../console/traffic.ts';
import { overviewPage } from '../console/overview-page.ts';
import { consoleHeaders } from '../console/pages.ts';
import { operatorOnly, session } from '../console/routing.ts';
import { declared } from '../schema.ts';

/**
 * Counts an answer for the overview (src/console/traffic.ts) by method and route pattern: a Map
 * increment, written out in batches. The console's own pages, the scrape and health checks are left
 * out, so the charts show the applications' traffic. Called from the server's one onResponse hook.
 */
export function countAnswer(traffic: TrafficStats, request: FastifyRequest, reply: FastifyReply): void {
  const route = request.routeOptions.url;
  if (!route?.startsWith('/console') && route !== '/metrics' && !route?.startsWith('/health')) {
    traffic.request(request.ctx?.appId ?? 'none', route ? `${request.method} ${route}` : 'unmatched', reply.statusCode);
  }
}

/** `range`, one of the overview's (6h when left out); repeated, it is none of them. */
const rangeQuery = {
  ...operatorOnly,
  ...declared({
    querystring: {
      type: 'object',
      properties: { range: { enum: Object.keys(overviewRanges), 'x-error': { kind: 'other', message: 'range is one of 1h, 6h, 24h, 7d, 30d.' } } },
    },
  }),
};

/** GET /console/overview (the charts) and /console/api/overview (their numbers), to any operator. */
export function registerConsoleOverview(scope: FastifyInstance, options: { traffic: TrafficStats }): void {
  const rangeOf = (query: unknown) => (query as { range?: OverviewRange }).range ?? '6h';
  scope.get('/console/overview', rangeQuery, async (request, reply) =>
    overviewPage(reply, session(request), await options.traffic.overview(rangeOf(request.query))));
  scope.get('/console/api/overview', rangeQuery, async (request, reply) => {
    const overview = await options.traffic.overview(rangeOf(request.query));
    return consoleHeaders(reply).send({ ...overview, start: new Date(overview.start).toISOString() });
  });
}
