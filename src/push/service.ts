import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.ts';
import { ApiError } from '../lib/errors.ts';
import type { ObjectService } from '../objects/service.ts';
import type { Store } from '../storage/store.ts';
import { ChannelHub } from './channel/hub.ts';
import { OwnChannelProtocol } from './channel/own-protocol.ts';
import { LcPushProtocol } from './connection/protocol.ts';
import { LocalRelay, RedisRelay, type Relay } from './channel/relay.ts';
import { FanoutWorker } from './fanout.ts';
import { InstallationService } from './installations.ts';
import { parsePushRequest, type PushRequestContext } from './request.ts';
import { readersFor } from '../objects/acl.ts';
import { checkConditionReads, type QueryCaller } from '../objects/query-reach.ts';
import { PushSchedule, scheduledPushCap, scheduledPushCaps } from './schedule.ts';
import type { NotificationRecord } from './types.ts';
import { unconfiguredDispatch, type VendorDispatch } from './vendor-dispatch.ts';
import type { Metrics } from '../lib/metrics.ts';

export interface PushServiceOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  objects: ObjectService;
  /** The app key of an application, for own-channel logins (null when unknown). */
  appKeys: (appId: string) => Promise<string[] | null>;
  /** How long a LeanCloud push-connection login naming an unsaved installation waits for it. */
  installationGraceMs?: number;
  /** With a Redis URL, own-channel messages reach devices held by other nodes. */
  redisUrl: string | null;
  redisChannel?: string;
  dispatch?: VendorDispatch;
  pageSize?: number;
  leaseMs?: number;
  pollMs?: number;
  /** Counts devices handed to each route (src/lib/metrics.ts). */
  metrics?: Metrics;
}

/** Push as the HTTP layer and main.ts see it: requests, records, the fan-out worker and the own channel. */
export class PushService {
  readonly hub: ChannelHub;
  /** Roost's own channel (docs/push-channel.md) and LeanCloud's push connection (docs/push-connection.md), on one hub. */
  readonly ownChannel: OwnChannelProtocol;
  readonly lcConnection: LcPushProtocol;
  readonly worker: FanoutWorker;
  readonly installations: InstallationService;
  readonly schedule: PushSchedule;
  private readonly relay: Relay;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(options: PushServiceOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
    this.installations = new InstallationService({ objects: options.objects, store: options.store });
    this.schedule = new PushSchedule({ store: options.store.pushSchedule, clock: options.clock });
    this.hub = new ChannelHub({ store: options.store.push, clock: options.clock, logger: options.logger });
    this.ownChannel = new OwnChannelProtocol({ hub: this.hub, clock: options.clock, appKeys: options.appKeys });
    this.lcConnection = new LcPushProtocol({
      hub: this.hub,
      logger: options.logger,
      appExists: async (appId) => (await options.appKeys(appId)) !== null,
      installationExists: (appId, installationId) => this.installations.exists(appId, installationId),
      installationGraceMs: options.installationGraceMs,
    });
    this.relay = options.redisUrl
      ? new RedisRelay({ url: options.redisUrl, hub: this.hub, logger: options.logger, channel: options.redisChannel })
      : new LocalRelay({ hub: this.hub });
    this.worker = new FanoutWorker({
      store: options.store.push,
      clock: options.clock,
      relay: this.relay,
      dispatch: options.dispatch ?? unconfiguredDispatch,
      logger: options.logger,
      pageSize: options.pageSize,
      leaseMs: options.leaseMs,
      pollMs: options.pollMs,
      metrics: options.metrics,
    });
  }

  /**
   * Resolves when the relay listens (Redis subscription made), or after 5 s with a warning: the
   * node still serves, and ioredis keeps reconnecting; devices on other nodes meanwhile get their
   * messages from the mailbox at their next login.
   */
  async ready(): Promise<void> {
    if (!(this.relay instanceof RedisRelay)) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 5000)));
    const outcome = await Promise.race([this.relay.whenReady().then(() => 'ready' as const), timeout]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.logger.warn('push relay: Redis not reachable yet; continuing without it');
  }

  /**
   * Validates and stores a push; a req_id seen within five minutes returns the first record. A
   * scheduled push is refused (code 140) while the application's cap of waiting pushes is reached.
   */
  async accept(
    caller: QueryCaller,
    body: Record<string, unknown>,
    prodHeader: string | null,
    settings: { commercial: boolean },
  ): Promise<{ created: boolean; record: NotificationRecord }> {
    const context: PushRequestContext = { appId: caller.appId, now: this.clock.now(), prodHeader, readers: readersFor(caller) };
    const push = parsePushRequest(body, context);
    // The classes a client push's where reaches through subqueries keep their find rules, as a find's would.
    checkConditionReads(caller, '_Installation', push.selector);
    const cap = scheduledPushCap(settings);
    const outcome = await this.store.push.createPush({ ...push, scheduleCap: cap });
    if ('refused' in outcome) {
      throw new ApiError(
        'scheduledPushQuota',
        `${cap} scheduled pushes are already waiting, the most this application may have (${scheduledPushCaps.development} for a development application, ${scheduledPushCaps.commercial} for a commercial one). Cancel one or wait until one starts.`,
      );
    }
    if (outcome.created) this.worker.wake();
    return outcome;
  }

  /**
   * How many installations a push of this body would reach if sent now: its where, channels and the
   * filters sending adds (invalid tokens, idle devices), counted as the fan-out selects them. `body`
   * has passed pushBodySchema (the console shows this before an operator sends).
   */
  async reach(caller: QueryCaller, body: Record<string, unknown>, prodHeader: string | null): Promise<number> {
    const context: PushRequestContext = { appId: caller.appId, now: this.clock.now(), prodHeader, readers: readersFor(caller) };
    const push = parsePushRequest(body, context);
    checkConditionReads(caller, '_Installation', push.selector);
    return this.store.countObjects(caller.appId, '_Installation', push.selector, push.readers ?? null);
  }

  getNotification(appId: string, objectId: string) {
    return this.store.push.getNotification(appId, objectId);
  }

  listNotifications(appId: string, options: { limit: number; skip: number }) {
    return this.store.push.listNotifications(appId, options);
  }

  deleteNotification(appId: string, objectId: string) {
    return this.store.push.deleteNotification(appId, objectId);
  }

  start(): void {
    this.worker.start();
  }

  /** Runs the fan-out until idle and stores pending acknowledgements (for tests and tools). */
  async drain(): Promise<void> {
    await this.worker.drain();
  }

  flushAcks(): Promise<void> {
    return this.hub.flushAcks();
  }

  async close(): Promise<void> {
    await this.worker.stop();
    await this.hub.close();
    await this.relay.close();
  }
}
