// The little of autocannon's programmatic API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    p50: number;
    p90: number;
    p99: number;
    average: number;
    max: number;
  }
  interface Result {
    duration: number;
    requests: Histogram & { total: number; sent: number };
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: any, context: Record<string, unknown>) => any;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: unknown) => void;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: RequestSpec[];
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
