import type { ClassSchemas } from '../objects/schemas.ts';
import { ApiError, fail } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { mergeSettings, type AppSettings } from '../apps/settings.ts';
import { access, conditionFor, readersFor } from '../objects/acl.ts';
import { applyOperations, relationChanges } from '../objects/ops.ts';
import { settle, type FindOptions } from '../objects/service.ts';
import type { JsonObject, SeenRow, StoredObject, Where } from '../objects/types.ts';
import { checkConditionReads, checkFind } from '../objects/query-reach.ts';
import type { Store } from '../storage/store.ts';
import { Lockout, type Verdict } from './lockout.ts';
import { noMetrics, type Metrics } from '../lib/metrics.ts';
import { PasswordHasher } from './passwords.ts';
import { SessionTokens } from './sessions.ts';
import { SignIns } from './sign-in.ts';
import { SmsAccounts } from './sms.ts';
import { ThirdPartyAccounts } from './third-party.ts';
import { withAuthData } from './auth-data.ts';
import type { AccountCaller, EmailToVerify, SignedIn } from './caller.ts';
import { UserCreation } from './user-creation.ts';
import { checkNewPassword, checkUserData, emailNeedsVerifying, emailVerifiedFor, parseLoginBody, parseUpdateBody, type LoginInput } from './user-fields.ts';

const userClass = '_User';

/**
 * A user reading itself by id (the SDKs' fetch of the current user): the row the request's own session
 * lookup read, when its ACL lets the user read it without roles; otherwise (or for anyone else) null, and
 * the read goes to the store. One statement instead of two, as users/me; the answer is the row a moment
 * earlier in the same request (test/accounts-users.test.ts "a user reading itself…" holds the two equal).
 */
function ownRead(caller: AccountCaller, userId: string): StoredObject | null {
  const own = caller.sessionUser;
  if (own === null || own.objectId !== userId) return null;
  return access(own.acl, caller, undefined, 'read') === true ? own : null;
}

/**
 * A user updating itself: the row its session lookup read, with that read's version, which the store may take
 * for the current row while the row is still at that version (Store.updateObject's `seen`): the update needs no
 * read of its own. test/storage/update-paths.test.ts holds an update given a stale, foreign or deleted row to one
 * that reads.
 */
function seenSelf(caller: AccountCaller, userId: string): SeenRow | undefined {
  const own = caller.sessionUser;
  return own !== null && own.objectId === userId ? { object: own, version: caller.sessionVersion } : undefined;
}

/**
 * Registration, login, sessions, lockout, password change and the `_User` reads and writes,
 * for both path families (/1.1/users… and /1.1/classes/_User…). No HTTP here.
 */
export class AccountService {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly passwords: PasswordHasher;
  private readonly sessions: SessionTokens;
  /** Failed-login counting, shared by every flow that checks a secret or clears the count (src/accounts/lockout.ts). */
  readonly lockout: Lockout;
  private readonly signIns: SignIns;
  private readonly creation: UserCreation;
  /** Third-party sign-in, link and unlink (src/accounts/third-party.ts). */
  readonly thirdParty: ThirdPartyAccounts;
  /** Phone numbers and SMS codes (src/accounts/sms.ts). */
  readonly sms: SmsAccounts;
  private readonly onEmailToVerify: EmailToVerify | undefined;
  private readonly metrics: Metrics;
  private readonly schemas: ClassSchemas;

