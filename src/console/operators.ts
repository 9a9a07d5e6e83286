import { randomBytes } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { randomToken, hmacHex } from '../lib/crypto.ts';
import { newObjectId } from '../lib/ids.ts';
import type { Clock } from '../lib/clock.ts';
import { maxPasswordLength, PasswordHasher } from '../accounts/passwords.ts';
import type { AuditEntry, LockoutPolicy, Operator, OperatorRole, OperatorStore } from '../storage/operator-store.ts';

export type { Operator, OperatorRole };

export const operatorRoles: readonly OperatorRole[] = ['admin', 'viewer'];
/** Shortest password an operator may choose: the console holds every application's keys. */
export const minOperatorPassword = 10;
const namePattern = /^[A-Za-z0-9._@-]{1,64}$/;

export type SignIn =
  | { ok: true; token: string; operator: Operator }
  | { ok: false; reason: 'wrong' | 'locked' | 'codeNeeded' | 'wrongCode'; lockedUntil?: number };

/** A TOTP being enrolled: shown once, as the secret and the otpauth URI an authenticator app reads (QR). */
export interface TotpEnrolment {
  secret: string;
  uri: string;
}

export interface FirstOperator {
  name: string;
  password: string;
}

export type OperatorChange = 'done' | 'unknown' | 'taken' | 'badName' | 'badRole' | 'weakPassword' | 'wrongCode' | 'lastAdmin';

/** TOTP confirmed: the recovery codes, shown this once. */
export interface TotpConfirmed {
  recoveryCodes: string[];
}

/** Recovery codes an enrolment gives: each signs in once in place of a TOTP code (a lost phone). */
export const recoveryCodeCount = 10;
const recoveryAlphabet = 'abcdefghijklmnopqrstuvwxyz234567';

/** A code of 10 base32 letters (50 random bits), shown as `xxxxx-xxxxx`. */
function newRecoveryCode(): string {
  const letters = [...randomBytes(10)].map((byte) => recoveryAlphabet[byte & 31]).join('');
  return `${letters.slice(0, 5)}-${letters.slice(5)}`;
}

/** As typed: case, spaces and dashes do not matter; null when it cannot be a recovery code. */
function recoveryCodeOf(typed: string): string | null {
  const code = typed.toLowerCase().replace(/[\s-]+/g, '');
  return /^[a-z2-7]{10}$/.test(code) ? code : null;
}

/** TOTP as every authenticator app reads it: SHA-1, 6 digits, 30 s; one step either side allowed for clock drift. */
const totpPeriodMs = 30_000;
const totpWindow = 1;

/**
 * The console's operators: accounts apart from every application's users, their sign-in (argon2id,
 * lockout after repeated failures), their sessions (a random token the browser keeps; the database
 * only its HMAC), and the audit log every change goes into. Used by `roost operator` and the console.
 */
export class OperatorService {
  private readonly store: OperatorStore;
  private readonly clock: Clock;
  private readonly secret: string;
  private readonly hasher: PasswordHasher;
  readonly sessionMs: number;
  readonly lockout: LockoutPolicy;

  constructor(options: { store: OperatorStore; clock: Clock; secret: string; hasher?: PasswordHasher; sessionMs?: number; lockout?: LockoutPolicy }) {
    if (!options.secret) throw new Error('OperatorService needs the server secret');
    this.store = options.store;
    this.clock = options.clock;
    this.secret = options.secret;
    this.hasher = options.hasher ?? new PasswordHasher();
    this.sessionMs = options.sessionMs ?? 12 * 3600_000;
    this.lockout = options.lockout ?? { maxFailures: 5, lockMs: 15 * 60_000 };
  }

  private digest(token: string): string {
    return hmacHex(this.secret, `console-session:${token}`);
  }

  /** The CSRF token of a session: derived from its token, so nothing more is stored and it dies with the session. */
  csrfToken(sessionToken: string): string {
    return hmacHex(this.secret, `console-csrf:${sessionToken}`);
  }

  private audit(actor: string, action: string, target: string, detail: Record<string, unknown> = {}): Promise<void> {
    const at = this.clock.now();
    const entry: AuditEntry = { id: newObjectId(at), at, actor, action, target, detail };
    return this.store.appendAudit(entry);
  }

  list(): Promise<Operator[]> {
    return this.store.list();
  }

  count(): Promise<number> {
    return this.store.count();
  }

  listAudit(limit = 100): Promise<AuditEntry[]> {
    return this.store.listAudit(limit);
  }

  /** Records a change made by `actor` (an operator's name, or `cli`) outside this service, e.g. an app created. */
  record(actor: string, action: string, target: string, detail: Record<string, unknown> = {}): Promise<void> {
    return this.audit(actor, action, target, detail);
  }

  private passwordProblem(password: string): boolean {
    return password.length < minOperatorPassword || password.length > maxPasswordLength;
  }

