import type { Clock } from '../lib/clock.ts';
import { hmacHex, randomToken } from '../lib/crypto.ts';
import { fail } from '../lib/errors.ts';
import type { Mailer } from '../mail/mailer.ts';
import { renderTemplate, templateFor } from '../mail/templates.ts';
import type { AppRecord, StoredObject } from '../objects/types.ts';
import { checkText } from '../objects/values.ts';
import type { MailTokenInfo, MailTokenKind, MailTokenStore } from '../storage/mail-token-store.ts';
import { isEmailAddress } from './user-fields.ts';

const hour = 60 * 60 * 1000;

/**
 * How long a mailed link works. Verification: one week (SPEC §8), and a newer mail does not
 * void an older link. Password reset: 24 hours, once; a successful reset voids the user's other reset links.
 */
export const mailLinkLifetimes: Record<MailTokenKind, number> = {
  verifyEmail: 7 * 24 * hour,
  passwordReset: 24 * hour,
};

/**
 * Against mail bombing: at most this many mails of one kind to one user in any hour (429 beyond),
 * counted and taken in one serialised store step, so it holds for requests at the same instant.
 */
export const mailsPerUserPerHour = 5;

/** Why a link did not work: never issued (or mistyped), too old, already used, or for an address the user no longer has. */
export type LinkFailure = 'unknown' | 'expired' | 'used' | 'changed' | 'userGone';

/** A failed link names its application when the token is known (for the page), and the token itself then. */
export type LinkFailed = { ok: false; reason: LinkFailure; appId: string | null; found?: MailTokenInfo };
export type LinkOutcome<T> = ({ ok: true } & T) | LinkFailed;

export const linkFailureMessages: Record<LinkFailure, string> = {
  unknown: 'The link is invalid. Check that it was copied completely.',
  expired: 'The link has expired.',
  used: 'The link has already been used.',
  changed: 'The email address of the account has changed since this link was sent.',
  userGone: 'The account of this link no longer exists.',
};

/** The logger methods the mail flows use (pino's shape). */
export interface FlowLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

const tokenPattern = /^[A-Za-z0-9_-]{16,128}$/;

/** The `{email}` body of requestEmailVerify and requestPasswordReset. */
/** {email}, as POST /1.1/requestEmailVerify and /1.1/requestPasswordReset declare it; its form is checked in parseEmailBody. */
export const emailBodySchema = {
  type: 'object',
  'x-error': 'invalidJson',
  required: ['email'],
  properties: {
    email: { 'x-missing': 'emailMissing', allOf: [{ not: { enum: [null, ''] }, 'x-error': 'emailMissing' }, { type: 'string', 'x-error': 'invalidEmail' }] },
  },
};

/** `body` has passed emailBodySchema. */
export function parseEmailBody(body: { email: string }): string {
  checkText(body.email);
  if (!isEmailAddress(body.email)) fail('invalidEmail');
  return body.email;
}

/**
 * Mailed one-time links: makes a token, keeps only its keyed digest, renders the application's
 * template and hands the mail to the mailer; later finds or consumes the token atomically.
 */
export class MailLinks {
  private readonly tokens: MailTokenStore;
  private readonly clock: Clock;
  private readonly secret: string;
  private readonly mailer: Mailer;
  private readonly publicUrl: () => string;
  private readonly logger: FlowLogger;

  constructor(options: {
    tokens: MailTokenStore;
    clock: Clock;
    secret: string;
    mailer: Mailer;
    /** Read at each mail, so the address can be set after the server started listening. */
    publicUrl: () => string;
    logger: FlowLogger;
  }) {
    if (!options.secret) throw new Error('MailLinks needs the server secret');
    this.tokens = options.tokens;
    this.clock = options.clock;
    this.secret = options.secret;
    this.mailer = options.mailer;
    this.publicUrl = options.publicUrl;
    this.logger = options.logger;
  }

  private digest(kind: MailTokenKind, token: string): string {
    return hmacHex(this.secret, `mail-link:${kind}:${token}`);
  }

