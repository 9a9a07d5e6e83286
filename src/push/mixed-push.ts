/**
 * Mixed push as a running node uses it: the phone-maker dispatcher (src/push/vendors) with the
 * application's settings read at send time, quota pauses shared by every node (given: Redis when
 * REDIS_URL is set, else the database), pauses written into the push record, and the
 * application of makers' delivery receipts (SPEC §6).
 */
import type { Logger } from 'pino';
import type { AppSettings } from '../apps/settings.ts';
import type { Clock } from '../lib/clock.ts';
import type { Store } from '../storage/store.ts';
import type { ReceiptUpdate } from '../storage/push-store.ts';
import { createVendorDispatch } from './vendors/dispatch.ts';
import type { QuotaPauses } from '../storage/quota-pause-store.ts';
import type { ReceiptBatch } from './vendors/receipts.ts';
import type { VendorDispatch } from './vendor-dispatch.ts';

export interface MixedPushOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  /** The application's settings as stored now (not a cached copy): mixedPush is read at send time. */
  settingsFor(appId: string): Promise<AppSettings | null>;
  /** Daily-quota pauses, shared by every node. */
  pauses: QuotaPauses;
}

export interface MixedPush {
  dispatch: VendorDispatch;
  /** Applies a batch of receipts: delivery counters on the records, `valid: false` for dead tokens. */
  applyReceipts(batch: ReceiptBatch): Promise<{ notifications: number; invalidated: number }>;
}

/** Receipt counters of a `_Notification` record (push_counts keys). */
export const receiptKeys = (vendor: string) => ({
  delivered: `${vendor}.receipt.delivered`,
  undelivered: `${vendor}.receipt.undelivered`,
  invalidTokens: `${vendor}.receipt.invalidToken`,
});

export function pauseError(event: { vendor: string; deviceProfile: string; until: number; reason: string }): string {
  return `${event.vendor} paused for profile ${event.deviceProfile} until ${new Date(event.until).toISOString()}: ${event.reason}`.slice(0, 200);
}

export function createMixedPush(options: MixedPushOptions): MixedPush {
  const { store, clock, logger } = options;
  const dispatch = createVendorDispatch({
    settingsFor: options.settingsFor,
    clock,
    pauses: options.pauses,
    onPause: async (event) => {
      logger.warn(
        { appId: event.appId, vendor: event.vendor, deviceProfile: event.deviceProfile, until: new Date(event.until).toISOString(), reason: event.reason },
        'mixed push: daily quota reached; maker paused for this application until the next quota day',
      );
      await store.push.recordCounts(event.appId, event.notificationId, { [`error:${pauseError(event)}`]: 1, [`${event.vendor}.paused`]: 1 });
    },
  });

  return {
    dispatch,
    async applyReceipts(batch) {
      const byNotification = new Map<string, ReceiptUpdate>();
      for (const count of batch.counts) {
        const keys = receiptKeys(batch.vendor);
        byNotification.set(count.notificationId, {
          notificationId: count.notificationId,
          counts: { [keys.delivered]: count.delivered, [keys.undelivered]: count.undelivered, [keys.invalidTokens]: count.invalidTokens },
          invalidTokens: [],
        });
      }
      for (const receipt of batch.receipts) {
        if (receipt.outcome === 'invalidToken' && receipt.notificationId) byNotification.get(receipt.notificationId)?.invalidTokens.push(receipt.token);
      }
      const outcome = await store.push.applyReceipts(batch.vendor, [...byNotification.values()], clock.now());
      logger.info({ vendor: batch.vendor, receipts: batch.receipts.length, ...outcome }, 'mixed push: receipts applied');
      return outcome;
    },
  };
}
