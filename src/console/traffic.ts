import type { Clock } from '../lib/clock.ts';
import type { Metrics } from '../lib/metrics.ts';
import { grainMs, type StatCount, type StatGrain, type StatKind, type StatsStore } from '../storage/stats-store.ts';

/** The windows of the overview: which buckets they read and how wide a bar is. */
export const overviewRanges = {
  '1h': { grain: 'minute', stepMs: 60_000, bars: 60, text: 'Last hour' },
  '6h': { grain: 'minute', stepMs: 5 * 60_000, bars: 72, text: 'Last 6 hours' },
  '24h': { grain: 'minute', stepMs: 15 * 60_000, bars: 96, text: 'Last 24 hours' },
  '7d': { grain: 'hour', stepMs: 2 * 3_600_000, bars: 84, text: 'Last 7 days' },
  '30d': { grain: 'hour', stepMs: 86_400_000, bars: 30, text: 'Last 30 days' },
} as const satisfies Record<string, { grain: StatGrain; stepMs: number; bars: number; text: string }>;

export type OverviewRange = keyof typeof overviewRanges;

/** How long buckets are kept: a little more than the longest window that reads them. */
export const retentionMs: Record<StatGrain, number> = { minute: 25 * 3_600_000, hour: 32 * 86_400_000 };
const pruneEveryMs = 10 * 60_000;

/** One line of a chart: a label (a route, an outcome) and its count in each bar, oldest first. */
export interface Series {
  label: string;
  values: number[];
  total: number;
}

export interface Overview {
  range: OverviewRange;
  /** The first bar's start (ms); each bar spans stepMs. */
  start: number;
  stepMs: number;
  bars: number;
  series: Record<StatKind, Series[]>;
}

const kinds: readonly StatKind[] = ['request', 'error', 'login', 'lockout', 'push', 'pushFailed'];

/** Push statuses that mean the device got nothing. */
const failedPush = new Set(['failed', 'invalidToken', 'dropped']);

/**
 * The counts behind the console's overview: requests and errors by route, logins by outcome, lockouts,
 * devices pushed by route. Counted in memory and added to the shared per-minute and per-hour buckets
 * (StatsStore) every `flushMs`, so a request costs a Map increment, never a database write, and the
 * buckets hold every node's counts. Also a Metrics, so the domain reports to it as to Prometheus.
 */
export class TrafficStats implements Metrics {
  private readonly store: StatsStore;
  private readonly clock: Clock;
  private readonly flushMs: number;
  private readonly onError: (error: unknown) => void;
  private pending = new Map<string, StatCount>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;

  constructor(options: { store: StatsStore; clock: Clock; flushMs?: number; onError?: (error: unknown) => void }) {
    this.store = options.store;
    this.clock = options.clock;
    this.flushMs = options.flushMs ?? 10_000;
    this.onError = options.onError ?? (() => {});
  }

  private count(app: string, kind: StatKind, label: string, n = 1): void {
    const now = this.clock.now();
    const at = now - (now % grainMs.minute);
    const key = `${at}\0${app}\0${kind}\0${label}`;
    const found = this.pending.get(key);
    if (found) found.n += n;
    else this.pending.set(key, { at, app, kind, label, n });
  }

  /** One answered request: `route` is the method and route pattern, never a URL with ids. */
  request(app: string, route: string, status: number): void {
    this.count(app, 'request', route);
    if (status >= 400) this.count(app, 'error', route);
  }

  login(outcome: 'success' | 'failure' | 'locked'): void {
    this.count('none', 'login', outcome);
  }

  lockout(): void {
    this.count('none', 'lockout', 'lockout');
  }

  pushSent(route: string, status: string, devices: number): void {
    if (devices <= 0) return;
    this.count('none', 'push', route, devices);
    if (failedPush.has(status)) this.count('none', 'pushFailed', route, devices);
  }

  /** Flushes every flushMs until stop(); the timer never keeps the process alive. */
  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.flushMs).unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Adds the counts so far to the shared buckets (one flush at a time); a failed write keeps them for the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = this.pending;
      this.pending = new Map();
      try {
        if (batch.size > 0) await this.store.add([...batch.values()]);
        await this.prune();
      } catch (error) {
        for (const count of batch.values()) this.count(count.app, count.kind, count.label, count.n);
        this.onError(error);
      }
    });
    return this.flushing;
  }

  private async prune(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastPrune < pruneEveryMs) return;
    this.lastPrune = now;
    for (const grain of ['minute', 'hour'] as const) await this.store.prune(grain, now - retentionMs[grain]);
  }

  /** The bars of a window ending with the current one; this node's counts are flushed first, so they show at once. */
  async overview(range: OverviewRange): Promise<Overview> {
    await this.flush();
    const { grain, stepMs, bars } = overviewRanges[range];
    const now = this.clock.now();
    const end = now - (now % stepMs) + stepMs;
    const start = end - bars * stepMs;
    const byLabel = new Map<string, Series>();
    const series = Object.fromEntries(kinds.map((kind) => [kind, [] as Series[]])) as Record<StatKind, Series[]>;
    for (const count of await this.store.read(grain, start, end)) {
      const key = `${count.kind}\0${count.label}`;
      let line = byLabel.get(key);
      if (!line) {
        line = { label: count.label, values: new Array<number>(bars).fill(0), total: 0 };
        byLabel.set(key, line);
        series[count.kind]?.push(line);
      }
      line.values[Math.floor((count.at - start) / stepMs)] += count.n;
      line.total += count.n;
    }
    for (const kind of kinds) series[kind].sort((a, b) => b.total - a.total || a.label.localeCompare(b.label));
    return { range, start, stepMs, bars, series };
  }
}

