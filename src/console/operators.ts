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
  | { ok: false; reason: 'wrong' | 'locked'; lockedUntil?: number };

export interface FirstOperator {
  name: string;
  password: string;
}

export type OperatorChange = 'done' | 'unknown' | 'taken' | 'badName' | 'badRole' | 'weakPassword';

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

  async signIn(name: string, password: string): Promise<SignIn> {
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
    if (record.failures > 0) await this.store.clearFailures(record.id);
    const token = randomToken(32);
    await this.store.insertSession({ digest: this.digest(token), operatorId: record.id, createdAt: now, expiresAt: now + this.sessionMs });
    await this.audit(name, 'operator.signIn', name);
    const { passwordHash: _hash, failures: _failures, lockedUntil: _locked, ...operator } = record;
    return { ok: true, token, operator };
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
