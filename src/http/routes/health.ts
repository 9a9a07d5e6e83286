import type { FastifyInstance } from 'fastify';
import type { Store } from '../../storage/store.ts';
import { isoDate, type Clock } from '../../lib/clock.ts';

/** The load balancer's health check: no keys needed, answers 503 when the store is unreachable. */
export function registerHealthRoutes(app: FastifyInstance, options: { store: Store }): void {
  app.get('/health', async (_request, reply) => {
    try {
      await options.store.getApp('');
      return { status: 'ok', store: options.store.kind };
    } catch {
      reply.status(503);
      return { status: 'unavailable', store: options.store.kind };
    }
  });
}

/** The server clock, which the SDKs use to correct a device's clock when signing. */
export function registerDateRoute(app: FastifyInstance, options: { clock: Clock }): void {
  app.get('/1.1/date', async () => ({ __type: 'Date', iso: isoDate(options.clock.now()) }));
}
