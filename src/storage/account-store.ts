import type { SeenRow, StoredObject, WriteOutcome } from '../objects/types.ts';

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

export type LoginLookup = { field: LoginField; value: string };

export type UserLookup = { userId: string } | LoginLookup;

/** How many recent attempts of a user the store keeps: SPEC §3.2 locks after more than 6. */
export const lockingAttempts = 7;

/**
 * The account verbs of the Store. Each is one atomic statement (or one transaction), so the
 * rules hold when several Roost processes share the database.
 */
export interface AccountStore {
  findUser(appId: string, lookup: UserLookup): Promise<UserRecord | null>;
  /** The session's user with its row's version (so the user's update of itself need not read the row again). */
  userBySession(appId: string, digest: string): Promise<SeenRow | null>;
  /**
   * Replaces the user's session (the old token stops working at once), and moves updatedAt when given
   * (refreshSessionToken does, as the hosted service did); false if the user is gone.
   */
  setSession(appId: string, userId: string, session: SessionSeal, updatedAt?: number): Promise<boolean>;
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
   * Counts a login attempt at `now` before its secret is checked, in one atomic statement with
   * the lock check, so concurrent attempts on every process share one count. The attempt stays
   * a failure unless clearLoginFailures follows. Locked (null, nothing recorded) when the user's
   * last `lockingAttempts` attempts fall within `windowMs` and the last of them within `windowMs`
   * of `now`. Otherwise: the user's attempts within `windowMs` of `now`, this one included.
   */
  beginLoginAttempt(appId: string, userId: string, now: number, windowMs: number): Promise<number | null>;
  /**
   * A password login's first step: findUser by a login field, and beginLoginAttempt for the user found, at once
   * (one statement where the database allows). Null, nothing counted, when no user has that value.
   */
  findUserCountingAttempt(appId: string, lookup: LoginLookup, now: number, windowMs: number): Promise<{ record: UserRecord; counted: number | null } | null>;
  /** Records one failure at `at` without a lock check (a wrong code outside a login). */
  recordLoginFailure(appId: string, userId: string, at: number): Promise<void>;
  /**
   * When the user's lock ends (ms), read without counting an attempt; 0 when not locked. The same
   * rule as beginLoginAttempt's: a full ring within `windowMs`, its last attempt within `windowMs` of now.
   */
  loginLockedUntil(appId: string, userId: string, now: number, windowMs: number): Promise<number>;
  /** Forgets the user's attempts: a right secret, a password reset, a deleted user. */
  clearLoginFailures(appId: string, userId: string): Promise<void>;
}
