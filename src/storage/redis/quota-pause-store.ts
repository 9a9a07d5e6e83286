import type { Redis } from 'ioredis';
import { onFirstUse } from '../../lib/on-first-use.ts';
import type { Logger } from 'pino';
import type { PauseKey, QuotaPause, QuotaPauses } from '../quota-pause-store.ts';

const ioredis = onFirstUse<typeof import('ioredis')>('ioredis');

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

/** RedisQuotaPauses on a connection of their own to `url`; `close` quits it. */
export function connectQuotaPauses(options: { url: string; clock: { now(): number }; logger: Logger }): {
  pauses: QuotaPauses;
  /** Resolves when Redis answers a PING (the readiness check). */
  ping(): Promise<unknown>;
  close(): Promise<void>;
} {
  const redis = new (ioredis().Redis)(options.url, { lazyConnect: false, maxRetriesPerRequest: 3 });
  redis.on('error', (error) => options.logger.warn({ err: error.message }, 'quota pauses: redis error'));
  return {
    pauses: new RedisQuotaPauses(redis, options.clock),
    ping: () => redis.ping(),
    async close() {
      // QUIT waits for a connection that may never come back: with Redis away, stopping would hang.
      if (redis.status !== 'ready') return redis.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
