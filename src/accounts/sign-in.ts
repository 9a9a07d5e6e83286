import { ApiError, fail, type ErrorKind } from '../lib/errors.ts';
import { mergeSettings } from '../apps/settings.ts';
import type { StoredObject } from '../objects/types.ts';
import type { AccountStore, UserRecord } from '../storage/account-store.ts';
import type { AccountCaller, SignedIn } from './caller.ts';
import type { Lockout, Verdict } from './lockout.ts';
import type { SessionTokens } from './sessions.ts';

/**
 * The sequence every sign-in that checks a secret runs (password login, updatePassword's old
 * password, SMS-code login): the secret is checked under the lockout, then the application's
 * login rule and the user's current token.
 */
export class SignIns {
  private readonly accounts: AccountStore;
  private readonly lockout: Lockout;
  private readonly sessions: SessionTokens;

  constructor(options: { accounts: AccountStore; lockout: Lockout; sessions: SessionTokens }) {
    this.accounts = options.accounts;
    this.lockout = options.lockout;
    this.sessions = options.sessions;
  }

  /**
   * Checks a user's secret under the lockout (counted before the check, forgotten when right):
   * 219 when the user is locked, `wrong` when the secret was wrong. `observe` sees the verdict first;
   * `first`, the attempt as counted when the user was read (Lockout.findCounting).
   */
  async checkSecret(
    appId: string,
    userId: string,
    check: () => Promise<boolean>,
    wrong: { kind: ErrorKind; message?: string },
    observe?: (verdict: Verdict) => void,
    first?: number | null,
  ): Promise<void> {
    const verdict = await this.lockout.guard(appId, userId, check, first);
    observe?.(verdict);
    if (verdict.kind === 'locked') fail('loginLocked');
    if (verdict.kind === 'wrong') throw new ApiError(wrong.kind, wrong.message);
  }

  /** A user whose secret was right: 216 while its address is unconfirmed if the application says so, else its token. */
  async complete(caller: AccountCaller, record: UserRecord, user: StoredObject = record.user): Promise<SignedIn> {
    const settings = mergeSettings(caller.app.settings);
    if (settings.preventLoginWithUnverifiedEmail && typeof user.data.email === 'string' && user.data.emailVerified !== true) {
      fail('emailNotVerified');
    }
    return { user, sessionToken: await this.sessions.current(this.accounts, caller.appId, record) };
  }
}
