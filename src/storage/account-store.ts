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

/** Failed logins of one user as the lockout rule reads them. */
export interface FailureState {
  /** Failures kept for this user (recent ones only). */
  failures: number;
  /** Epoch ms until which logins are refused, or null when not locked. */
  lockedUntil: number | null;
}

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
  /** Records one failed login at `at`; forgets failures older than `keepMs`. */
  recordLoginFailure(appId: string, userId: string, at: number, keepMs: number): Promise<void>;
  /**
   * Locked when some failure in the last `windowMs` was preceded, within `windowMs`, by more
   * than `threshold` failures (itself included); the lock lasts `windowMs` after the last failure.
   */
  loginFailureState(appId: string, userId: string, now: number, windowMs: number, threshold: number): Promise<FailureState>;
  clearLoginFailures(appId: string, userId: string): Promise<void>;
}
