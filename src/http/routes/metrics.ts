import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import client from 'prom-client';
import type { Clock } from '../../lib/clock.ts';
import { safeEqual } from '../../lib/crypto.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { Store } from '../../storage/store.ts';

/** One app, method, route pattern, status and code: the requests answered since they were handed to prom-client. */
interface Tally {
  request: { app: string; method: string; route: string; status: string; code: string };
  duration: { app: string; method: string; route: string };
  /** Seconds each request took, in arrival order; the first `filled` are pending. */
  seconds: Float64Array;
  filled: number;
}

/**
 * The Metrics of src/lib/metrics.ts as Prometheus series, on a registry of its own (several
 * servers in one process, as in the tests, never share counters). Only this file knows prom-client.
 */
export class PrometheusMetrics implements Metrics {
  readonly registry = new client.Registry();
  private readonly requests: client.Counter<'app' | 'method' | 'route' | 'status' | 'code'>;
  private readonly durations: client.Histogram<'app' | 'method' | 'route'>;
  private readonly logins: client.Counter<'outcome'>;
  private readonly lockouts: client.Counter;
  private readonly pushes: client.Counter<'route' | 'status'>;

  constructor(options: { store: Store; clock: Clock; defaultMetrics?: boolean }) {
    const registers = [this.registry];
    this.requests = new client.Counter({
      name: 'roost_http_requests_total',
      help: 'HTTP requests answered, by application (none when no known app was named), method, route pattern (unmatched for no route), HTTP status and catalogue code (none on success).',
      labelNames: ['app', 'method', 'route', 'status', 'code'],
      registers,
      collect: () => this.handAll(),
    });
    this.durations = new client.Histogram({
      name: 'roost_http_request_duration_seconds',
      help: 'Time from request to response, by application, method and route pattern.',
      labelNames: ['app', 'method', 'route'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
      collect: () => this.handAll(),
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

  /** Requests by method, status and route pattern since they were last handed to prom-client. */
  private readonly tallies = new Map<string, Tally>();

  /**
   * The onResponse hook: one count and one latency per request. Labels stay bounded: the app is one
   * whose keys were proven (an unknown id or a wrong key is `none`, as is a keyless route), the route
   * is the pattern (`/1.1/classes/:className/:objectId`, never an id; `unmatched` for every 404 of the
   * router), the code is the catalogue's (`none` when the answer carried none). They are
   * tallied here and handed to prom-client in batches (full tally, or scrape): its per-call label
   * checks and hashing were ~4% of a get-by-id's CPU (bench/RESULTS.md, Objects). Called from the
   * server's one onResponse hook (src/server.ts), with the log line and the overview's count.
   */
  observe(request: FastifyRequest, reply: FastifyReply): void {
    const tally = this.tallyFor(request.ctx?.appId ?? 'none', request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, request.answerCode);
    tally.seconds[tally.filled++] = reply.elapsedTime / 1000;
    if (tally.filled === tally.seconds.length) this.hand(tally);
  }

  private tallyFor(app: string, method: string, route: string, status: number, answerCode: number | undefined): Tally {
    const code = answerCode === undefined ? 'none' : String(answerCode);
    const key = `${app} ${method} ${status} ${code} ${route}`;
    let tally = this.tallies.get(key);
    if (tally === undefined) {
      if (this.tallies.size >= 1000) this.handAll(true);
      tally = { request: { app, method, route, status: String(status), code }, duration: { app, method, route }, seconds: new Float64Array(256), filled: 0 };
      this.tallies.set(key, tally);
    }
    return tally;
  }

  /** Gives prom-client what each pending request would have given it, in arrival order. */
  private hand(tally: Tally): void {
    this.requests.inc(tally.request, tally.filled);
    for (let i = 0; i < tally.filled; i++) this.durations.observe(tally.duration, tally.seconds[i]);
    tally.filled = 0;
  }

  /** Runs before each scrape reads the request series (their `collect`), so a scrape sees every request answered. */
  private handAll(forget = false): void {
    for (const tally of this.tallies.values()) if (tally.filled > 0) this.hand(tally);
    if (forget) this.tallies.clear();
  }
}

const loopback = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * Without METRICS_TOKEN, a scraper on the node's own host only: the socket's peer is a loopback
 * address (the socket's, not X-Forwarded-For's) and the request names no forwarding header, since
 * a reverse proxy on the same host would otherwise open it to the world.
 */
function localScrape(request: FastifyRequest): boolean {
  const { headers } = request;
  if (headers['x-forwarded-for'] !== undefined || headers['x-real-ip'] !== undefined || headers.forwarded !== undefined) return false;
  return loopback.has(request.socket.remoteAddress ?? '');
}

/**
 * GET /metrics in the Prometheus text format, without application keys. With METRICS_TOKEN set
 * it needs `Authorization: Bearer <token>`; without, it answers only a scraper on the same host.
 */
export function registerMetricsRoutes(app: FastifyInstance, options: { metrics: PrometheusMetrics; token: string | null }): void {
  app.get('/metrics', async (request, reply) => {
    const allowed =
      options.token === null
        ? localScrape(request)
        : safeEqual(/^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '', options.token);
    if (!allowed) {
      reply.status(401);
      return { code: 401, error: 'Unauthorized.' };
    }
    reply.type(options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });
}
