/**
 * Daily-quota pauses (DESIGN "Push" 3): when a maker says an application's daily quota is used
 * up, that maker is not called for that application and device profile until the next quota day.
 * API nodes are stateless, so production implementations keep this in the database or Redis;
 * MemoryQuotaPauses is for tests and single-process use.
 */
import type { VendorName } from './types.ts';

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

/** Makers reset daily quotas at midnight China Standard Time (UTC+8, no daylight saving). */
const chinaOffsetMs = 8 * 3600_000;
const dayMs = 86_400_000;

/** The start of the next quota day after `now`: the next 00:00 in UTC+8. */
export function nextQuotaDay(now: number): number {
  return Math.floor((now + chinaOffsetMs) / dayMs) * dayMs + dayMs - chinaOffsetMs;
}

export function pauseKeyString(key: PauseKey): string {
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

/** The two Redis commands RedisQuotaPauses needs (an ioredis client satisfies it). */
export interface RedisLike {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, mode: 'PX', ms: number): Promise<unknown>;
}

/**
 * Pauses shared by every node through Redis: one key per (app, profile, maker) that expires by
 * itself at the end of the pause. Every node computes the same `until` (the next quota day),
 * so a plain SET is idempotent enough.
 */
export class RedisQuotaPauses implements QuotaPauses {
  constructor(
    private readonly redis: RedisLike,
    private readonly clock: { now(): number },
    private readonly prefix = 'roost:push:pause:',
  ) {}

  private key(key: PauseKey): string {
    return `${this.prefix}${key.appId}:${key.deviceProfile}:${key.vendor}`;
  }

  async current(key: PauseKey, now: number): Promise<QuotaPause | null> {
    const raw = await this.redis.get(this.key(key));
    if (!raw) return null;
    try {
      const pause = JSON.parse(raw) as QuotaPause;
      return pause.until > now ? pause : null;
    } catch {
      return null;
    }
  }

  async pause(key: PauseKey, until: number, reason: string): Promise<void> {
    const existing = await this.current(key, this.clock.now());
    if (existing && existing.until >= until) return;
    const ms = until - this.clock.now();
    if (ms <= 0) return;
    await this.redis.set(this.key(key), JSON.stringify({ until, reason }), 'PX', ms);
  }
}
