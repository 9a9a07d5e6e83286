import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../lib/clock.ts';
import { lockingAttempts, type AccountStore, type LoginLookup, type UserRecord } from '../storage/account-store.ts';

/**
 * SPEC §3.2 and §8: more than 6 failures within 15 minutes lock logins until 15 minutes after the
 * last; the 7th (lockingAttempts) is the one that locks.
 */
export const lockoutPolicy = { windowMs: 15 * 60 * 1000 };

/** Longest a locked attempt waits for concurrent attempts to settle (real time: one hash check or a few). */
const settleWaitMs = 1500;

/**
 * What a guarded secret check came to: refused unchecked because the user is locked, right, or
 * wrong (and whether this failure is the one that locks the user).
 */
export type Verdict = { kind: 'locked' } | { kind: 'right' } | { kind: 'wrong'; locks: boolean };

/**
 * Failed-login counting, in the shared database so that several Roost processes add up. Each
 * attempt is counted before its secret is checked and stays a failure unless the secret was
 * right: however many guesses arrive at once, at most 7 are evaluated per window.
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
   * count the attempt or refuse it when locked, check, and forget the failures when it was right.
   * `check` runs only when the attempt was counted; one that throws stays counted, as a guess
   * whose answer was never given. `first`: the attempt's count as findUser counted it (null: locked then).
   */
  async guard(appId: string, userId: string, check: () => Promise<boolean>, first?: number | null): Promise<Verdict> {
    const counted = await this.beginAttempt(appId, userId, first);
    if (counted === null) return { kind: 'locked' };
    if (!(await check())) return { kind: 'wrong', locks: counted >= lockingAttempts };
    await this.store.clearLoginFailures(appId, userId);
    return { kind: 'right' };
  }

  /**
   * Counts the attempt; while the user is locked, retries for up to settleWaitMs. Attempts still
   * being checked count as failures until they settle, and a right one among them clears the
   * count: without the wait, the 8th of 8 simultaneous right logins (a user on several devices)
   * was refused with 219. A lock of settled failures outlasts the wait and is answered after it.
   */
  private async beginAttempt(appId: string, userId: string, first?: number | null): Promise<number | null> {
    const deadline = Date.now() + settleWaitMs;
    let counted = first === undefined ? await this.count(appId, userId) : first;
    for (let delay = 25; counted === null && Date.now() + delay <= deadline; delay = Math.min(delay * 2, 200)) {
      await sleep(delay);
      counted = await this.count(appId, userId);
    }
    return counted;
  }

  private count(appId: string, userId: string): Promise<number | null> {
    return this.store.beginLoginAttempt(appId, userId, this.clock.now(), lockoutPolicy.windowMs);
  }

  /** A password login's user with its attempt counted (guard's `first`), read together; null for no such user, nothing counted. */
  findCounting(appId: string, lookup: LoginLookup): Promise<{ record: UserRecord; counted: number | null } | null> {
    return this.store.findUserCountingAttempt(appId, lookup, this.clock.now(), lockoutPolicy.windowMs);
  }

  /** A wrong code outside a login (phone change, verification, reset) counts toward the lock too. */
  recordFailure(appId: string, userId: string): Promise<void> {
    return this.store.recordLoginFailure(appId, userId, this.clock.now());
  }

  /** When the user's lock ends (ms); 0 when the user is not locked. */
  lockedUntil(appId: string, userId: string): Promise<number> {
    return this.store.loginLockedUntil(appId, userId, this.clock.now(), lockoutPolicy.windowMs);
  }

  clear(appId: string, userId: string): Promise<void> {
    return this.store.clearLoginFailures(appId, userId);
  }
}
