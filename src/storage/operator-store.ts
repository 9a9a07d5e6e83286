/** What an operator may do in the console: `admin` everything, `viewer` read without secrets. */
export type OperatorRole = 'admin' | 'viewer';

export interface Operator {
  id: string;
  name: string;
  role: OperatorRole;
  createdAt: number;
  /** Whether sign-in asks for a TOTP code too. */
  totp: boolean;
}

/** An operator with what sign-in checks: the password hash and the lockout state. */
export interface OperatorRecord extends Operator {
  passwordHash: string;
  failures: number;
  /** Sign-in is refused until this instant (ms); 0 when not locked. */
  lockedUntil: number;
  /** The confirmed TOTP secret (base32), null without TOTP; the one being enrolled. */
  totpSecret: string | null;
  totpPending: string | null;
  /** The time step of the last code accepted (a code is good once). */
  totpLastStep: number;
}

/** A console session as stored: only the keyed digest of its token. */
export interface OperatorSessionRow {
  digest: string;
  operatorId: string;
  createdAt: number;
  expiresAt: number;
}

/** One line of the audit log: who did what to what, when. `detail` never holds a secret. */
export interface AuditEntry {
  id: string;
  at: number;
  actor: string;
  action: string;
  target: string;
  detail: Record<string, unknown>;
}

/** After how many failures, counted since the last success, sign-in locks, and for how long. */
export interface LockoutPolicy {
  maxFailures: number;
  lockMs: number;
}

/**
 * The console's accounts, sessions and audit log. Each verb is one atomic statement (or one
 * transaction), so nodes sharing a database agree on names, failures and sessions.
 */
export interface OperatorStore {
  /** 'taken' when an operator already has that name. */
  create(operator: OperatorRecord): Promise<'created' | 'taken'>;
  byName(name: string): Promise<OperatorRecord | null>;
  list(): Promise<Operator[]>;
  count(): Promise<number>;
  /** Deletes the operator, its sessions and recovery codes; false when there is none of that name. */
  delete(name: string): Promise<boolean>;
  /** Replaces the password hash, clears the lockout and ends every session of the operator; false when unknown. */
  setPassword(name: string, passwordHash: string): Promise<boolean>;
  /** Counts one failed sign-in; locks until `now + lockMs` when the count reaches `maxFailures`. Returns the lock's end (0: not locked). */
  /** Keeps a TOTP secret being enrolled (null: none); false when the operator is unknown. */
  setTotpPending(id: string, secret: string | null): Promise<boolean>;
  /** Makes the pending secret the one sign-in checks, if it is still `secret`, with these recovery codes (digests); false otherwise. */
  confirmTotp(id: string, secret: string, step: number, recoveryDigests: readonly string[]): Promise<boolean>;
  /** Replaces the operator's recovery codes (digests) while it has TOTP; false otherwise. */
  replaceRecoveryCodes(id: string, digests: readonly string[]): Promise<boolean>;
  /** Uses a recovery code: true once per code (it is deleted), false for an unknown or used one. */
  useRecoveryCode(id: string, digest: string): Promise<boolean>;
  recoveryCodesLeft(id: string): Promise<number>;
  /** Removes TOTP (pending and confirmed) with its recovery codes and ends the operator's sessions; false when unknown. */
  resetTotp(name: string): Promise<boolean>;
  /** Accepts a code's time step once: false when that step (or a later one) was used already. */
  useTotpStep(id: string, step: number): Promise<boolean>;
  /** Changes the role; false when unknown. */
  setRole(name: string, role: OperatorRole): Promise<boolean>;
  recordFailure(id: string, now: number, policy: LockoutPolicy): Promise<number>;
  clearFailures(id: string): Promise<void>;
  insertSession(session: OperatorSessionRow): Promise<void>;
  /** The operator of an unexpired session; null otherwise. */
  bySession(digest: string, now: number): Promise<Operator | null>;
  deleteSession(digest: string): Promise<void>;
  appendAudit(entry: AuditEntry): Promise<void>;
  /** The newest entries first. */
  listAudit(limit: number): Promise<AuditEntry[]>;
}
