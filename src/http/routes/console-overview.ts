import type { FastifyInstance } from 'fastify';
import { isOverviewRange, type TrafficStats } from '../../console/traffic.ts';
import { ApiError } from '../../lib/errors.ts';
import { overviewPage } from '../console/overview-page.ts';
import { consoleHeaders } from '../console/pages.ts';
import { operatorOnly, session } from '../console/routing.ts';

/**
 * Counts every answer for the overview (src/console/traffic.ts) by method and route pattern: a Map
 * increment, written out in batches. The console's own pages, the scrape and health checks are left
 * out, so the charts show the applications' traffic.
 */
export function countTraffic(app: FastifyInstance, traffic: TrafficStats): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    if (!route?.startsWith('/console') && route !== '/metrics' && !route?.startsWith('/health')) {
      traffic.request(request.ctx?.appId ?? 'none', route ? `${request.method} ${route}` : 'unmatched', reply.statusCode);
    }
    done();
  });
}

/** GET /console/overview (the charts) and /console/api/overview (their numbers), to any operator. */
export function registerConsoleOverview(scope: FastifyInstance, options: { traffic: TrafficStats }): void {
  const rangeOf = (query: unknown) => {
    const range = (query as { range?: unknown } | undefined)?.range ?? '6h';
    if (!isOverviewRange(range)) throw new ApiError('other', 'range is one of 1h, 6h, 24h, 7d, 30d.');
    return range;
  };
  scope.get('/console/overview', operatorOnly, async (request, reply) =>
    overviewPage(reply, session(request), await options.traffic.overview(rangeOf(request.query))));
  scope.get('/console/api/overview', operatorOnly, async (request, reply) => {
    const overview = await options.traffic.overview(rangeOf(request.query));
    return consoleHeaders(reply).send({ ...overview, start: new Date(overview.start).toISOString() });
  });
}
