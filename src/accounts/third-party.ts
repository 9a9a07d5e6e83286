import { customAlphabet } from 'nanoid';
import { fail } from '../lib/errors.ts';
import { own } from '../lib/lookup.ts';
import type { Clock } from '../lib/clock.ts';
import { mergeSettings, type AppSettings } from '../apps/settings.ts';
import { providerKinds, type ProviderKind } from '../apps/third-party-settings.ts';
import { settle } from '../objects/service.ts';
import type { JsonObject } from '../objects/types.ts';
import { isObject } from '../objects/values.ts';
import type { Store } from '../storage/store.ts';
import { lookupsOf, parseAuthData, parseEntry, withAuthData, type AuthDataChange, type AuthEntry } from './auth-data.ts';
import type { AccountCaller, SignedIn } from './caller.ts';
import { checkApple } from './providers/apple.ts';
import { checkQq, checkTaptap, checkWeibo, checkWeixin } from './providers/token-checks.ts';
import type { TokenCheck } from './providers/types.ts';
import type { SessionTokens } from './sessions.ts';
import type { UserCreation } from './user-creation.ts';
import { checkNewPassword } from './user-fields.ts';

/** 25 lowercase letters and digits, as the hosted service generates for third-party users. */
const randomUsername = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 25);
const tokenChecks: Record<ProviderKind, TokenCheck> = {
  weibo: checkWeibo,
  qq: checkQq,
  weixin: checkWeixin,
  apple: checkApple,
  taptap: checkTaptap,
};

/** What a user update does to authData and a first password, split off the rest of the body. */
export interface UpdatePlan {
  /** The body without the authData keys (and without a first password). */
  rest: Record<string, unknown>;
  change: AuthDataChange | null;
  /** A first password for a user who has none (third-party or anonymous). */
  password: string | null;
}

/**
 * Third-party accounts (SPEC §2.2, §4.1 rows 2, 10, 11): sign-in with authData, link and
 * unlink, anonymous users and union ids. Tokens are checked with the provider when the
 * application switches it on (settings.authProviders.<key>.validate).
 */
export class ThirdPartyAccounts {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly sessions: SessionTokens;
  private readonly creation: UserCreation;
  private readonly fetcher: typeof fetch;

  constructor(options: { store: Store; clock: Clock; sessions: SessionTokens; creation: UserCreation; fetch?: typeof fetch }) {
    this.store = options.store;
    this.clock = options.clock;
    this.sessions = options.sessions;
    this.creation = options.creation;
    this.fetcher = options.fetch ?? fetch;
  }

  /** POST /1.1/users with authData: the bound user (200) or a new one (201). */
  async signIn(caller: AccountCaller, body: unknown, options: { failOnNotExist: boolean }): Promise<SignedIn & { created: boolean }> {
    if (!isObject(body)) fail('invalidJson');
    const settings = mergeSettings(caller.app.settings);
    const entries = parseAuthData(body.authData, settings.authProviders);
    await this.verify(entries, settings);
    const { direct, union } = lookupsOf(entries);
    for (let attempt = 0; attempt < 5; attempt++) {
      const bound = await this.store.identities.findBound(caller.appId, [...direct, ...union]);
      const isDirect = (platform: string, uid: string) => direct.some((d) => d.platform === platform && d.uid === uid);
      const directUsers = new Set(bound.filter((b) => isDirect(b.platform, b.uid)).map((b) => b.userId));
      const unionUsers = new Set(bound.filter((b) => !isDirect(b.platform, b.uid)).map((b) => b.userId));
      if (directUsers.size > 1) fail('linkedElsewhere', 'The authData entries are bound to different users.');
      if (directUsers.size === 0 && unionUsers.size > 1) fail('linkedElsewhere', 'The union ids are bound to different users.');
      const target = [...directUsers][0] ?? [...unionUsers][0];
      if (target) {
        // Union entries another user holds stay with that user.
        const skipDerived = new Set(bound.filter((b) => b.userId !== target && !isDirect(b.platform, b.uid)).map((b) => b.platform));
        const signedIn = await this.signInExisting(caller.appId, target, { links: entries, unlinks: [], skipDerived });
        if (signedIn) return { ...signedIn, created: false };
        continue;
      }
      if (options.failOnNotExist) fail('userNotFound');
      const created = await this.create(caller, body, entries);
      if (created) return { ...created, created: true };
    }
    fail('linkedElsewhere', 'The third-party account was bound by another request meanwhile; try again.');
  }

