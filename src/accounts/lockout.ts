import type { Clock } from '../lib/clock.ts';
import type { AccountStore } from '../storage/account-store.ts';

/** SPEC §3.2 and §8: more than 6 failures within 15 minutes lock logins until 15 minutes after the last. */
export const lockoutPolicy = { threshold: 6, windowMs: 15 * 60 * 1000 };

/** Rows older than two windows can no longer decide a lock. */
const keepMs = 2 * lockoutPolicy.windowMs;

/**
 * What a guarded secret check came to: refused unchecked because the user is locked, right, or
 * wrong (and whether this failure is the one that locks the user).
 */
export type Verdict = { kind: 'locked' } | { kind: 'right' } | { kind: 'wrong'; locks: boolean };

/**
 * Failed-login counting, in the shared database so that several Roost processes add up. Each
 * attempt is counted before its secret is checked and stays a failure unless the secret was
 * right: a burst of concurrent guesses gets at most threshold + 1 of them evaluated per window.
 */
export class Lockout {
  private readonly store: AccountStore;
  private readonly clock: Clock;

  constructor(options: { store: AccountStore; clock: Clock }) {
    this.store = options.store;
    this.clock = options.clock;
  }

  /**
   * The one sequence for every sign-in that checks a secret (password, old password, SMS code):
   * count the attempt or refuse it when locked, check, then settle. `check` runs only when the
   * attempt was counted; a check that throws withdraws the attempt.
   */
  async guard(appId: string, userId: string, check: () => Promise<boolean>): Promise<Verdict> {
    const { threshold, windowMs } = lockoutPolicy;
    const attempt = await this.store.beginLoginAttempt(appId, userId, this.clock.now(), windowMs, threshold);
    if (!attempt) return { kind: 'locked' };
    let right: boolean;
    try {
      right = await check();
    } catch (error) {
      // Not a guess: the check itself failed. Best effort; a row left behind only counts as a failure.
      await this.store.settleLoginAttempt(appId, userId, attempt.id, 'void', 0).catch(() => undefined);
      throw error;
    }
    await this.store.settleLoginAttempt(appId, userId, attempt.id, right ? 'right' : 'wrong', this.clock.now() - keepMs);
    return right ? { kind: 'right' } : { kind: 'wrong', locks: attempt.before >= threshold };
  }

  /** A wrong code outside a login (phone change, verification, reset) counts toward the lock too. */
  recordFailure(appId: string, userId: string): Promise<void> {
    return this.store.recordLoginFailure(appId, userId, this.clock.now(), keepMs);
  }

  clear(appId: string, userId: string): Promise<void> {
    return this.store.clearLoginFailures(appId, userId);
  }
}