  linkFor(kind: MailTokenKind, token: string): string {
    const path = kind === 'verifyEmail' ? '/1.1/verifyEmail/' : '/1/resetPassword/';
    return `${this.publicUrl()}${path}${token}`;
  }

  /**
   * Mails the user a new link to their current address. 'limited' when the user had enough
   * such mails this hour; throws when the mail could not be handed over.
   */
  async send(kind: MailTokenKind, app: AppRecord, user: StoredObject): Promise<'sent' | 'limited'> {
    const email = user.data.email;
    if (typeof email !== 'string') throw new Error('MailLinks.send needs a user with an email');
    const now = this.clock.now();
    const token = randomToken(24);
    const stored = await this.tokens.insertWithinLimit(
      {
        digest: this.digest(kind, token),
        kind,
        appId: app.appId,
        userId: user.objectId,
        email,
        createdAt: now,
        expiresAt: now + mailLinkLifetimes[kind],
      },
      { since: now - hour, max: mailsPerUserPerHour },
      now - mailLinkLifetimes[kind],
    );
    if (!stored) {
      this.logger.warn({ kind, appId: app.appId, userId: user.objectId }, 'mail not sent: hourly limit reached');
      return 'limited';
    }
    const username = typeof user.data.username === 'string' ? user.data.username : '';
    const variables = { appname: app.name, username, email, link: this.linkFor(kind, token) };
    const mail = renderTemplate(templateFor(kind, app.settings as Record<string, unknown>), variables);
    await this.mailer.send({ to: email, ...mail });
    this.logger.info({ kind, appId: app.appId, userId: user.objectId, via: this.mailer.destination }, 'mail sent');
    return 'sent';
  }

  /** Uses a token: exactly one caller gets a valid token, however many try at once. */
  async consume(kind: MailTokenKind, token: string): Promise<LinkOutcome<{ token: MailTokenInfo }>> {
    if (!tokenPattern.test(token)) return { ok: false, reason: 'unknown', appId: null };
    const digest = this.digest(kind, token);
    const used = await this.tokens.consume(kind, digest, this.clock.now());
    if (used) return { ok: true, token: used };
    return this.failureOf(await this.tokens.find(kind, digest));
  }

  /** Reads a token without using it. */
  async inspect(kind: MailTokenKind, token: string): Promise<LinkOutcome<{ token: MailTokenInfo }>> {
    if (!tokenPattern.test(token)) return { ok: false, reason: 'unknown', appId: null };
    const found = await this.tokens.find(kind, this.digest(kind, token));
    if (found && found.usedAt === null && found.expiresAt > this.clock.now()) return { ok: true, token: found };
    return this.failureOf(found);
  }

  revokeAll(kind: MailTokenKind, appId: string, userId: string): Promise<void> {
    return this.tokens.revokeAll(kind, appId, userId, this.clock.now());
  }

  private failureOf(found: MailTokenInfo | null): LinkFailed {
    if (!found) return { ok: false, reason: 'unknown', appId: null };
    return { ok: false, reason: found.usedAt !== null ? 'used' : 'expired', appId: found.appId, found };
  }
}

/** Sends a link for an explicit request: 429 past the hourly limit, 503 when the mail server fails. */
export async function sendOrFail(
  links: MailLinks,
  kind: MailTokenKind,
  app: AppRecord,
  user: StoredObject,
  logger: FlowLogger,
): Promise<void> {
  let outcome: 'sent' | 'limited';
  try {
    outcome = await links.send(kind, app, user);
  } catch (error) {
    logger.error(
      { kind, appId: app.appId, userId: user.objectId, error: error instanceof Error ? error.message : String(error) },
      'mail could not be sent',
    );
    fail('unavailable', 'The mail could not be sent. Try again later.');
  }
  if (outcome === 'limited') fail('rateLimited', 'Too many mails were sent to this user in the last hour. Try again later.');
}
