import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.ts';
import type { PushStore } from '../storage/push-store.ts';
import type { Relay } from './channel/relay.ts';
import { routePage } from './routing.ts';
import type { PageResult, PageWork, VendorTarget } from './types.ts';
import type { VendorDispatch } from './vendor-dispatch.ts';
import { noMetrics, type Metrics } from '../lib/metrics.ts';

export interface FanoutOptions {
  store: PushStore;
  clock: Clock;
  relay: Relay;
  dispatch: VendorDispatch;
  logger: Logger;
  /** Installations per page: one transaction routes and commits a page with its cursor. */
  pageSize?: number;
  /** How long a committed page's delivery belongs to the worker that committed it. */
  leaseMs?: number;
  /** How often an idle worker looks for due jobs (a push accepted on this node wakes it at once). */
  pollMs?: number;
  /** Pages being delivered while the next one is routed. */
  maxInFlight?: number;
  /** Counts devices handed to the own channel and to each maker (GET /metrics). */
  metrics?: Metrics;
}

const keepAckedMs = 7 * 24 * 3600 * 1000;
const pruneEveryMs = 10 * 60 * 1000;

/**
 * The fan-out worker of one process. It claims due pages from the database, routes each page
 * (SPEC §4.3 rule 1), and then delivers it: own-channel devices through the relay, makers'
 * devices through the dispatcher. Any number of processes run one; the database decides who
 * routes which page, and a page whose worker died is delivered again by another after its lease.
 */
export class FanoutWorker {
  private readonly store: PushStore;
  private readonly clock: Clock;
  private readonly relay: Relay;
  private readonly dispatch: VendorDispatch;
  private readonly logger: Logger;
  private readonly pageSize: number;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly maxInFlight: number;
  private readonly inFlight = new Set<Promise<void>>();
  private running: Promise<void> | null = null;
  private stopped = false;
  private wakeUp: (() => void) | null = null;
  private lastPrune = 0;
  private readonly metrics: Metrics;

  constructor(options: FanoutOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.relay = options.relay;
    this.dispatch = options.dispatch;
    this.logger = options.logger;
    this.pageSize = options.pageSize ?? 2000;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 250;
    this.maxInFlight = options.maxInFlight ?? 4;
    this.metrics = options.metrics ?? noMetrics;
  }

  start(): void {
    if (this.running) return;
    this.stopped = false;
    this.running = this.loop();
  }

  /** Looks for work now instead of at the next poll. */
  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
    this.running = null;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Runs until no page is due and every delivery has finished: tests await it instead of sleeping. */
  async drain(): Promise<void> {
    for (;;) {
      if (await this.step()) continue;
      if (this.inFlight.size > 0) {
        await Promise.allSettled([...this.inFlight]);
        continue;
      }
      await this.store.closeFinished(this.clock.now());
      // A delivery finishing while the last claim ran may have left work: look once more.
      if (!(await this.step())) return;
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let worked = false;
      try {
        worked = await this.step();
        if (!worked) await this.store.closeFinished(this.clock.now());
        await this.maybePrune();
      } catch (error) {
        this.logger.error({ err: error }, 'push fan-out: pass failed');
      }
      if (!worked && !this.stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.pollMs);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = null;
      }
    }
  }

  /** Claims one page (a new one, else one whose worker died) and starts delivering it. */
  private async step(): Promise<boolean> {
    while (this.inFlight.size >= this.maxInFlight) await Promise.race(this.inFlight);
    const now = this.clock.now();
    const claimed = await this.store.claimPage({
      now,
      pageSize: this.pageSize,
      leaseMs: this.leaseMs,
      route: (_job, devices, settings) => routePage(devices, settings),
    });
    if (claimed) {
      if (claimed.kind === 'expired') {
        this.logger.info({ notificationId: claimed.job.notificationId }, 'push expired before it was sent');
      } else if (claimed.work.seq >= 0) {
        this.track(claimed.work);
      }
      return true;
    }
    const stale = await this.store.claimStalePage({ now, leaseMs: this.leaseMs });
    if (stale) {
      this.logger.warn({ notificationId: stale.job.notificationId, page: stale.seq }, 'push fan-out: redelivering a page whose worker stopped');
      this.track(stale);
      return true;
    }
    return false;
  }

  private track(work: PageWork): void {
    const task = this.deliver(work).catch((error) => {
      // The page stays leased; when the lease ends a worker delivers it again.
      this.logger.error({ err: error, notificationId: work.job.notificationId, page: work.seq }, 'push fan-out: delivery failed');
    });
    this.inFlight.add(task);
    void task.finally(() => this.inFlight.delete(task));
  }

  private async deliver(work: PageWork): Promise<void> {
    const { job } = work;
    if (work.channel.length > 0) {
      await this.relay.publish({
        appId: job.appId,
        notificationId: job.notificationId,
        createdAt: job.createdAt,
        expiresAt: job.expiresAt,
        data: job.content.data,
        installationIds: work.channel,
      });
      this.metrics.pushSent('channel', 'published', work.channel.length);
    }
    const result: PageResult = {
      appId: job.appId,
      notificationId: job.notificationId,
      seq: work.seq,
      vendorResults: [],
      counts: {},
      invalidate: [],
    };
    const groups = new Map<string, VendorTarget[]>();
    for (const target of work.vendor) {
      const key = `${target.vendor}\0${target.deviceProfile}`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key)!.push(target);
    }
    await Promise.all([...groups.values()].map((targets) => this.sendGroup(work, targets, result)));
    await this.store.finishPage(result, this.clock.now());
  }

  private async sendGroup(work: PageWork, targets: VendorTarget[], result: PageResult): Promise<void> {
    const { vendor, deviceProfile } = targets[0];
    const bump = (key: string) => (result.counts[key] = (result.counts[key] ?? 0) + 1);
    let results: Awaited<ReturnType<VendorDispatch['send']>>;
    try {
      results = await this.dispatch.send({
        appId: work.job.appId,
        vendor,
        deviceProfile,
        notificationId: work.job.notificationId,
        data: work.job.content.data,
        hms: work.job.content.hms,
        expiresAt: work.job.expiresAt,
        devices: targets.map((t) => ({ installationObjectId: t.installationObjectId, registrationId: t.registrationId })),
      });
    } catch (error) {
      this.logger.error({ err: error, vendor }, 'push fan-out: vendor sender threw');
      const message = `vendor sender error: ${error instanceof Error ? error.message : String(error)}`.slice(0, 200);
      results = targets.map((t) => ({ installationObjectId: t.installationObjectId, status: 'failed' as const, error: message }));
    }
    const answered = new Map(results.map((r) => [r.installationObjectId, r]));
    for (const target of targets) {
      const r = answered.get(target.installationObjectId) ?? {
        installationObjectId: target.installationObjectId,
        status: 'failed' as const,
        error: 'no result from the vendor sender',
      };
      result.vendorResults.push(r);
      this.metrics.pushSent(vendor, r.status, 1);
      bump(`${vendor}.${r.status}`);
      if (r.status !== 'sent' && r.error) bump(`error:${r.error.slice(0, 200)}`);
      if (r.status === 'invalidToken') result.invalidate.push(target.installationObjectId);
    }
  }

  private async maybePrune(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastPrune < pruneEveryMs) return;
    this.lastPrune = now;
    await this.store.prune(now, keepAckedMs);
  }
}
