import type { FastifyInstance } from 'fastify';
import type { Store } from '../../storage/store.ts';
import { isoDate, type Clock } from '../../lib/clock.ts';

/** What /health/ready checks besides the store: Redis when REDIS_URL is set. */
export interface ReadinessChecks {
  redis?: () => Promise<unknown>;
  /** True once the node has been told to stop: the balancer takes it out before it closes. */
  draining?: () => boolean;
}

/** Resolves with `check`, or rejects after `ms`: a hung dependency must not hang the probe. */
function within<T>(check: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), ms)));
  return Promise.race([check, late]).finally(() => clearTimeout(timer));
}

/**
 * The load balancer's health checks, no keys needed. /health/live: the process answers (with its
 * version). /health/ready: the database and Redis (when configured) answer; 503 names the failing
 * part. /health is the older store check, kept for existing probes.
 */
export function registerHealthRoutes(app: FastifyInstance, options: { store: Store; version: string; checks?: ReadinessChecks }): void {
  const { store, checks = {} } = options;
  app.get('/health', async (_request, reply) => {
    try {
      await store.getApp('');
      return { status: 'ok', store: store.kind };
    } catch {
      reply.status(503);
      return { status: 'unavailable', store: store.kind };
    }
  });
  app.get('/health/live', async () => ({ status: 'ok', version: options.version }));
  app.get('/health/ready', async (_request, reply) => {
    const parts: Array<[string, () => Promise<unknown>]> = [['database', () => store.getApp('')]];
    if (checks.redis) parts.push(['redis', checks.redis]);
    const results = await Promise.all(parts.map(([, check]) => within(check(), 2000).then(() => 'ok', () => 'unavailable')));
    const report: Record<string, string> = {};
    parts.forEach(([name], i) => (report[name] = results[i]));
    const failing = parts.filter((_, i) => results[i] !== 'ok').map(([name]) => name);
    if (checks.draining?.()) failing.push('draining');
    if (failing.length > 0) {
      reply.status(503);
      return { status: 'unavailable', failing, ...report };
    }
    return { status: 'ok', ...report };
  });
}

/** The server clock, which the SDKs use to correct a device's clock when signing. */
export function registerDateRoute(app: FastifyInstance, options: { clock: Clock }): void {
  app.get('/1.1/date', async () => ({ __type: 'Date', iso: isoDate(options.clock.now()) }));
}