  constructor(options: {
    store: Store;
    clock: Clock;
    secret: string;
    passwords?: PasswordHasher;
    /** Where SMS messages are written when an app has no webhook (SMS_OUTBOX_DIR). */
    smsOutboxDir?: string;
    /** For provider token checks and SMS webhooks. */
    fetch?: typeof fetch;
    /** Mails the verification link (src/accounts/email-verification.ts). */
    onEmailToVerify?: EmailToVerify;
    /** Counts logins and lockouts for GET /metrics (src/lib/metrics.ts). */
    metrics?: Metrics;
    /** The class schemas: users' field types and defaults (src/objects/schemas.ts). */
    schemas: ClassSchemas;
  }) {
    this.onEmailToVerify = options.onEmailToVerify;
    this.metrics = options.metrics ?? noMetrics;
    this.store = options.store;
    this.clock = options.clock;
    this.passwords = options.passwords ?? new PasswordHasher();
    this.sessions = new SessionTokens({ secret: options.secret });
    this.lockout = new Lockout({ store: options.store.accounts, clock: options.clock });
    this.signIns = new SignIns({ accounts: options.store.accounts, lockout: this.lockout, sessions: this.sessions });
    const { store, clock, fetch, schemas } = options;
    this.schemas = schemas;
    this.creation = new UserCreation({ store, clock, schemas, sessions: this.sessions, passwords: this.passwords, onEmailToVerify: this.onEmailToVerify });
    this.thirdParty = new ThirdPartyAccounts({ store, clock, sessions: this.sessions, creation: this.creation, fetch });
    this.sms = new SmsAccounts({
      store,
      clock,
      secret: options.secret,
      sessions: this.sessions,
      passwords: this.passwords,
      lockout: this.lockout,
      signIns: this.signIns,
      creation: this.creation,
      outboxDir: options.smsOutboxDir ?? 'data/sms-outbox',
      fetch,
    });
  }

  /**
   * The user a token belongs to, or null for an unknown or replaced token. The request hook keeps
   * it in the request's context (AccountCaller.sessionUser), so users/me needs no second query.
   */
  resolveSession = async (appId: string, token: string): Promise<SeenRow | null> => {
    if (!this.sessions.plausible(token)) return null;
    return this.store.accounts.userBySession(appId, this.sessions.digest(token));
  };

  /** POST /1.1/users with username and password (authData sign-up: src/accounts/third-party.ts). */
  async signup(caller: AccountCaller, body: unknown): Promise<SignedIn> {
    const created = await this.creation.create(caller, { body, passwordRequired: true });
    return { user: settle(created.outcome, created.user), sessionToken: created.sessionToken };
  }

  /** `body` as POST /1.1/login's schema lets it through (src/http/routes/user-schemas.ts). */
  async login(caller: AccountCaller, body: Record<string, unknown>): Promise<SignedIn> {
    // mobilePhoneNumber with an SMS code instead of a password (src/accounts/sms.ts).
    if (body.smsCode !== undefined && body.password === undefined) return this.sms.logIn(caller, body);
    const { field, value, password } = parseLoginBody(body as LoginInput);
    // The user read with this attempt counted (one statement on PostgreSQL).
    const found = await this.lockout.findCounting(caller.appId, { field, value });
    if (!found) {
      await this.passwords.verifyDummy(password);
      this.metrics.login('failure');
      fail('userNotFound');
    }
    const { record, counted } = found;
    const userId = record.user.objectId;
    const passwordHash = record.passwordHash;
    const check = () => (passwordHash ? this.passwords.verify(passwordHash, password) : this.passwords.verifyDummy(password));
    await this.signIns.checkSecret(caller.appId, userId, check, { kind: 'passwordMismatch' }, this.countLogin, counted);
    // An imported hash (src/accounts/legacy-passwords.ts) becomes argon2id at the first login it lets through.
    if (record.passwordHash && this.passwords.needsRehash(record.passwordHash)) {
      await this.store.accounts.setPassword(caller.appId, userId, {
        passwordHash: await this.passwords.hash(password),
        updatedAt: record.user.updatedAt,
        expectedHash: record.passwordHash,
      });
    }
    return this.signIns.complete(caller, record);
  }

  /** Password logins for GET /metrics (src/lib/metrics.ts). */
  private readonly countLogin = (verdict: Verdict): void => {
    this.metrics.login(verdict.kind === 'right' ? 'success' : verdict.kind === 'wrong' ? 'failure' : 'locked');
    if (verdict.kind === 'wrong' && verdict.locks) this.metrics.lockout();
  };

