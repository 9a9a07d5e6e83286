/** What a mailed link is for. */
export type MailTokenKind = 'verifyEmail' | 'passwordReset';

/**
 * A mailed link's token as stored: only its keyed digest, never the token itself. `email` is
 * the address the link was sent to; the link is void once the user's address is another.
 */
export interface MailTokenRow {
  digest: string;
  kind: MailTokenKind;
  appId: string;
  userId: string;
  email: string;
  createdAt: number;
  expiresAt: number;
}

/** A token found by its digest, whatever its state. */
export interface MailTokenInfo {
  appId: string;
  userId: string;
  email: string;
  expiresAt: number;
  usedAt: number | null;
}

/**
 * The verbs of mailed one-time links. `consume` is one atomic statement, so of two
 * concurrent uses of a token exactly one gets it, on any number of Roost processes.
 */
export interface MailTokenStore {
  /**
   * Stores a new token unless the user already has `limit.max` tokens of that kind made since
   * `limit.since` (false then, nothing stored). Count and insert are one serialised step per user
   * and kind across every node, so requests at the same instant never pass the limit together.
   * Forgets the user's tokens of that kind that expired before `forgetBefore`.
   */
  insertWithinLimit(token: MailTokenRow, limit: { since: number; max: number }, forgetBefore: number): Promise<boolean>;
  /** Marks an unused, unexpired token used at `now` and returns it; null if there is no such token. */
  consume(kind: MailTokenKind, digest: string, now: number): Promise<MailTokenInfo | null>;
  /** Reads a token without using it (to tell expired from used, or to show a form first). */
  find(kind: MailTokenKind, digest: string): Promise<MailTokenInfo | null>;
  /** Marks every unused token of that kind of the user used (after a reset, the other links are void). */
  revokeAll(kind: MailTokenKind, appId: string, userId: string, now: number): Promise<void>;
}
