import { fail } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { mergeSettings } from '../apps/settings.ts';
import { settle } from '../objects/service.ts';
import type { StoredObject } from '../objects/types.ts';
import { isObject } from '../objects/values.ts';
import type { Store } from '../storage/store.ts';
import type { UserRecord } from '../storage/account-store.ts';
import type { AccountCaller, SignedIn } from './caller.ts';
import type { Lockout } from './lockout.ts';
import type { PasswordHasher } from './passwords.ts';
import type { SignIns } from './sign-in.ts';
import { codeOf, phoneOf, SmsCodes, smsCodeTtlMinutes, type SmsPurpose } from './sms-codes.ts';
import type { SessionTokens } from './sessions.ts';
import type { UserCreation } from './user-creation.ts';
import { checkNewPassword } from './user-fields.ts';

/**
 * Phone numbers and SMS codes (reference §2.1): sending codes, sign-up-or-login by phone, login
 * by code, phone verification and password reset by code. Codes are one-time, stored as keyed
 * digests, limited per number in the database; wrong codes count toward the login lock (§3.2).
 */
export class SmsAccounts {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly sessions: SessionTokens;
  private readonly passwords: PasswordHasher;
  private readonly lockout: Lockout;
  private readonly signIns: SignIns;
  private readonly creation: UserCreation;
  private readonly codes: SmsCodes;

  constructor(options: {
    store: Store;
    clock: Clock;
    secret: string;
    sessions: SessionTokens;
    passwords: PasswordHasher;
    lockout: Lockout;
    signIns: SignIns;
    creation: UserCreation;
    outboxDir: string;
    fetch?: typeof fetch;
  }) {
    this.store = options.store;
    this.clock = options.clock;
    this.sessions = options.sessions;
    this.passwords = options.passwords;
    this.lockout = options.lockout;
    this.signIns = options.signIns;
    this.creation = options.creation;
    this.codes = new SmsCodes(options);
  }

  /** requestSmsCode, requestLoginSmsCode, requestMobilePhoneVerify, requestPasswordResetBySmsCode. */
  async requestCode(caller: AccountCaller, body: Record<string, unknown>, purpose: Exclude<SmsPurpose, 'change'>): Promise<void> {
    const settings = mergeSettings(caller.app.settings);
    const phone = phoneOf(body, settings);
    if (purpose !== 'sms') {
      if (body.ttl !== undefined && body.ttl !== null && body.ttl !== smsCodeTtlMinutes) fail('incorrectType', 'ttl is only taken by requestSmsCode and requestChangePhoneNumber.');
      const record = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
      if (!record) fail('phoneNotFound');
      // The hosted service sends nothing to a number that is verified already.
      if (purpose === 'verify' && record.user.data.mobilePhoneVerified === true) return;
    }
    await this.codes.send(caller.app, settings, phone, purpose, body);
  }

  /** POST /1.1/requestChangePhoneNumber (session): a code to the new number, 6 minutes unless ttl says otherwise. */
  async requestPhoneChange(caller: AccountCaller, body: Record<string, unknown>): Promise<void> {
    this.requireUser(caller);
    const settings = mergeSettings(caller.app.settings);
    const phone = phoneOf(body, settings);
    const holder = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
    if (holder && holder.user.objectId !== caller.userId) fail('phoneTaken');
    await this.codes.send(caller.app, settings, phone, 'change', body, 6);
  }

  /**
   * POST /1.1/changePhoneNumber (session) {mobilePhoneNumber, code}: the number becomes the user's, verified.
   * The code is checked (and spent) before the session is asked for: a wrong code is 603 with or without one,
   * as the hosted service answered the PHP and Python SDKs' suites, which send it signed out.
   */
  async changePhone(caller: AccountCaller, body: Record<string, unknown>): Promise<StoredObject> {
    const phone = phoneOf(body, mergeSettings(caller.app.settings));
    if (!(await this.codes.consume(caller.appId, phone, ['change'], codeOf(body.code)))) {
      if (caller.userId) await this.lockout.recordFailure(caller.appId, caller.userId);
      fail('invalidSmsCode');
    }
    const userId = this.requireUser(caller);
    const ref = { appId: caller.appId, className: '_User', objectId: userId };
    const outcome = await this.store.updateObject(ref, (current) => ({
      ...current,
      data: { ...current.data, mobilePhoneNumber: phone, mobilePhoneVerified: true },
      updatedAt: Math.max(this.clock.now(), current.updatedAt),
    }));
    if (!outcome.ok && outcome.reason === 'notFound') fail('userNotFound');
    return settle(outcome, ref);
  }

