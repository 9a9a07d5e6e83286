import { randomInt } from 'node:crypto';
import { fail } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { hmacHex } from '../lib/crypto.ts';
import { newObjectId } from '../lib/ids.ts';
import { mergeSettings, type AppSettings } from '../apps/settings.ts';
import { applyOperations } from '../objects/ops.ts';
import { parseWriteBody, settle } from '../objects/service.ts';
import type { StoredObject } from '../objects/types.ts';
import { isObject } from '../objects/values.ts';
import type { Store } from '../storage/store.ts';
import type { UserRecord } from '../storage/account-store.ts';
import type { SmsLimits } from '../storage/sms-store.ts';
import { OutboxSmsSender, WebhookSmsSender, type SmsSender } from '../sms/senders.ts';
import { Lockout } from './lockout.ts';
import type { PasswordHasher } from './passwords.ts';
import { normalizePhone } from './phone.ts';
import type { SessionTokens } from './sessions.ts';
import type { AccountCaller, SignedIn } from './service.ts';
import { checkNewPassword, checkUserData, defaultUserAcl, emailVerifiedFor } from './user-fields.ts';

export type SmsPurpose = 'sms' | 'login' | 'verify' | 'reset';

/** SPEC-derived limits: one code a minute and ten a day per number; six digits, ten minutes. */
export const smsLimits: SmsLimits = { minIntervalMs: 60_000, maxPerWindow: 10, windowMs: 24 * 60 * 60 * 1000 };
export const smsCodeTtlMinutes = 10;
/** Wrong guesses at one number's codes before they are dropped (above the login lock's 6). */
export const smsMaxAttempts = 10;
/**
 * Codes given without a number (the SDKs' verifyMobilePhone and resetPasswordBySmsCode) match any
 * number's live code, so wrong ones are counted per application: past this many in the window,
 * such requests answer 429 until it passes (requests naming the number are not affected).
 */
export const codeOnlyGuessLimit = { max: 30, windowMs: 15 * 60 * 1000 };
const codePattern = /^\d{6}$/;
const purposeText: Record<SmsPurpose, string> = {
  sms: 'verification code',
  login: 'login code',
  verify: 'code to verify this phone number',
  reset: 'password reset code',
};

/**
 * Phone numbers and SMS codes (reference §2.1): sending codes, sign-up-or-login by phone, login
 * by code, phone verification and password reset by code. Codes are one-time, stored as keyed
 * digests, limited per number in the database; wrong codes count toward the login lock (§3.2).
 */
export class SmsAccounts {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly secret: string;
  private readonly sessions: SessionTokens;
  private readonly passwords: PasswordHasher;
  private readonly lockout: Lockout;
  private readonly outbox: SmsSender;
  private readonly fetcher: typeof fetch | undefined;

  constructor(options: {
    store: Store;
    clock: Clock;
    secret: string;
    sessions: SessionTokens;
    passwords: PasswordHasher;
    outboxDir: string;
    fetch?: typeof fetch;
  }) {
    this.store = options.store;
    this.clock = options.clock;
    this.secret = options.secret;
    this.sessions = options.sessions;
    this.passwords = options.passwords;
    this.lockout = new Lockout({ store: options.store.accounts, clock: options.clock });
    this.outbox = new OutboxSmsSender({ dir: options.outboxDir });
    this.fetcher = options.fetch;
  }

