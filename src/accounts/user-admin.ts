import { fail } from '../lib/errors.ts';
import type { AppRecord, JsonObject, StoredObject } from '../objects/types.ts';
import { isPlausibleId } from '../objects/values.ts';
import { masterCallerOf } from '../objects/query-reach.ts';
import type { AccountStore, LoginField } from '../storage/account-store.ts';
import type { AccountCaller } from './caller.ts';
import type { PasswordReset } from './password-reset.ts';
import type { AccountService } from './service.ts';

/** A user as an operator sees it: the stored fields, authData reduced to each platform's account id. */
export interface UserView {
  user: StoredObject;
  /** When the login lock ends (ms); 0 when the user is not locked. */
  lockedUntil: number;
}

/** Fields of an authData entry that name the account; tokens and secrets beside them are never shown. */
const accountIdFields = ['uid', 'openid', 'unionid', 'id', 'user_id'];
const lookupFields: LoginField[] = ['username', 'email', 'mobilePhoneNumber'];
const maxQuery = 256;

function withoutAuthSecrets(user: StoredObject): StoredObject {
  const authData = user.data.authData;
  if (typeof authData !== 'object' || authData === null || Array.isArray(authData)) return user;
  const reduced: JsonObject = {};
  for (const [platform, entry] of Object.entries(authData)) {
    const ids = typeof entry === 'object' && entry !== null && !Array.isArray(entry)
      ? Object.fromEntries(Object.entries(entry).filter(([name]) => accountIdFields.includes(name)))
      : {};
    reduced[platform] = ids;
  }
  return { ...user, data: { ...user.data, authData: reduced } };
}

/**
 * What an operator does to an application's users from the console: find one by username, email,
 * phone or objectId (each an indexed lookup), read it without secrets, and the master-key changes
 * (verified flags, reset mail, session revocation, unlock, delete) through the same AccountService
 * and PasswordReset the REST API uses.
 */
export class UserAdmin {
  private readonly accounts: AccountService;
  private readonly store: AccountStore;
  private readonly reset: PasswordReset;

  constructor(options: { accounts: AccountService; store: AccountStore; reset: PasswordReset }) {
    this.accounts = options.accounts;
    this.store = options.store;
    this.reset = options.reset;
  }

  private master(app: AppRecord): AccountCaller {
    return { ...masterCallerOf(app), sessionToken: null, sessionUser: null, sessionVersion: null };
  }

  /** The users whose objectId, username, email or phone number is exactly `query`; at most one each. */
  async search(app: AppRecord, query: string): Promise<StoredObject[]> {
    const text = query.trim();
    if (text === '' || text.length > maxQuery) return [];
    const lookups = [
      ...(isPlausibleId(text) ? [this.store.findUser(app.appId, { userId: text })] : []),
      ...lookupFields.map((field) => this.store.findUser(app.appId, { field, value: text })),
    ];
    const found = new Map<string, StoredObject>();
    for (const record of await Promise.all(lookups)) if (record) found.set(record.user.objectId, withoutAuthSecrets(record.user));
    return [...found.values()];
  }

  async view(app: AppRecord, userId: string): Promise<UserView> {
    const record = await this.store.findUser(app.appId, { userId });
    if (!record) fail('userNotFound');
    return { user: withoutAuthSecrets(record.user), lockedUntil: await this.accounts.lockout.lockedUntil(app.appId, userId) };
  }

  async markVerified(app: AppRecord, userId: string, which: 'email' | 'phone'): Promise<void> {
    const { user } = await this.view(app, userId);
    const [field, flag] = which === 'email' ? ['email', 'emailVerified'] : ['mobilePhoneNumber', 'mobilePhoneVerified'];
    if (typeof user.data[field] !== 'string') fail(which === 'email' ? 'emailMissing' : 'phoneMissing');
    await this.accounts.update(this.master(app), userId, { [flag]: true });
  }

  /** Mails the reset link to the user's address, as POST /1.1/requestPasswordReset does. */
  async sendReset(app: AppRecord, userId: string): Promise<string> {
    const { user } = await this.view(app, userId);
    if (typeof user.data.email !== 'string') fail('emailMissing');
    await this.reset.request(app, { email: user.data.email });
    return user.data.email;
  }

  /** A new session token nobody holds: every device signed in as the user is signed out. */
  async revokeSessions(app: AppRecord, userId: string): Promise<void> {
    await this.accounts.refreshSessionToken(this.master(app), userId);
  }

  async unlock(app: AppRecord, userId: string): Promise<void> {
    await this.view(app, userId);
    await this.accounts.lockout.clear(app.appId, userId);
  }

  async delete(app: AppRecord, userId: string): Promise<void> {
    await this.view(app, userId);
    await this.accounts.remove(this.master(app), userId);
  }
}