  /** POST /1.1/usersByMobilePhone: logs the number's user in, or signs a new one up (username = number). */
  async signUpOrLogIn(caller: AccountCaller, body: Record<string, unknown>): Promise<SignedIn & { created: boolean }> {
    const settings = mergeSettings(caller.app.settings);
    const phone = phoneOf(body, settings);
    const code = codeOf(body.smsCode);
    const existing = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
    if (existing) return { ...(await this.logInWithCode(caller, existing, code, ['sms', 'login'])), created: false };
    // The body is checked before the code is used up, so a refused body leaves the code for the next try.
    const draft = this.creation.prepare(caller, {
      body,
      flowKeys: ['smsCode'],
      passwordRequired: false,
      defaultUsername: () => phone,
      finish: (data) => ({ ...data, mobilePhoneNumber: phone, mobilePhoneVerified: true }),
    });
    if (!(await this.codes.consume(caller.appId, phone, ['sms', 'login'], code))) fail('invalidSmsCode');
    const created = await this.creation.insert(caller, draft);
    const { outcome } = created;
    if (!outcome.ok && outcome.reason === 'taken' && outcome.field === 'mobilePhoneNumber') {
      // Another request signed this number up meanwhile; the code proved the number, so log that user in.
      const raced = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
      if (raced) return { user: raced.user, sessionToken: await this.sessions.current(this.store.accounts, caller.appId, raced), created: false };
    }
    return { user: settle(outcome, created.user), sessionToken: created.sessionToken, created: true };
  }

  /** POST /1.1/login with mobilePhoneNumber and smsCode. */
  async logIn(caller: AccountCaller, body: Record<string, unknown>): Promise<SignedIn> {
    const phone = phoneOf(body, mergeSettings(caller.app.settings));
    const code = codeOf(body.smsCode);
    const record = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
    if (!record) fail('userNotFound');
    return this.logInWithCode(caller, record, code, ['login', 'sms']);
  }

  /** POST /1.1/verifyMobilePhone/<code>: the number's user becomes mobilePhoneVerified. */
  async verifyPhone(caller: AccountCaller, code: string, body: unknown): Promise<StoredObject> {
    const settings = mergeSettings(caller.app.settings);
    const given = isObject(body) && body.mobilePhoneNumber !== undefined ? phoneOf(body, settings) : null;
    const record = given ? await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: given }) : null;
    const consumed = await this.codes.consume(caller.appId, given, ['verify'], codeOf(code));
    if (!consumed) {
      if (record) await this.lockout.recordFailure(caller.appId, record.user.objectId);
      fail('invalidSmsCode');
    }
    const user = await this.markVerified(caller.appId, consumed);
    if (!user) fail('phoneNotFound');
    return user;
  }

  /** PUT /1.1/resetPasswordBySmsCode/<code>: a new password; every old session token stops working. */
  async resetPassword(caller: AccountCaller, code: string, body: Record<string, unknown>): Promise<void> {
    const password = checkNewPassword(body.password);
    const settings = mergeSettings(caller.app.settings);
    const given = body.mobilePhoneNumber !== undefined ? phoneOf(body, settings) : null;
    const record = given ? await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: given }) : null;
    const consumed = await this.codes.consume(caller.appId, given, ['reset'], codeOf(code));
    if (!consumed) {
      if (record) await this.lockout.recordFailure(caller.appId, record.user.objectId);
      fail('invalidSmsCode');
    }
    const owner = record ?? (await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: consumed }));
    if (!owner) fail('phoneNotFound');
    const changed = await this.store.accounts.setPassword(caller.appId, owner.user.objectId, {
      passwordHash: await this.passwords.hash(password),
      updatedAt: Math.max(this.clock.now(), owner.user.updatedAt),
      session: this.sessions.issue().seal,
    });
    if (!changed) fail('phoneNotFound');
  }

  /** POST /1.1/verifySmsCode/<code>: checks (and uses up) a code from requestSmsCode. */
  async verifyCode(caller: AccountCaller, code: string, body: unknown): Promise<void> {
    const settings = mergeSettings(caller.app.settings);
    const given = isObject(body) && body.mobilePhoneNumber !== undefined ? phoneOf(body, settings) : null;
    if (!(await this.codes.consume(caller.appId, given, ['sms'], codeOf(code)))) fail('invalidSmsCode');
  }

  private async logInWithCode(caller: AccountCaller, record: UserRecord, code: string, purposes: SmsPurpose[]): Promise<SignedIn> {
    const userId = record.user.objectId;
    const phone = record.user.data.mobilePhoneNumber as string;
    const consume = async () => (await this.codes.consume(caller.appId, phone, purposes, code)) !== null;
    await this.signIns.checkSecret(caller.appId, userId, consume, { kind: 'invalidSmsCode' });
    return this.signIns.complete(caller, record, (await this.markVerified(caller.appId, phone)) ?? record.user);
  }

  /** A code proves the number: its user's mobilePhoneVerified becomes true. */
  private async markVerified(appId: string, phone: string): Promise<StoredObject | null> {
    const record = await this.store.accounts.findUser(appId, { field: 'mobilePhoneNumber', value: phone });
    if (!record) return null;
    if (record.user.data.mobilePhoneVerified === true) return record.user;
    const ref = { appId, className: '_User', objectId: record.user.objectId };
    const outcome = await this.store.updateObject(ref, (current) =>
      current.data.mobilePhoneNumber !== phone
        ? current
        : { ...current, data: { ...current.data, mobilePhoneVerified: true }, updatedAt: Math.max(this.clock.now(), current.updatedAt) },
    );
    return outcome.ok ? outcome.object : null;
  }

  /** The caller's user id; the routes ask it before they read the body, as the hosted service did. */
  requireUser(caller: AccountCaller): string {
    if (caller.userId) return caller.userId;
    fail(caller.sessionToken ? 'staleSession' : 'sessionMissing');
  }
}