  /** users/me: the token's user, with that token; 211 when it is missing, unknown or replaced. */
  async me(caller: AccountCaller): Promise<SignedIn> {
    const token = caller.sessionToken;
    // The request hook already looked the token up: no user there means unknown or replaced.
    if (!token || !caller.sessionUser) fail('userNotFound');
    return { user: caller.sessionUser, sessionToken: token };
  }

  /** A user as the caller's ACL allows; 211 when absent or unreadable. */
  async get(caller: AccountCaller, userId: string): Promise<StoredObject> {
    const own = ownRead(caller, userId);
    if (own) return own;
    const user = await this.store.getObject({ appId: caller.appId, className: userClass, objectId: userId }, readersFor(caller));
    if (!user) fail('userNotFound');
    return user;
  }

  async find(caller: AccountCaller, options: FindOptions): Promise<StoredObject[]> {
    checkFind(caller, userClass, options.where, options.order);
    if (options.limit === 0) return [];
    return this.store.findObjects(caller.appId, userClass, { ...options, readers: readersFor(caller) });
  }

  async count(caller: AccountCaller, where: Where): Promise<number> {
    checkFind(caller, userClass, where);
    return this.store.countObjects(caller.appId, userClass, where, readersFor(caller));
  }

  /** Own session or master only, whatever the ACL says; identity fields stay unique by index. */
  async update(caller: AccountCaller, userId: string, body: unknown, condition?: Where): Promise<StoredObject> {
    this.admitWrite(caller, userId, condition);
    // authData links and unlinks, and a first password, are split off and checked first (src/accounts/third-party.ts).
    const plan = await this.thirdParty.prepareUpdate(caller, userId, body);
    const write = parseUpdateBody(plan.rest, caller.master);
    await this.schemas.checkOperations(caller.appId, userClass, write.operations);
    const relations = relationChanges(write.operations);
    const settings = mergeSettings(caller.app.settings);
    const ref = { appId: caller.appId, className: userClass, objectId: userId };
    let emailChanged = false;
    const outcome = await this.store.updateObject<ApiError>(
      ref,
      (current) => {
        const applied = applyOperations(current.data, write.operations);
        const data = plan.change && !(applied instanceof ApiError) ? withAuthData(applied, plan.change) : applied;
        if (data instanceof ApiError) return { refused: data };
        try {
          checkUserData(data);
        } catch (error) {
          if (error instanceof ApiError) return { refused: error };
          throw error;
        }
        emailChanged = data.email !== current.data.email;
        if (data.email !== current.data.email && data.emailVerified === current.data.emailVerified) {
          data.emailVerified = this.emailVerifiedAfterChange(data, current.data, settings);
        }
        return {
          ...current,
          data,
          acl: write.acl === undefined ? current.acl : write.acl,
          updatedAt: Math.max(this.clock.now(), current.updatedAt),
        };
      },
      conditionFor(caller, condition),
      relations,
      seenSelf(caller, userId),
    );
    if (!outcome.ok && outcome.reason === 'notFound') fail('userNotFound');
    if (outcome.ok && plan.password !== null) await this.setPassword(caller.appId, userId, plan.password, { rotateSession: false });
    const updated = settle(outcome, ref);
    this.schemas.knowRelations(caller.appId, userClass, relations);
    if (emailChanged && emailNeedsVerifying(updated, settings)) this.onEmailToVerify?.(caller.app, updated);
    return updated;
  }

  /** What an update or delete answers before its body: own session or master, then what its condition may read. */
  admitWrite(caller: AccountCaller, userId: string, condition: Where | undefined): void {
    this.requireSelf(caller, userId);
    checkConditionReads(caller, userClass, condition);
  }

  /** Own session or master only; deleting an absent user succeeds, as for other objects. */
  async remove(caller: AccountCaller, userId: string, condition?: Where): Promise<void> {
    this.admitWrite(caller, userId, condition);
    const ref = { appId: caller.appId, className: userClass, objectId: userId };
    const outcome = await this.store.deleteObject(ref, () => null, conditionFor(caller, condition));
    if (!outcome.ok && outcome.reason === 'notFound') return;
    settle(outcome, ref);
    await this.lockout.clear(caller.appId, userId);
  }

