// One autocannon run against a server under test, in this process, and its figures.
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** Called for every request: the path (and body) to send. */
  next: (index: number) => { path: string; body?: unknown; headers?: Record<string, string> };
  connections: number;
  durationSec: number;
  /** For runs that must not repeat a request (e.g. sign-ups): stop after this many. */
  maxRequests?: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Responses by status code, to tell what went wrong when non2xx is not 0. */
  statuses: Record<string, number>;
  durationSec: number;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  let index = 0;
  const baseHeaders = { ...(options.headers ?? {}) };
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSec,
    amount: options.maxRequests,
    pipelining: 1,
    timeout: 10,
    requests: [
      {
        method: options.method ?? 'GET',
        setupRequest: (request: any) => {
          const next = options.next(index++);
          request.path = next.path;
          request.headers = { ...baseHeaders, ...(next.headers ?? {}) };
          if (next.body !== undefined) {
            request.body = JSON.stringify(next.body);
            request.headers['content-type'] = 'application/json';
          } else {
            delete request.body;
          }
          return request;
        },
      },
    ],
  });
  const elapsedSec = (result.duration ?? options.durationSec) || options.durationSec;
  const completed = result.requests.total;
  return {
    requests: completed,
    // Averaging per-second samples drops partial seconds; requests over elapsed time is exact.
    rps: completed / elapsedSec,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count])),
    durationSec: elapsedSec,
  };
}

/** A short run whose figures are thrown away: JIT, caches and connection pools warm up. */
export async function warm(options: LoadOptions, seconds = 3): Promise<void> {
  await load({ ...options, durationSec: seconds });
}