  /** requestSmsCode, requestLoginSmsCode, requestMobilePhoneVerify, requestPasswordResetBySmsCode. */
  async requestCode(caller: AccountCaller, body: unknown, purpose: SmsPurpose): Promise<void> {
    if (!isObject(body)) fail('invalidJson');
    const settings = mergeSettings(caller.app.settings);
    const phone = this.phoneOf(body, settings);
    if (purpose !== 'sms') {
      const record = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
      if (!record) fail('phoneNotFound');
      // The hosted service sends nothing to a number that is verified already.
      if (purpose === 'verify' && record.user.data.mobilePhoneVerified === true) return;
    }
    const ttl = body.ttl === undefined || body.ttl === null ? smsCodeTtlMinutes : body.ttl;
    if (purpose !== 'sms' && ttl !== smsCodeTtlMinutes) fail('incorrectType', 'ttl is only taken by requestSmsCode.');
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > 30) fail('incorrectType', 'ttl must be 1 to 30 minutes.');
    const code = randomInt(0, 1_000_000).toString().padStart(6, '0');
    const now = this.clock.now();
    const refusal = await this.store.sms.issue(
      { appId: caller.appId, phone, purpose, digest: this.digest(caller.appId, code), expiresAt: now + ttl * 60_000 },
      now,
      smsLimits,
    );
    if (refusal === 'tooSoon') fail('smsTooFrequent', 'An SMS code was sent to this number less than a minute ago.');
    if (refusal === 'dailyLimit') fail('smsTooFrequent', 'This number has had ten SMS codes in the last 24 hours.');
    const name = typeof body.name === 'string' ? body.name : (settings.sms.signature ?? caller.app.name);
    const sign = typeof body.sign === 'string' ? body.sign : settings.sms.signature;
    const what = typeof body.op === 'string' ? `code for ${body.op}` : purposeText[purpose];
    try {
      await this.sender(settings).send({
        appId: caller.appId,
        appName: caller.app.name,
        to: phone,
        code,
        purpose,
        ttlMinutes: ttl,
        type: body.smsType === 'voice' ? 'voice' : 'sms',
        text: `Your ${name} ${what} is ${code}. It expires in ${ttl} minutes.`,
        template: typeof body.template === 'string' ? body.template : null,
        sign,
      });
    } catch {
      fail('smsSendFailed');
    }
  }

  /** POST /1.1/usersByMobilePhone: logs the number's user in, or signs a new one up (username = number). */
  async signUpOrLogIn(caller: AccountCaller, body: unknown): Promise<SignedIn & { created: boolean }> {
    if (!isObject(body)) fail('invalidJson');
    const settings = mergeSettings(caller.app.settings);
    const phone = this.phoneOf(body, settings);
    const code = this.codeOf(body.smsCode);
    const existing = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
    if (existing) return { ...(await this.logInWithCode(caller, existing, code, ['sms', 'login'])), created: false };
    if (!(await this.consume(caller.appId, phone, ['sms', 'login'], code))) fail('invalidSmsCode');
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(body)) {
      if (['smsCode', 'password', 'sessionToken', 'emailVerified', 'mobilePhoneVerified', 'authData'].includes(key)) continue;
      fields[key] = value;
    }
    const write = parseWriteBody(fields);
    const data = applyOperations({}, write.operations);
    if (data instanceof Error) throw data;
    data.username ??= phone;
    data.mobilePhoneNumber = phone;
    data.mobilePhoneVerified = true;
    checkUserData(data);
    if (!('emailVerified' in data)) data.emailVerified = emailVerifiedFor(data.email, settings);
    const password = body.password === undefined || body.password === null ? null : checkNewPassword(body.password);
    const now = this.clock.now();
    const objectId = newObjectId();
    const user: StoredObject = { className: '_User', objectId, createdAt: now, updatedAt: now, acl: write.acl ?? defaultUserAcl(objectId), data };
    const session = this.sessions.issue();
    const passwordHash = password === null ? null : await this.passwords.hash(password);
    const outcome = await this.store.identities.insertUser(caller.appId, user, { passwordHash, session: session.seal });
    if (!outcome.ok && outcome.reason === 'taken' && outcome.field === 'mobilePhoneNumber') {
      // Another request signed this number up meanwhile; the code proved the number, so log that user in.
      const raced = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
      if (raced) return { user: raced.user, sessionToken: await this.currentToken(caller.appId, raced), created: false };
    }
    return { user: settle(outcome, user), sessionToken: session.token, created: true };
  }

  /** POST /1.1/login with mobilePhoneNumber and smsCode. */
  async logIn(caller: AccountCaller, body: Record<string, unknown>): Promise<SignedIn> {
    const phone = this.phoneOf(body, mergeSettings(caller.app.settings));
    const code = this.codeOf(body.smsCode);
    const record = await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: phone });
    if (!record) fail('userNotFound');
    return this.logInWithCode(caller, record, code, ['login', 'sms']);
  }

  /** POST /1.1/verifyMobilePhone/<code>: the number's user becomes mobilePhoneVerified. */
  async verifyPhone(caller: AccountCaller, code: string, body: unknown): Promise<StoredObject> {
    const settings = mergeSettings(caller.app.settings);
    const given = isObject(body) && body.mobilePhoneNumber !== undefined ? this.phoneOf(body, settings) : null;
    const record = given ? await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: given }) : null;
    const consumed = await this.consume(caller.appId, given, ['verify'], this.codeOf(code));
    if (!consumed) {
      if (record) await this.lockout.recordFailure(caller.appId, record.user.objectId);
      fail('invalidSmsCode');
    }
    const user = await this.markVerified(caller.appId, consumed);
    if (!user) fail('phoneNotFound');
    return user;
  }

  /** PUT /1.1/resetPasswordBySmsCode/<code>: a new password; every old session token stops working. */
  async resetPassword(caller: AccountCaller, code: string, body: unknown): Promise<void> {
    if (!isObject(body)) fail('invalidJson');
    const password = checkNewPassword(body.password);
    const settings = mergeSettings(caller.app.settings);
    const given = body.mobilePhoneNumber !== undefined ? this.phoneOf(body, settings) : null;
    const record = given ? await this.store.accounts.findUser(caller.appId, { field: 'mobilePhoneNumber', value: given }) : null;
    const consumed = await this.consume(caller.appId, given, ['reset'], this.codeOf(code));
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
    const given = isObject(body) && body.mobilePhoneNumber !== undefined ? this.phoneOf(body, settings) : null;
    if (!(await this.consume(caller.appId, given, ['sms'], this.codeOf(code)))) fail('invalidSmsCode');
  }

  private async logInWithCode(caller: AccountCaller, record: UserRecord, code: string, purposes: string[]): Promise<SignedIn> {
    const userId = record.user.objectId;
    const phone = record.user.data.mobilePhoneNumber as string;
    const lock = await this.lockout.state(caller.appId, userId);
    if (lock.lockedUntil !== null) fail('loginLocked');
    if (!(await this.consume(caller.appId, phone, purposes, code))) {
      await this.lockout.recordFailure(caller.appId, userId);
      fail('invalidSmsCode');
    }
    if (lock.hasFailures) await this.lockout.clear(caller.appId, userId);
    const user = (await this.markVerified(caller.appId, phone)) ?? record.user;
    const settings = mergeSettings(caller.app.settings);
    if (settings.preventLoginWithUnverifiedEmail && typeof user.data.email === 'string' && user.data.emailVerified !== true) {
      fail('emailNotVerified');
    }
    return { user, sessionToken: await this.currentToken(caller.appId, record) };
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

  /** The phone of a consumed code, or null for a wrong, used or expired one. */
  private async consume(appId: string, phone: string | null, purposes: string[], code: string): Promise<string | null> {
    const now = this.clock.now();
    const guessKey = `*code-only:${purposes.join(',')}`;
    if (phone === null && (await this.store.sms.guesses(appId, guessKey, now, codeOnlyGuessLimit.windowMs)) >= codeOnlyGuessLimit.max) {
      fail('rateLimited', 'Too many wrong SMS codes were given without a mobilePhoneNumber; give the number, or try again later.');
    }
    const consumed = codePattern.test(code)
      ? await this.store.sms.consume(appId, phone, purposes, this.digest(appId, code), now, smsMaxAttempts)
      : null;
    if (!consumed && phone === null) await this.store.sms.recordGuess(appId, guessKey, now, codeOnlyGuessLimit.windowMs);
    return consumed?.phone ?? null;
  }

  private digest(appId: string, code: string): string {
    return hmacHex(this.secret, `sms-code\0${appId}\0${code}`);
  }

  private phoneOf(body: Record<string, unknown>, settings: AppSettings): string {
    const raw = body.mobilePhoneNumber;
    if (raw === undefined || raw === null || raw === '') fail('phoneMissing');
    const phone = normalizePhone(raw, settings.sms.defaultCountryCode);
    if (!phone) fail('invalidPhone', 'The mobile phone number is invalid: give it in E.164 form, like +8613800138000.');
    return phone;
  }

  private codeOf(value: unknown): string {
    if (value === undefined || value === null || value === '') fail('invalidSmsCode', 'The SMS code is missing.');
    if (typeof value !== 'string' && typeof value !== 'number') fail('invalidSmsCode');
    return String(value);
  }

  private sender(settings: AppSettings): SmsSender {
    if (settings.sms.provider === 'webhook' && settings.sms.webhookUrl) {
      return new WebhookSmsSender({ url: settings.sms.webhookUrl, secret: settings.sms.webhookSecret, fetch: this.fetcher });
    }
    return this.outbox;
  }

  private async currentToken(appId: string, record: UserRecord): Promise<string> {
    const current = record.sessionCipher ? this.sessions.reveal(record.sessionCipher) : null;
    if (current) return current;
    const session = this.sessions.issue();
    await this.store.accounts.setSession(appId, record.user.objectId, session.seal);
    return session.token;
  }
}
