import { fail } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import type { AppRecord, StoredObject } from '../objects/types.ts';
import type { Store } from '../storage/store.ts';
import { parseEmailBody, sendOrFail, type FlowLogger, type LinkOutcome, type MailLinks } from './mail-links.ts';

/**
 * emailVerified (SPEC §3.1): the mail when an address needs confirming, requestEmailVerify,
 * and the link that sets the flag to true. Every link stays valid for one week, also after
 * newer mails; it is void once the user's address is another than the one it was sent to.
 */
export class EmailVerification {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly links: MailLinks;
  private readonly logger: FlowLogger;

  constructor(options: { store: Store; clock: Clock; links: MailLinks; logger: FlowLogger }) {
    this.store = options.store;
    this.clock = options.clock;
    this.links = options.links;
    this.logger = options.logger;
  }

  /**
   * The accounts module calls this when a user's address became unconfirmed while verification
   * is on (sign-up, email set or changed). The request does not wait for the mail: a slow or
   * failing mail server never fails a sign-up; the failure is logged and requestEmailVerify retries.
   */
  emailToVerify = (app: AppRecord, user: StoredObject): void => {
    this.links.send('verifyEmail', app, user).catch((error: unknown) => {
      this.logger.error(
        { appId: app.appId, userId: user.objectId, error: error instanceof Error ? error.message : String(error) },
        'verification mail could not be sent',
      );
    });
  };

  /** POST /1.1/requestEmailVerify: mails a new link (205 without such a user; nothing to do once verified). */
  async request(app: AppRecord, body: { email: string }): Promise<void> {
    const email = parseEmailBody(body);
    const record = await this.store.accounts.findUser(app.appId, { field: 'email', value: email });
    if (!record) fail('emailNotFound');
    // As for phone numbers: an address already confirmed is not mailed again.
    if (record.user.data.emailVerified === true) return;
    await sendOrFail(this.links, 'verifyEmail', app, record.user, this.logger);
  }

  /** Follows a link: emailVerified becomes true if the user still has the address it was sent to. */
  async verify(token: string): Promise<LinkOutcome<{ appId: string; user: StoredObject }>> {
    const used = await this.links.consume('verifyEmail', token);
    if (!used.ok) {
      // Following a link twice is no failure while it is valid and the address it confirmed is unchanged.
      const found = used.found;
      if (used.reason !== 'used' || !found || found.expiresAt <= this.clock.now()) return used;
      const record = await this.store.accounts.findUser(found.appId, { userId: found.userId });
      if (!record) return { ok: false, reason: 'userGone', appId: found.appId };
      const user = record.user;
      if (user.data.email === found.email && user.data.emailVerified === true) return { ok: true, appId: found.appId, user };
      return used;
    }
    const { appId, userId, email } = used.token;
    const ref = { appId, className: '_User', objectId: userId };
    const outcome = await this.store.updateObject(ref, (current) => {
      if (current.data.email !== email) return { refused: 'changed' as const };
      if (current.data.emailVerified === true) return current;
      return {
        ...current,
        data: { ...current.data, emailVerified: true },
        updatedAt: Math.max(this.clock.now(), current.updatedAt),
      };
    });
    if (outcome.ok) return { ok: true, appId, user: outcome.object };
    if (outcome.reason === 'refused') return { ok: false, reason: 'changed', appId };
    return { ok: false, reason: 'userGone', appId };
  }
}
