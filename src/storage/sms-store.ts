/** Why a code could not be issued: too soon after the last one, or the daily allowance is used up. */
export type IssueRefusal = 'tooSoon' | 'dailyLimit';

export interface SmsLimits {
  /** Least time between two codes to one number. */
  minIntervalMs: number;
  /** Most codes to one number within `windowMs`. */
  maxPerWindow: number;
  windowMs: number;
}

export interface IssuedCode {
  appId: string;
  phone: string;
  /** What the code is for: sms (generic), login, verify, reset. */
  purpose: string;
  /** Keyed digest of the code; the code itself is never stored. */
  digest: string;
  expiresAt: number;
}

export interface ConsumedCode {
  phone: string;
  purpose: string;
}

/**
 * SMS codes and the per-number send counters, in the database so every API node sees the
 * same ones. Issuing checks and counts in one transaction; consuming is one atomic delete.
 */
export interface SmsStore {
  /**
   * Records a send to `code.phone` at `now` if the limits allow it, and stores the code (replacing
   * a live one of the same purpose). Returns null when issued, else why not.
   */
  issue(code: IssuedCode, now: number, limits: SmsLimits): Promise<IssueRefusal | null>;
  /**
   * Deletes the live code with this digest and returns what it was for; with `phone` null the
   * code must match exactly one live code of the purposes. Null when there is none (wrong,
   * used or expired); a wrong guess for a known number counts against its live codes, which
   * are dropped after `maxAttempts` wrong guesses.
   */
  consume(
    appId: string,
    phone: string | null,
    purposes: readonly string[],
    digest: string,
    now: number,
    maxAttempts: number,
  ): Promise<ConsumedCode | null>;
  /**
   * Records one failed guess under `key` (codes given without a number, which no per-number
   * count covers) and returns the failures under that key within the last `windowMs`.
   */
  recordGuess(appId: string, key: string, now: number, windowMs: number): Promise<number>;
  /** Failed guesses under `key` within the last `windowMs`. */
  guesses(appId: string, key: string, now: number, windowMs: number): Promise<number>;
}