  async create(actor: string, name: string, role: string, password: string): Promise<OperatorChange> {
    if (!namePattern.test(name)) return 'badName';
    if (!operatorRoles.includes(role as OperatorRole)) return 'badRole';
    if (this.passwordProblem(password)) return 'weakPassword';
    const passwordHash = await this.hasher.hash(password);
    const outcome = await this.store.create({
      id: newObjectId(this.clock.now()), name, role: role as OperatorRole, passwordHash, createdAt: this.clock.now(), failures: 0, lockedUntil: 0,
      totp: false, totpSecret: null, totpPending: null, totpLastStep: 0,
    });
    if (outcome === 'taken') return 'taken';
    await this.audit(actor, 'operator.create', name, { role });
    return 'done';
  }

  /** On a store without operators, makes `admin` with a random password for the first start to show once. */
  async ensureFirst(): Promise<FirstOperator | null> {
    if ((await this.store.count()) > 0) return null;
    const first = { name: 'admin', password: randomToken(18) };
    return (await this.create('first start', first.name, 'admin', first.password)) === 'done' ? first : null;
  }

  async delete(actor: string, name: string): Promise<OperatorChange> {
    if (!(await this.store.delete(name))) return 'unknown';
    await this.audit(actor, 'operator.delete', name);
    return 'done';
  }

  /** A new password ends the operator's sessions and lifts a lockout. */
  async setPassword(actor: string, name: string, password: string): Promise<OperatorChange> {
    if (this.passwordProblem(password)) return 'weakPassword';
    if (!(await this.store.setPassword(name, await this.hasher.hash(password)))) return 'unknown';
    await this.audit(actor, 'operator.passwd', name);
    return 'done';
  }

  async signIn(name: string, password: string, code = ''): Promise<SignIn> {
    const now = this.clock.now();
    const record = name.length <= 64 && password.length <= maxPasswordLength ? await this.store.byName(name) : null;
    // An unknown name costs a hash too, so the answer's time does not tell which names exist.
    if (!record) {
      await this.hasher.verifyDummy(password);
      return { ok: false, reason: 'wrong' };
    }
    if (record.lockedUntil > now) return { ok: false, reason: 'locked', lockedUntil: record.lockedUntil };
    if (!(await this.hasher.verify(record.passwordHash, password))) {
      const lockedUntil = await this.store.recordFailure(record.id, now, this.lockout);
      if (lockedUntil > 0) await this.audit('console', 'operator.locked', name, { until: new Date(lockedUntil).toISOString() });
      return { ok: false, reason: lockedUntil > 0 ? 'locked' : 'wrong', lockedUntil: lockedUntil || undefined };
    }
    if (record.totpSecret) {
      // The password was right; without a code nothing is counted, a wrong or replayed code counts as a failure.
      if (!code) return { ok: false, reason: 'codeNeeded' };
      if (!(await this.secondFactor(record.id, record.name, record.totpSecret, code, now))) {
        const lockedUntil = await this.store.recordFailure(record.id, now, this.lockout);
        if (lockedUntil > 0) await this.audit('console', 'operator.locked', name, { until: new Date(lockedUntil).toISOString() });
        return { ok: false, reason: lockedUntil > 0 ? 'locked' : 'wrongCode', lockedUntil: lockedUntil || undefined };
      }
    }
    if (record.failures > 0) await this.store.clearFailures(record.id);
    const token = randomToken(32);
    await this.store.insertSession({ digest: this.digest(token), operatorId: record.id, createdAt: now, expiresAt: now + this.sessionMs });
    await this.audit(name, 'operator.signIn', name);
    return { ok: true, token, operator: { id: record.id, name: record.name, role: record.role, createdAt: record.createdAt, totp: record.totp } };
  }

  private totp(name: string, secret: string): OTPAuth.TOTP {
    return new OTPAuth.TOTP({ issuer: 'Roost console', label: name, algorithm: 'SHA1', digits: 6, period: totpPeriodMs / 1000, secret: OTPAuth.Secret.fromBase32(secret) });
  }

  /** The time step a code belongs to, within the allowed drift; null for a wrong code. */
  private codeStep(name: string, secret: string, code: string, now: number): number | null {
    const token = code.replace(/\s+/g, '');
    if (!/^\d{6}$/.test(token)) return null;
    const delta = this.totp(name, secret).validate({ token, timestamp: now, window: totpWindow });
    return delta === null ? null : Math.floor(now / totpPeriodMs) + delta;
  }

  /** A TOTP code, or else a recovery code; either is good once. */
  private async secondFactor(id: string, name: string, secret: string, code: string, now: number): Promise<boolean> {
    if (/^\s*\d{3}\s?\d{3}\s*$/.test(code)) return this.acceptCode(id, name, secret, code, now);
    const recovery = recoveryCodeOf(code);
    if (recovery === null || !(await this.store.useRecoveryCode(id, this.recoveryDigest(id, recovery)))) return false;
    await this.audit(name, 'operator.recoveryCodeUsed', name, { left: await this.store.recoveryCodesLeft(id) });
    return true;
  }