  /**
   * Splits authData keys (link, unlink) and a first password off a user update body, checking
   * shapes and tokens before anything is written.
   */
  async prepareUpdate(caller: AccountCaller, userId: string, body: unknown): Promise<UpdatePlan> {
    if (!isObject(body)) return { rest: body as Record<string, unknown>, change: null, password: null };
    const settings = mergeSettings(caller.app.settings);
    const rest: Record<string, unknown> = {};
    const change: AuthDataChange = { links: [], unlinks: [] };
    let touched = false;
    for (const [key, value] of Object.entries(body)) {
      if (key === 'authData') {
        touched = true;
        if (isObject(value) && value.__op === 'Delete') change.unlinkAll = true;
        else if (!isObject(value)) fail('incorrectType', 'authData must be an object: { <platform>: { … } }.');
        else for (const [platform, entry] of Object.entries(value)) this.addChange(change, platform, entry, settings);
      } else if (key.startsWith('authData.')) {
        touched = true;
        this.addChange(change, key.slice('authData.'.length), value, settings);
      } else {
        rest[key] = value;
      }
    }
    let password: string | null = null;
    if (rest.password !== undefined) {
      const record = await this.store.accounts.findUser(caller.appId, { userId });
      if (record && record.passwordHash === null) {
        password = checkNewPassword(rest.password);
        delete rest.password;
        change.becomesRegular = true;
        touched = true;
      }
    }
    await this.verify(change.links, settings);
    return { rest, change: touched ? change : null, password };
  }

  private addChange(change: AuthDataChange, platform: string, value: unknown, settings: AppSettings): void {
    if (value === null || (isObject(value) && value.__op === 'Delete')) {
      if (!/^[A-Za-z0-9_]{1,80}$/.test(platform)) fail('invalidKeyName', `Invalid authData platform key '${platform}'.`);
      change.unlinks.push(platform);
      return;
    }
    change.links.push(parseEntry(platform, value, settings.authProviders));
  }

  /** Asks each provider the application switched on; refusal 251, provider down 503. */
  private async verify(entries: AuthEntry[], settings: AppSettings): Promise<void> {
    const checks = entries.flatMap((entry) => {
      const config = own(settings.authProviders, entry.key);
      if (!config?.validate || !(providerKinds as readonly string[]).includes(entry.kind)) return [];
      return [tokenChecks[entry.kind as ProviderKind](entry.value, entry.uid, config, this.fetcher).then((result) => ({ entry, result }))];
    });
    for (const { entry, result } of await Promise.all(checks)) {
      if (result.ok) continue;
      if (result.reason === 'unreachable') fail('unavailable', `The ${entry.key} token could not be checked: ${result.message}.`);
      fail('invalidLinkedSession', `${result.message} (authData.${entry.key})`);
    }
  }

  /** Refreshes the bound user's entries and signs it in; null when it vanished or lost a race. */
  private async signInExisting(appId: string, userId: string, change: AuthDataChange): Promise<SignedIn | null> {
    const ref = { appId, className: '_User', objectId: userId };
    const outcome = await this.store.updateObject(ref, (current) => {
      const data = withAuthData(current.data, change);
      if (JSON.stringify(data) === JSON.stringify(current.data)) return current;
      return { ...current, data, updatedAt: Math.max(this.clock.now(), current.updatedAt) };
    });
    if (!outcome.ok && (outcome.reason === 'notFound' || outcome.reason === 'taken')) return null;
    settle(outcome, ref);
    const record = await this.store.accounts.findUser(appId, { userId });
    if (!record) return null;
    return { user: record.user, sessionToken: await this.sessions.current(this.store.accounts, appId, record) };
  }

  /** A new user with a random username (or the one given); null when it lost a race and should look again. */
  private async create(caller: AccountCaller, body: Record<string, unknown>, entries: AuthEntry[]): Promise<SignedIn | null> {
    const withPassword = body.password !== undefined && body.password !== null;
    const created = await this.creation.create(caller, {
      body,
      flowKeys: ['authData'],
      passwordRequired: false,
      defaultUsername: randomUsername,
      finish: (data) => {
        const linked = withAuthData(data, { links: entries, unlinks: [] });
        // A password makes it a regular user: no longer anonymous (its authData stays, {} if that was all).
        if (withPassword && isObject(linked.authData)) delete (linked.authData as JsonObject).anonymous;
        return linked;
      },
    });
    const { outcome } = created;
    // Another request bound the identity, or the random username was taken: look again.
    if (!outcome.ok && outcome.reason === 'taken' && (outcome.field === 'authData' || (outcome.field === 'username' && created.usernameDefaulted))) {
      return null;
    }
    return { user: settle(outcome, created.user), sessionToken: created.sessionToken };
  }
}
