import type { ClassSchemas } from '../objects/schemas.ts';
import { ApiError, fail } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { newObjectId } from '../lib/ids.ts';
import { mergeSettings, type AppSettings } from '../apps/settings.ts';
import { applyOperations, relationChanges } from '../objects/ops.ts';
import type { RelationChange } from '../storage/relation-store.ts';
import type { Acl, JsonObject, StoredObject, WriteOutcome } from '../objects/types.ts';
import type { Store } from '../storage/store.ts';
import type { AccountCaller, EmailToVerify } from './caller.ts';
import type { PasswordHasher } from './passwords.ts';
import type { SessionTokens } from './sessions.ts';
import { defaultAclFor } from '../objects/default-acl.ts';
import { checkNewPassword, checkUserData, emailNeedsVerifying, emailVerifiedFor, parseSignupBody } from './user-fields.ts';

/** What a sign-up flow adds to the client's body (password sign-up adds nothing). */
export interface NewUserPlan {
  body: unknown;
  /** Keys the flow reads itself (smsCode, authData): never fields of the user. */
  flowKeys?: readonly string[];
  /** Password sign-up needs one; SMS and authData sign-up take one when it is sent. */
  passwordRequired: boolean;
  /** The username when the body gives none (the phone number, a random name); without it one is required. */
  defaultUsername?: () => string;
  /** Fields the flow sets over the client's: the number a code proved, the authData a provider checked. */
  finish?: (data: JsonObject) => JsonObject;
}

/** A new user that passed every check: nothing hashed, consumed or written yet. */
export interface UserDraft {
  data: JsonObject;
  acl: Acl | undefined;
  password: string | null;
  settings: AppSettings;
  usernameDefaulted: boolean;
  /** AddRelation/RemoveRelation of the body, added once the user exists. */
  relations: RelationChange[];
}

/** The insert's outcome (a taken field is the flow's to answer), the user as written, and its first token. */
export interface Creation {
  outcome: WriteOutcome;
  user: StoredObject;
  sessionToken: string;
  /** The username was the flow's default, so a flow may retry with another when it is taken. */
  usernameDefaulted: boolean;
}

/**
 * The one way a user comes to exist, for every sign-up kind (password, SMS sign-up-or-login,
 * authData and anonymous sign-in): one body filter (user-fields.ts), the same checks and
 * defaults, the password hash, the first session, one insert, and the verification mail.
 */
export class UserCreation {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly schemas: ClassSchemas;
  private readonly sessions: SessionTokens;
  private readonly passwords: PasswordHasher;
  private readonly onEmailToVerify: EmailToVerify | undefined;

  constructor(options: {
    store: Store;
    clock: Clock;
    schemas: ClassSchemas;
    sessions: SessionTokens;
    passwords: PasswordHasher;
    onEmailToVerify?: EmailToVerify;
  }) {
    this.store = options.store;
    this.clock = options.clock;
    this.schemas = options.schemas;
    this.sessions = options.sessions;
    this.passwords = options.passwords;
    this.onEmailToVerify = options.onEmailToVerify;
  }

  /** Checks a sign-up body and builds the user; throws what a refused body answers. */
  prepare(caller: AccountCaller, plan: NewUserPlan): UserDraft {
    const { write, username, password } = parseSignupBody(plan.body, caller.master, plan.flowKeys ?? []);
    if (username === undefined || username === null) {
      if (!plan.defaultUsername) fail('usernameMissing');
    } else if (typeof username !== 'string' || username.trim() === '') {
      fail('usernameBlank');
    }
    const given = plan.passwordRequired || (password !== undefined && password !== null) ? checkNewPassword(password) : null;
    const applied = applyOperations({}, write.operations);
    if (applied instanceof ApiError) throw applied;
    let data = applied;
    const usernameDefaulted = (data.username === undefined || data.username === null) && plan.defaultUsername !== undefined;
    if (usernameDefaulted) data.username = plan.defaultUsername!();
    if (plan.finish) data = plan.finish(data);
    checkUserData(data);
    const settings = mergeSettings(caller.app.settings);
    if (!('emailVerified' in data)) data.emailVerified = emailVerifiedFor(data.email, settings);
    if (!('mobilePhoneVerified' in data)) data.mobilePhoneVerified = false;
    return { data, acl: write.acl, password: given, settings, usernameDefaulted, relations: relationChanges(write.operations) };
  }

  /** Hashes the password and inserts the user with its first session; a colliding random id gets one more try. */
  async insert(caller: AccountCaller, draft: UserDraft): Promise<Creation> {
    await this.schemas.checkData(caller.appId, '_User', draft.data);
    await this.checkRelations(caller.appId, draft.relations);
    const data = await this.schemas.withDefaults(caller.appId, '_User', draft.data);
    const passwordHash = draft.password === null ? null : await this.passwords.hash(draft.password);
    const now = this.clock.now();
    for (let attempt = 0; ; attempt++) {
      const objectId = newObjectId(now);
      const user: StoredObject = { className: '_User', objectId, createdAt: now, updatedAt: now, acl: draft.acl ?? defaultAclFor(draft.settings.classDefaultACL, '_User', objectId), data };
      const session = this.sessions.issue();
      // The identities verb: it binds the user's authData, of which a user without any has none.
      const outcome = await this.store.identities.insertUser(caller.appId, user, { passwordHash, session: session.seal });
      if (!outcome.ok && outcome.reason === 'taken' && outcome.field === 'objectId' && attempt === 0) continue;
      // The user is inserted with its identities and session in one statement of their own: its relations are added after.
      if (outcome.ok && draft.relations.length > 0) {
        const added = await this.store.relations.change({ appId: caller.appId, className: '_User', objectId }, draft.relations);
        if (!added.ok) fail('invalidRelation');
        this.schemas.knowRelations(caller.appId, '_User', draft.relations);
      }
      if (outcome.ok && emailNeedsVerifying(outcome.object, draft.settings)) this.onEmailToVerify?.(caller.app, outcome.object);
      return { outcome, user, sessionToken: session.token, usernameDefaulted: draft.usernameDefaulted };
    }
  }

  /** A relation op on a field known as a relation to another class is refused before the user is inserted, as a create's. */
  private async checkRelations(appId: string, changes: readonly RelationChange[]): Promise<void> {
    if (changes.length === 0) return;
    const known = await this.store.relations.keysOf(appId, '_User');
    for (const change of changes) {
      if (Object.hasOwn(known, change.key) && known[change.key] !== change.targetClass) fail('invalidRelation');
    }
  }

  create(caller: AccountCaller, plan: NewUserPlan): Promise<Creation> {
    return this.insert(caller, this.prepare(caller, plan));
  }
}
