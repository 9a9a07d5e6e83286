import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import client from 'prom-client';
import type { Clock } from '../../lib/clock.ts';
import { safeEqual } from '../../lib/crypto.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { Store } from '../../storage/store.ts';

/**
 * The Metrics of src/lib/metrics.ts as Prometheus series, on a registry of its own (several
 * servers in one process, as in the tests, never share counters). Only this file knows prom-client.
 */
export class PrometheusMetrics implements Metrics {
  readonly registry = new client.Registry();
  private readonly requests: client.Counter<'method' | 'route' | 'status'>;
  private readonly durations: client.Histogram<'method' | 'route'>;
  private readonly logins: client.Counter<'outcome'>;
  private readonly lockouts: client.Counter;
  private readonly pushes: client.Counter<'route' | 'status'>;

  constructor(options: { store: Store; clock: Clock; defaultMetrics?: boolean }) {
    const registers = [this.registry];
    this.requests = new client.Counter({
      name: 'roost_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.durations = new client.Histogram({
      name: 'roost_http_request_duration_seconds',
      help: 'Time from request to response, by method and route pattern.',
      labelNames: ['method', 'route'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    this.logins = new client.Counter({
      name: 'roost_logins_total',
      help: 'Password logins by outcome: success, failure (wrong password or unknown user), locked (refused with 219).',
      labelNames: ['outcome'],
      registers,
    });
    this.lockouts = new client.Counter({
      name: 'roost_lockouts_total',
      help: 'Accounts that reached the failed-login lock (more than 6 failures in 15 minutes).',
      registers,
    });
    this.pushes = new client.Counter({
      name: 'roost_push_sent_total',
      help: 'Devices a push was handed to, by route (channel = Roost\'s own WebSocket channel, else the maker) and status.',
      labelNames: ['route', 'status'],
      registers,
    });
    const { store, clock } = options;
    // Read from the database at scrape time, so every node reports the shared queue.
    let depth: Promise<{ due: number; scheduled: number; pagesPending: number }> | null = null;
    const readDepth = () => (depth ??= store.ops.queueDepth(clock.now()).finally(() => setTimeout(() => (depth = null), 0)));
    new client.Gauge({
      name: 'roost_push_queue_jobs',
      help: 'Pushes not yet fully fanned out: due now, or scheduled for later (shared by all nodes).',
      labelNames: ['state'],
      registers,
      async collect() {
        const d = await readDepth();
        this.set({ state: 'due' }, d.due);
        this.set({ state: 'scheduled' }, d.scheduled);
      },
    });
    new client.Gauge({
      name: 'roost_push_queue_pages_pending',
      help: 'Fan-out pages claimed but not yet delivered, routed or not (shared by all nodes).',
      registers,
      async collect() {
        this.set((await readDepth()).pagesPending);
      },
    });
    if (options.defaultMetrics !== false) client.collectDefaultMetrics({ register: this.registry });
  }

  login(outcome: 'success' | 'failure' | 'locked'): void {
    this.logins.inc({ outcome });
  }

  lockout(): void {
    this.lockouts.inc();
  }

  pushSent(route: string, status: string, devices: number): void {
    if (devices > 0) this.pushes.inc({ route, status }, devices);
  }

  /** Label sets by method, status and route pattern: a few dozen, made once rather than per request. */
  private readonly labelSets = new Map<string, { request: { method: string; route: string; status: string }; duration: { method: string; route: string } }>();

  /** The onResponse hook: one count and one latency per request, labelled by route pattern (a callback hook: no promise per request). */
  observe = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const { method } = request;
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const key = `${method} ${status} ${route}`;
    let labels = this.labelSets.get(key);
    if (labels === undefined) {
      labels = { request: { method, route, status: String(status) }, duration: { method, route } };
      if (this.labelSets.size >= 1000) this.labelSets.clear();
      this.labelSets.set(key, labels);
    }
    this.requests.inc(labels.request);
    this.durations.observe(labels.duration, reply.elapsedTime / 1000);
    done();
  };
}

/**
 * GET /metrics in the Prometheus text format, without application keys. With METRICS_TOKEN
 * set it needs `Authorization: Bearer <token>`; either way keep it off the public proxy.
 */
export function registerMetricsRoutes(app: FastifyInstance, options: { metrics: PrometheusMetrics; token: string | null }): void {
  app.addHook('onResponse', options.metrics.observe);
  app.get('/metrics', async (request, reply) => {
    if (options.token !== null) {
      const given = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
      if (!safeEqual(given, options.token)) {
        reply.status(401);
        return { code: 401, error: 'Unauthorized.' };
      }
    }
    reply.type(options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });
}