  /**
   * Recovery codes are kept as keyed digests (HMAC under the server secret), as session tokens are:
   * 50 random bits each need no slow hash, and the table alone tells nothing.
   */
  private recoveryDigest(id: string, code: string): string {
    return hmacHex(this.secret, `console-recovery:${id}:${code}`);
  }

  private recoveryCodes(id: string): { codes: string[]; digests: string[] } {
    const codes = Array.from({ length: recoveryCodeCount }, newRecoveryCode);
    return { codes, digests: codes.map((code) => this.recoveryDigest(id, recoveryCodeOf(code)!)) };
  }

  /** Right and not used before (each code is good once). */
  private async acceptCode(id: string, name: string, secret: string, code: string, now: number): Promise<boolean> {
    const step = this.codeStep(name, secret, code, now);
    return step !== null && (await this.store.useTotpStep(id, step));
  }

  /** Starts (or restarts) TOTP enrolment for the operator: a new secret, kept pending until a code confirms it. */
  async beginTotp(operator: Operator): Promise<TotpEnrolment> {
    const secret = new OTPAuth.Secret({ size: 20 }).base32;
    await this.store.setTotpPending(operator.id, secret);
    return { secret, uri: this.totp(operator.name, secret).toString() };
  }

  /** The enrolment's URI again (the page shows its QR until confirmed); null when none is pending. */
  async pendingTotp(operator: Operator): Promise<TotpEnrolment | null> {
    const record = await this.store.byName(operator.name);
    if (!record?.totpPending) return null;
    return { secret: record.totpPending, uri: this.totp(operator.name, record.totpPending).toString() };
  }

  /**
   * Confirms the pending secret with a code from the app; from then on sign-in asks for a code. Answers
   * the recovery codes, which are shown this once (only their digests are kept).
   */
  async confirmTotp(operator: Operator, code: string): Promise<Exclude<OperatorChange, 'done'> | TotpConfirmed> {
    const record = await this.store.byName(operator.name);
    if (!record?.totpPending) return 'unknown';
    const now = this.clock.now();
    const step = this.codeStep(operator.name, record.totpPending, code, now);
    const { codes, digests } = this.recoveryCodes(record.id);
    if (step === null || !(await this.store.confirmTotp(record.id, record.totpPending, step, digests))) return 'wrongCode';
    await this.audit(operator.name, 'operator.totpEnable', operator.name);
    return { recoveryCodes: codes };
  }

  /** New recovery codes in place of the old ones (all of them stop working); 'unknown' without TOTP. */
  async renewRecoveryCodes(operator: Operator): Promise<'unknown' | TotpConfirmed> {
    const { codes, digests } = this.recoveryCodes(operator.id);
    if (!(await this.store.replaceRecoveryCodes(operator.id, digests))) return 'unknown';
    await this.audit(operator.name, 'operator.recoveryCodes', operator.name);
    return { recoveryCodes: codes };
  }

  /** How many unused recovery codes the operator has. */
  recoveryCodesLeft(operator: Operator): Promise<number> {
    return this.store.recoveryCodesLeft(operator.id);
  }

  /** Removes an operator's TOTP (a lost phone): `roost operator totp-reset`, or an admin in the console. Ends its sessions. */
  async resetTotp(actor: string, name: string): Promise<OperatorChange> {
    if (!(await this.store.resetTotp(name))) return 'unknown';
    await this.audit(actor, 'operator.totpReset', name);
    return 'done';
  }

  /** Changes an operator's role; the last admin stays one (someone must be able to change things). */
  async setRole(actor: string, name: string, role: string): Promise<OperatorChange> {
    if (!operatorRoles.includes(role as OperatorRole)) return 'badRole';
    const record = await this.store.byName(name);
    if (!record) return 'unknown';
    if (record.role === 'admin' && role !== 'admin' && (await this.adminCount()) <= 1) return 'lastAdmin';
    if (!(await this.store.setRole(name, role as OperatorRole))) return 'unknown';
    await this.audit(actor, 'operator.role', name, { role });
    return 'done';
  }

  private async adminCount(): Promise<number> {
    return (await this.store.list()).filter((op) => op.role === 'admin').length;
  }

  /** The operator of a session token; null for an unknown, expired or implausible one. */
  async resolve(token: string | undefined): Promise<Operator | null> {
    if (!token || token.length > 128) return null;
    return this.store.bySession(this.digest(token), this.clock.now());
  }

  async signOut(token: string, operator: Operator): Promise<void> {
    await this.store.deleteSession(this.digest(token));
    await this.audit(operator.name, 'operator.signOut', operator.name);
  }
}
