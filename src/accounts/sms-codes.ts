import { randomInt } from 'node:crypto';
import { fail } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { hmacHex } from '../lib/crypto.ts';
import type { AppSettings } from '../apps/settings.ts';
import type { AppRecord } from '../objects/types.ts';
import type { Store } from '../storage/store.ts';
import type { SmsLimits } from '../storage/sms-store.ts';
import { OutboxSmsSender, WebhookSmsSender, type SmsSender } from '../sms/senders.ts';
import { normalizePhone } from './phone.ts';

export type SmsPurpose = 'sms' | 'login' | 'verify' | 'reset' | 'change';

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
  change: 'code to make this your phone number',
};

/** The request's mobilePhoneNumber in E.164 form: 212 when missing, 127 when it cannot be a number. */
export function phoneOf(body: Record<string, unknown>, settings: AppSettings): string {
  const raw = body.mobilePhoneNumber;
  if (raw === undefined || raw === null || raw === '') fail('phoneMissing');
  const phone = normalizePhone(raw, settings.sms.defaultCountryCode);
  if (!phone) fail('invalidPhone', 'The mobile phone number is invalid: give it in E.164 form, like +8613800138000.');
  return phone;
}

/** A code as given; a missing one is 603 at once. */
export function codeOf(value: unknown): string {
  if (value === undefined || value === null || value === '') fail('invalidSmsCode', 'The SMS code is missing.');
  if (typeof value !== 'string' && typeof value !== 'number') fail('invalidSmsCode');
  return String(value);
}

/**
 * Issuing and consuming SMS codes: six digits from a CSPRNG, stored only as an HMAC keyed with
 * the server secret, limited per number in the database, delivered by the app's SMS provider.
 */
export class SmsCodes {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly secret: string;
  private readonly outbox: SmsSender;
  private readonly fetcher: typeof fetch | undefined;

  constructor(options: { store: Store; clock: Clock; secret: string; outboxDir: string; fetch?: typeof fetch }) {
    this.store = options.store;
    this.clock = options.clock;
    this.secret = options.secret;
    this.outbox = new OutboxSmsSender({ dir: options.outboxDir });
    this.fetcher = options.fetch;
  }

  /** Issues a code for `purpose` to `phone` and sends it; 601 past the limits, 602 when delivery fails. */
  async send(app: AppRecord, settings: AppSettings, phone: string, purpose: SmsPurpose, body: Record<string, unknown>, ttlDefault = smsCodeTtlMinutes): Promise<void> {
    // 1 to 30 whole minutes when given: the routes' schemas (src/http/routes/sms.ts) hold to it.
    const ttl = body.ttl === undefined || body.ttl === null ? ttlDefault : (body.ttl as number);
    const code = randomInt(0, 1_000_000).toString().padStart(6, '0');
    const now = this.clock.now();
    const refusal = await this.store.sms.issue(
      { appId: app.appId, phone, purpose, digest: this.digest(app.appId, code), expiresAt: now + ttl * 60_000 },
      now,
      smsLimits,
    );
    if (refusal === 'tooSoon') fail('smsTooFrequent', 'An SMS code was sent to this number less than a minute ago.');
    if (refusal === 'dailyLimit') fail('smsTooFrequent', 'This number has had ten SMS codes in the last 24 hours.');
    const name = typeof body.name === 'string' ? body.name : (settings.sms.signature ?? app.name);
    const what = typeof body.op === 'string' ? `code for ${body.op}` : purposeText[purpose];
    try {
      await this.sender(settings).send({
        appId: app.appId,
        appName: app.name,
        to: phone,
        code,
        purpose,
        ttlMinutes: ttl,
        type: body.smsType === 'voice' ? 'voice' : 'sms',
        text: `Your ${name} ${what} is ${code}. It expires in ${ttl} minutes.`,
        template: typeof body.template === 'string' ? body.template : null,
        sign: typeof body.sign === 'string' ? body.sign : settings.sms.signature,
      });
    } catch {
      fail('smsSendFailed');
    }
  }

  /** The phone of a consumed code, or null for a wrong, used or expired one. */
  async consume(appId: string, phone: string | null, purposes: SmsPurpose[], code: string): Promise<string | null> {
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

  private sender(settings: AppSettings): SmsSender {
    if (settings.sms.provider === 'webhook' && settings.sms.webhookUrl) {
      return new WebhookSmsSender({ url: settings.sms.webhookUrl, secret: settings.sms.webhookSecret, fetch: this.fetcher });
    }
    return this.outbox;
  }
}
