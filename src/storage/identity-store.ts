import type { JsonObject, StoredObject, WriteOutcome } from '../objects/types.ts';
import type { SessionSeal } from './account-store.ts';

/** One third-party account: the authData key it is stored under and its id on that platform. */
export interface Identity {
  platform: string;
  uid: string;
}

/** A third-party account together with the user it is bound to. */
export interface BoundIdentity extends Identity {
  userId: string;
}

/**
 * The platform keys whose accounts are named by `openid`: the hosted service's built-in names (its
 * mini-app sign-in stored `lc_weapp`/`lc_qqapp` entries by openid too). Every other key (`weixin_1`,
 * `wxleanoffice`, `weibo`, `lc_apple`, a custom name) is named by `uid`, as the hosted service's
 * unique index on `authData.<key>.<uid>` was.
 */
const openidPlatforms: ReadonlySet<string> = new Set(['weixin', 'qq', 'taptap', 'lc_weapp', 'lc_qqapp']);

/**
 * The fields that may name an entry's account, in the order they are read: `id` for anonymous,
 * `openid` for the built-in names, else `uid` and then `openid` (entries that clients always sent
 * named by openid keep signing in).
 */
export function identityFields(platform: string): readonly string[] {
  if (platform === 'anonymous') return ['id'];
  return openidPlatforms.has(platform) ? ['openid'] : ['uid', 'openid'];
}

/**
 * The identities an authData map holds, one per entry, read as identityFields says (and, for
 * stored entries that sign-in would refuse, any other of `uid`, `openid`, `id`), so the database
 * keeps one unique index on (application, platform, uid) whatever the platform and sign-in looks
 * up the very value that index holds. Entries without such a string are skipped.
 */
export function authDataIdentities(data: JsonObject): Identity[] {
  const authData = data.authData;
  if (typeof authData !== 'object' || authData === null || Array.isArray(authData)) return [];
  const out: Identity[] = [];
  for (const [platform, entry] of Object.entries(authData)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) continue;
    const fields = [...identityFields(platform), 'uid', 'openid', 'id'];
    const uid = fields.map((field) => entry[field]).find((value) => typeof value === 'string' && value !== '');
    if (typeof uid === 'string') out.push({ platform, uid });
  }
  return out;
}

/** The identities of imported objects, each with the position of its record; none outside `_User`. */
export function importedIdentities(className: string, objects: StoredObject[]): Array<Identity & { record: number }> {
  if (className !== '_User') return [];
  return objects.flatMap((object, record) => authDataIdentities(object.data).map((identity) => ({ record, ...identity })));
}

/**
 * Third-party identities of users. The identity rows follow each `_User` row's authData in
 * the same transaction (also on ordinary user updates and deletes), and a unique index on
 * (application, platform, uid) binds a third-party account to at most one user: the loser of
 * a race gets `{ok: false, reason: 'taken', field: 'authData'}`.
 */
export interface IdentityStore {
  /** The users bound to any of these identities. */
  findBound(appId: string, identities: Identity[]): Promise<BoundIdentity[]>;
  /** Inserts a `_User` with the identities of its authData and its first session; no password or a hash. */
  insertUser(appId: string, user: StoredObject, secrets: { passwordHash: string | null; session: SessionSeal }): Promise<WriteOutcome>;
}
