import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.ts';
import type { PushStore } from '../storage/push-store.ts';
import type { Relay } from './channel/relay.ts';
import { mailboxLimit } from './channel/hub.ts';
import { routePage } from './routing.ts';
import type { PageResult, PageWork, RoutePage, VendorTarget } from './types.ts';
import type { VendorDispatch } from './vendor-dispatch.ts';
import { noMetrics, type Metrics } from '../lib/metrics.ts';

export interface FanoutOptions {
  store: PushStore;
  clock: Clock;
  relay: Relay;
  dispatch: VendorDispatch;
  logger: Logger;
  /** Installations per page: one transaction routes and commits a page. */
  pageSize?: number;
  /** How long a claimed page's routing and delivery belong to the worker that claimed it. */
  leaseMs?: number;
  /** How often an idle worker looks for due jobs (a push accepted on this node wakes it at once). */
  pollMs?: number;
  /** Pages being routed or delivered at once by this worker (pages of one job too). */
  maxInFlight?: number;
  /** Counts devices handed to the own channel and to each maker (GET /metrics). */
  metrics?: Metrics;
}

const keepAckedMs = 7 * 24 * 3600 * 1000;
const pruneEveryMs = 10 * 60 * 1000;

const route: RoutePage = (_job, devices, settings) => routePage(devices, settings);

/**
 * The fan-out worker of one process. It claims the next page of a due job (a short claim of a
 * key range), routes the page (SPEC §4.3 rule 1) and delivers it: own-channel devices through
 * the relay, makers' devices through the dispatcher. Claims follow one another while earlier
 * pages are still being routed and delivered, so one job's pages are worked on in parallel, in
 * this process and in any other. The database decides who routes which page, and a page whose
 * worker died is routed or delivered again by another after its lease.
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
    let failures = 0;
    while (!this.stopped) {
      let worked = false;
      try {
        worked = await this.step();
        if (!worked) await this.store.closeFinished(this.clock.now());
        await this.maybePrune();
        failures = 0;
      } catch (error) {
        // The database may be away (restart, fail-over): keep trying, less often, until it is back.
        if (failures++ === 0 || failures % 10 === 0) this.logger.error({ err: error, failures }, 'push fan-out: pass failed');
      }
      if (!worked && !this.stopped) {
        const wait = failures === 0 ? this.pollMs : Math.min(this.pollMs * 2 ** Math.min(failures, 5), 5000);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = null;
      }
    }
  }

  /** Claims one page (a new one, else one whose worker died) and starts routing and delivering it. */
  private async step(): Promise<boolean> {
    while (this.inFlight.size >= this.maxInFlight) await Promise.race(this.inFlight);
    const now = this.clock.now();
    const claimed = await this.store.claimPage({ now, pageSize: this.pageSize, leaseMs: this.leaseMs });
    if (claimed) {
      if (claimed.kind === 'expired') {
        this.logger.info({ notificationId: claimed.job.notificationId }, 'push expired before it was sent');
      } else if (claimed.kind === 'failed') {
        this.logger.error({ err: claimed.error, notificationId: claimed.job.notificationId }, 'push fan-out: selecting the installations failed; the push was closed');
      } else if (claimed.kind === 'page') {
        const { page } = claimed;
        this.track(page.notificationId, page.seq, () => this.store.fillPage(page, { now: this.clock.now(), route }));
      }
      return true;
    }
    const stale = await this.store.claimStalePage({ now, leaseMs: this.leaseMs, route });
    if (stale) {
      this.logger.warn({ notificationId: stale.job.notificationId, page: stale.seq }, 'push fan-out: finishing a page whose worker stopped');
      this.track(stale.job.notificationId, stale.seq, async () => stale);
      return true;
    }
    return false;
  }

  private track(notificationId: string, page: number, work: () => Promise<PageWork | null>): void {
    const task = (async () => {
      const routed = await work();
      if (routed) await this.deliver(routed);
    })().catch((error) => {
      // The page stays leased; when the lease ends a worker routes or delivers it again.
      this.logger.error({ err: error, notificationId, page }, 'push fan-out: routing or delivery failed');
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
        ...(job.content.channel !== undefined && { channel: job.content.channel }),
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
    const byStatus = new Map<string, number>();
    for (const target of targets) {
      const r = answered.get(target.installationObjectId) ?? { status: 'failed' as const, error: 'no result from the vendor sender' };
      byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
      if (r.status === 'sent') continue;
      result.vendorResults.push({ ...target, status: r.status, error: r.error });
      if (r.error) bump(`error:${r.error.slice(0, 200)}`);
      if (r.status === 'invalidToken') result.invalidate.push(target.installationObjectId);
    }
    for (const [status, n] of byStatus) {
      this.metrics.pushSent(vendor, status, n);
      result.counts[`${vendor}.${status}`] = (result.counts[`${vendor}.${status}`] ?? 0) + n;
    }
  }

  private async maybePrune(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastPrune < pruneEveryMs) return;
    this.lastPrune = now;
    await this.store.prune(now, keepAckedMs, mailboxLimit);
  }
}
