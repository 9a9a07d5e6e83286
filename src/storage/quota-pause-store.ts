/**
 * Daily-quota pauses (DESIGN "Push" 3): when a maker says an application's daily quota is used
 * up, that maker is not called for that application and device profile until the next quota day
 * (src/push/vendors/pauses.ts). API nodes are stateless, so production keeps them in the database
 * (src/storage/sql/quota-pause-store.ts) or Redis (src/storage/redis/quota-pause-store.ts);
 * MemoryQuotaPauses is for tests and single-process use.
 */
import type { VendorName } from '../push/vendors/types.ts';

export interface PauseKey {
  appId: string;
  deviceProfile: string;
  vendor: VendorName;
}

export interface QuotaPause {
  until: number;
  reason: string;
}

export interface QuotaPauses {
  /** The pause in force at `now`, or null. */
  current(key: PauseKey, now: number): Promise<QuotaPause | null>;
  /**
   * Pauses until `until` (epoch ms). Idempotent: several nodes may report the same quota error;
   * an existing later pause is kept (store the maximum of the two).
   */
  pause(key: PauseKey, until: number, reason: string): Promise<void>;
}

function pauseKeyString(key: PauseKey): string {
  return `${key.appId}\u0000${key.deviceProfile}\u0000${key.vendor}`;
}

export class MemoryQuotaPauses implements QuotaPauses {
  private readonly pauses = new Map<string, QuotaPause>();

  async current(key: PauseKey, now: number): Promise<QuotaPause | null> {
    const id = pauseKeyString(key);
    const pause = this.pauses.get(id);
    if (!pause) return null;
    if (pause.until <= now) {
      this.pauses.delete(id);
      return null;
    }
    return pause;
  }

  async pause(key: PauseKey, until: number, reason: string): Promise<void> {
    const id = pauseKeyString(key);
    const existing = this.pauses.get(id);
    if (!existing || existing.until < until) this.pauses.set(id, { until, reason });
  }
}
