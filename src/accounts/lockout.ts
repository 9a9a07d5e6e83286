import type { Clock } from '../lib/clock.ts';
import type { AccountStore } from '../storage/account-store.ts';

/** SPEC §3.2 and §8: more than 6 failures within 15 minutes lock logins until 15 minutes after the last. */
export const lockoutPolicy = { threshold: 6, windowMs: 15 * 60 * 1000 };

/**
 * Failed-login counting. Every failure is a row in the shared database, so failures spread
 * over several Roost processes add up; the lock is derived from those rows on each login.
 */
export class Lockout {
  private readonly store: AccountStore;
  private readonly clock: Clock;

  constructor(options: { store: AccountStore; clock: Clock }) {
    this.store = options.store;
    this.clock = options.clock;
  }

  /** Epoch ms until which the user's logins are refused, null when open, and whether failures are on record. */
  async state(appId: string, userId: string): Promise<{ lockedUntil: number | null; hasFailures: boolean; failures: number }> {
    const state = await this.store.loginFailureState(
      appId,
      userId,
      this.clock.now(),
      lockoutPolicy.windowMs,
      lockoutPolicy.threshold,
    );
    return { lockedUntil: state.lockedUntil, hasFailures: state.failures > 0, failures: state.failures };
  }

  recordFailure(appId: string, userId: string): Promise<void> {
    // Rows older than two windows can no longer decide a lock.
    return this.store.recordLoginFailure(appId, userId, this.clock.now(), 2 * lockoutPolicy.windowMs);
  }

  clear(appId: string, userId: string): Promise<void> {
    return this.store.clearLoginFailures(appId, userId);
  }
}
