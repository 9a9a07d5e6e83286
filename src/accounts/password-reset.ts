import { fail } from '../lib/errors.ts';
import type { AppRecord } from '../objects/types.ts';
import type { Store } from '../storage/store.ts';
import type { AccountService } from './service.ts';
import type { Lockout } from './lockout.ts';
import { parseEmailBody, sendOrFail, type FlowLogger, type LinkOutcome, type MailLinks } from './mail-links.ts';
import { checkNewPassword } from './user-fields.ts';

/**
 * The forgot-password flow (SPEC §4.1 row 14, §3.3): requestPasswordReset mails a link; the
 * link's token sets a new password once (consumed atomically), within 24 hours, and only while the
 * user still has the address it was sent to. A reset replaces the session token (the old one is
 * rejected from then on), clears the login lock and voids the user's other reset links.
 */
export class PasswordReset {
  private readonly store: Store;
  private readonly links: MailLinks;
  private readonly accounts: AccountService;
  private readonly lockout: Lockout;
  private readonly logger: FlowLogger;

  constructor(options: { store: Store; links: MailLinks; accounts: AccountService; lockout: Lockout; logger: FlowLogger }) {
    this.store = options.store;
    this.links = options.links;
    this.accounts = options.accounts;
    this.lockout = options.lockout;
    this.logger = options.logger;
  }

  /** POST /1.1/requestPasswordReset: mails a link; 205 when no user has that address. */
  async request(app: AppRecord, body: { email: string }): Promise<void> {
    const email = parseEmailBody(body);
    const record = await this.store.accounts.findUser(app.appId, { field: 'email', value: email });
    if (!record) fail('emailNotFound');
    await sendOrFail(this.links, 'passwordReset', app, record.user, this.logger);
  }

  /** Whether a link can still be used, and whose it is (the form page shows the account's name). */
  async inspect(token: string): Promise<LinkOutcome<{ appId: string; username: string }>> {
    const found = await this.links.inspect('passwordReset', token);
    if (!found.ok) return found;
    const { appId, userId, email } = found.token;
    const record = await this.store.accounts.findUser(appId, { userId });
    if (!record) return { ok: false, reason: 'userGone', appId };
    if (record.user.data.email !== email) return { ok: false, reason: 'changed', appId };
    const username = typeof record.user.data.username === 'string' ? record.user.data.username : '';
    return { ok: true, appId, username };
  }

  /**
   * Sets the new password with a link's token. An unusable password throws its ApiError
   * (201, 218) before the token is touched, so a typo does not burn the link.
   */
  async reset(token: string, password: unknown): Promise<LinkOutcome<{ appId: string; userId: string }>> {
    const valid = checkNewPassword(password);
    const used = await this.links.consume('passwordReset', token);
    if (!used.ok) return used;
    const { appId, userId, email } = used.token;
    const record = await this.store.accounts.findUser(appId, { userId });
    if (!record) return { ok: false, reason: 'userGone', appId };
    if (record.user.data.email !== email) return { ok: false, reason: 'changed', appId };
    if (!(await this.accounts.setPassword(appId, userId, valid, { rotateSession: true }))) {
      return { ok: false, reason: 'userGone', appId };
    }
    await this.lockout.clear(appId, userId);
    await this.links.revokeAll('passwordReset', appId, userId);
    this.logger.info({ appId, userId }, 'password reset through a mailed link');
    return { ok: true, appId, userId };
  }
}
