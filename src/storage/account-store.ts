import type { StoredObject, WriteOutcome } from '../objects/types.ts';

/** What the database keeps of a session token: a keyed digest to find it, an encrypted copy to return it. */
export interface SessionSeal {
  digest: string;
  cipher: string;
}

/** A user row with the secrets the accounts module needs; never sent anywhere as is. */
export interface UserRecord {
  user: StoredObject;
  /** A PHC string (argon2id), or null for a user without a password. */
  passwordHash: string | null;
  /** The encrypted current session token, or null when the user has none yet. */
  sessionCipher: string | null;
}

export type LoginField = 'username' | 'email' | 'mobilePhoneNumber';

export type UserLookup = { userId: string } | { field: LoginField; value: string };

/** A login attempt counted before its secret was checked (AccountStore.beginLoginAttempt). */
export interface LoginAttempt {
  id: string;
  /** Failures (and open attempts) of the user within the window before this one. */
  before: number;
}

/** How a counted attempt ended: the secret was right, wrong, or could not be checked. */
export type AttemptOutcome = 'right' | 'wrong' | 'void';

/**
 * The account verbs of the Store. Each is one atomic statement (or one transaction), so the
 * rules hold when several Roost processes share the database.
 */
export interface AccountStore {
  /** Inserts a `_User` object with its password hash and first session; uniqueness by index. */
  insertUser(appId: string, user: StoredObject, secrets: { passwordHash: string; session: SessionSeal }): Promise<WriteOutcome>;
  findUser(appId: string, lookup: UserLookup): Promise<UserRecord | null>;
  userBySession(appId: string, digest: string): Promise<StoredObject | null>;
  /** Replaces the user's session (the old token stops working at once); false if the user is gone. */
  setSession(appId: string, userId: string, session: SessionSeal): Promise<boolean>;
  /**
   * Stores a new password hash (and optionally a new session) if the current hash is still
   * `expectedHash` (when given); false if the user is gone or the password changed meanwhile.
   */
  setPassword(
    appId: string,
    userId: string,
    change: { passwordHash: string; updatedAt: number; session?: SessionSeal; expectedHash?: string | null },
  ): Promise<boolean>;
  /**
   * Counts a login attempt at `now` before its secret is checked, in one atomic step with the
   * lock check, so concurrent attempts on every process share one count. Null when the user is
   * locked (nothing recorded): some failure in the last `windowMs` was preceded, within
   * `windowMs`, by more than `threshold` failures (itself included). Otherwise the attempt counts
   * as a failure until settleLoginAttempt says otherwise.
   */
  beginLoginAttempt(appId: string, userId: string, now: number, windowMs: number, threshold: number): Promise<LoginAttempt | null>;
  /**
   * Ends an attempt. 'right' forgets the user's failures up to and including it (later attempts
   * still count); 'wrong' keeps it as a failure and forgets the user's failures older than
   * `forgetBefore`; 'void' withdraws it.
   */
  settleLoginAttempt(appId: string, userId: string, attemptId: string, outcome: AttemptOutcome, forgetBefore: number): Promise<void>;
  /** Records one failure at `at` without an attempt (a wrong code outside a login); forgets failures older than `keepMs`. */
  recordLoginFailure(appId: string, userId: string, at: number, keepMs: number): Promise<void>;
  clearLoginFailures(appId: string, userId: string): Promise<void>;
}