  /** A new token for the user (own session or master); the old one stops working at once. */
  async refreshSessionToken(caller: AccountCaller, userId: string): Promise<SignedIn> {
    this.requireSelf(caller, userId);
    const record = await this.store.accounts.findUser(caller.appId, { userId });
    if (!record) fail('userNotFound');
    const session = this.sessions.issue();
    const updatedAt = Math.max(this.clock.now(), record.user.updatedAt);
    if (!(await this.store.accounts.setSession(caller.appId, userId, session.seal, updatedAt))) fail('userNotFound');
    return { user: { ...record.user, updatedAt }, sessionToken: session.token };
  }

  /** Changes the password given the old one; rotates the token when forceReloginOnPasswordChange is on. */
  async updatePassword(caller: AccountCaller, userId: string, body: { old_password: string; new_password?: unknown }): Promise<SignedIn> {
    this.requireSelf(caller, userId);
    // old_password: a non-empty string, as the route's schema holds (src/http/routes/users.ts).
    const newPassword = checkNewPassword(body.new_password);
    const record = await this.store.accounts.findUser(caller.appId, { userId });
    if (!record) fail('userNotFound');
    // A stolen session must not turn into an unthrottled password oracle: the lockout applies here too.
    const { passwordHash } = record;
    const oldPassword = body.old_password;
    const check = async () => passwordHash !== null && (await this.passwords.verify(passwordHash, oldPassword));
    await this.signIns.checkSecret(caller.appId, userId, check, { kind: 'passwordMismatch', message: 'The old password is wrong.' });
    const rotate = mergeSettings(caller.app.settings).forceReloginOnPasswordChange;
    const updatedAt = Math.max(this.clock.now(), record.user.updatedAt);
    const session = rotate ? this.sessions.issue() : null;
    const changed = await this.store.accounts.setPassword(caller.appId, userId, {
      passwordHash: await this.passwords.hash(newPassword),
      updatedAt,
      session: session?.seal,
      expectedHash: record.passwordHash,
    });
    // The hash moved between our check and our write: another change won; ours is refused.
    if (!changed) fail('passwordMismatch', 'The password was changed meanwhile.');
    const user = { ...record.user, updatedAt };
    return { user, sessionToken: session ? session.token : await this.sessions.current(this.store.accounts, caller.appId, record) };
  }

  /**
   * Sets a password without the old one, for the reset flows and imports; rotating the session
   * makes every old token fail (SPEC §3.3). Returns false if the user does not exist.
   */
  async setPassword(appId: string, userId: string, password: string, options: { rotateSession: boolean }): Promise<boolean> {
    const valid = checkNewPassword(password);
    return this.store.accounts.setPassword(appId, userId, {
      passwordHash: await this.passwords.hash(valid),
      updatedAt: this.clock.now(),
      session: options.rotateSession ? this.sessions.issue().seal : undefined,
    });
  }


  /** User-restricted APIs: the user's own valid session, or the master key. */
  /** The caller may change this user; the routes ask it before they read the body. */
  requireSelf(caller: AccountCaller, userId: string): void {
    if (caller.master || (caller.userId !== null && caller.userId === userId)) return;
    // A token that no longer resolves was replaced (refresh, password change): SPEC §3.3 answers 403.
    if (caller.sessionToken && caller.userId === null) fail('staleSession');
    fail('sessionMissing');
  }

  private emailVerifiedAfterChange(data: JsonObject, previous: JsonObject, settings: AppSettings): boolean | null {
    if (typeof data.email !== 'string') return null;
    // A new address is not confirmed, even if the old one was.
    const tracked = previous.emailVerified !== null && previous.emailVerified !== undefined;
    return settings.verifyEmailOnSignup || tracked ? false : emailVerifiedFor(data.email, settings);
  }
}
