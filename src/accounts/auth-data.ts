import { fail } from '../lib/errors.ts';
import { own } from '../lib/lookup.ts';
import type { AuthProviders, ProviderKind } from '../apps/third-party-settings.ts';
import { identityFields, type Identity } from '../storage/identity-store.ts';
import type { Json, JsonObject } from '../objects/types.ts';
import { checkJson, isObject } from '../objects/values.ts';

/** SPEC §2.2 platform kinds: the five checkable ones, anonymous, and any other platform. */
export type PlatformKind = ProviderKind | 'anonymous' | 'other';

/** An authData entry from a request, checked for shape. */
export interface AuthEntry {
  key: string;
  kind: PlatformKind;
  value: JsonObject;
  uid: string;
  /** Union sign-in (chat B, micro-blog, social A): the derived entry's name and the union id. */
  union: { name: string; unionid: string; main: boolean } | null;
}

type FieldRule = 'string' | 'stringOrNumber' | { equals: string };

/** What a platform kind's entries must hold besides the field naming the account (identityFields). */
interface Shape {
  required: string[];
  fields: Record<string, FieldRule>;
  union: boolean;
}

const shapes: Record<PlatformKind, Shape> = {
  weibo: { required: ['access_token'], fields: { access_token: 'string', expiration_in: 'stringOrNumber' }, union: true },
  qq: { required: ['access_token'], fields: { access_token: 'string', expires_in: 'stringOrNumber' }, union: true },
  weixin: {
    required: ['access_token'],
    fields: { access_token: 'string', expires_in: 'stringOrNumber', refresh_token: 'string', scope: 'string' },
    union: true,
  },
  apple: { required: ['identity_token'], fields: { identity_token: 'string', code: 'string' }, union: false },
  taptap: {
    required: ['kid', 'access_token', 'mac_key'],
    fields: {
      kid: 'string',
      access_token: 'string',
      token_type: { equals: 'mac' },
      mac_key: 'string',
      mac_algorithm: { equals: 'hmac-sha-1' },
      name: 'string',
      avatar: 'string',
      unionid: 'string',
    },
    union: false,
  },
  anonymous: { required: [], fields: {}, union: false },
  other: { required: [], fields: { access_token: 'string' }, union: false },
};

const platformKeyPattern = /^[A-Za-z0-9][A-Za-z0-9_]{0,63}$/;
const unionPlatformPattern = /^[A-Za-z0-9][A-Za-z0-9_]{0,63}$/;
const lowercaseUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const derivedKey = /^_(.+)_unionid$/;
/** The hosted service's own platform names; any other key was a custom platform there. */
const builtinKeys: ReadonlySet<string> = new Set(['weibo', 'qq', 'weixin', 'lc_apple', 'apple', 'taptap', 'anonymous']);

/**
 * The kind of a platform key: as configured in authProviders.<key>.kind, else by the usual names
 * (weibo…, qq…, weixin… / wechat… / wx…, lc_apple, taptap…, anonymous: `weixinapp1` and
 * `wxminiprogram` are chat platform B), else by the entry: one named by `openid` without a `uid`
 * is chat platform B (any other platform names its accounts by `uid`, SPEC §2.2), else "any other".
 */
export function platformKind(key: string, providers: AuthProviders, value?: JsonObject): PlatformKind {
  const configured = own(providers, key)?.kind;
  if (configured) return configured;
  if (key === 'anonymous') return 'anonymous';
  if (key === 'lc_apple' || key === 'apple') return 'apple';
  const name = key.toLowerCase();
  if (name.startsWith('weibo')) return 'weibo';
  if (name.startsWith('qq') || name === 'lc_qqapp') return 'qq';
  if (name.startsWith('weixin') || name.startsWith('wechat') || name.startsWith('wx') || name === 'lc_weapp') return 'weixin';
  if (name.startsWith('taptap')) return 'taptap';
  if (value && typeof value.openid === 'string' && value.uid === undefined) return 'weixin';
  return 'other';
}

function checkField(key: string, field: string, value: unknown, rule: FieldRule): void {
  const where = `authData.${key}.${field}`;
  if (rule === 'string' && typeof value !== 'string') fail('incorrectType', `${where} must be a string.`);
  if (rule === 'stringOrNumber' && typeof value !== 'string' && typeof value !== 'number') {
    fail('incorrectType', `${where} must be a string or a number.`);
  }
  if (typeof rule === 'object' && value !== rule.equals) fail('incorrectType', `${where} must be "${rule.equals}".`);
}

function parseUnion(key: string, value: JsonObject): AuthEntry['union'] {
  if (value.unionid === undefined || value.unionid === null) return null;
  if (typeof value.unionid !== 'string' || value.unionid === '') fail('incorrectType', `authData.${key}.unionid must be a non-empty string.`);
  const platform = value.platform ?? key;
  if (typeof platform !== 'string' || !unionPlatformPattern.test(platform)) {
    fail('incorrectType', `authData.${key}.platform must be a name of letters, digits and underscores.`);
  }
  const main = value.main_account;
  if (main !== undefined && main !== null && typeof main !== 'boolean' && main !== 'true' && main !== 'false') {
    fail('incorrectType', `authData.${key}.main_account must be true or false.`);
  }
  return { name: `_${platform}_unionid`, unionid: value.unionid, main: main === true || main === 'true' };
}

/** Checks one entry against the shape of its platform kind (SPEC §2.2). */
export function parseEntry(key: string, raw: unknown, providers: AuthProviders): AuthEntry {
  if (!platformKeyPattern.test(key)) {
    fail('invalidKeyName', `Invalid authData platform key '${key}': letters, digits and underscores, not starting with "_".`);
  }
  if (!isObject(raw)) fail('incorrectType', `authData.${key} must be an object.`);
  const value = checkJson(raw) as JsonObject;
  const kind = platformKind(key, providers, value);
  const shape = shapes[kind];
  // The kind decides the checks; the key alone decides which field names the account, as the store reads it.
  const idField = identityFields(key).find((field) => value[field] !== undefined && value[field] !== null && value[field] !== '');
  if (!idField) {
    // The SDKs' mini-app sign-in (lc_weapp, lc_qqapp) sends only a login code for the server to exchange with the platform.
    if (typeof value.code === 'string') {
      const idName = identityFields(key)[0];
      fail('linkedIdMissing', `authData.${key} holds a login code, no ${idName}: Roost does not exchange mini-app login codes.`);
    }
    fail('linkedIdMissing', `authData.${key}.${identityFields(key)[0]} is missing.`);
  }
  const uid = value[idField];
  if (typeof uid !== 'string' || uid.length > 256) fail('incorrectType', `authData.${key}.${idField} must be a string.`);
  if (kind === 'anonymous') {
    if (!lowercaseUuid.test(uid)) fail('incorrectType', 'authData.anonymous.id must be a random UUID in lowercase hexadecimal.');
  }
  // A kind guessed from the name (weixin_1, wxleanoffice) or an openid keeps its type checks and union
  // ids, but, as for the custom platform the hosted service saw in it, nothing besides the id is required.
  if (builtinKeys.has(key) || own(providers, key)) {
    for (const field of shape.required) {
      if (value[field] === undefined || value[field] === null) fail('incorrectType', `authData.${key}.${field} is missing.`);
    }
  }
  for (const [field, rule] of Object.entries(shape.fields)) {
    if (value[field] !== undefined && value[field] !== null) checkField(key, field, value[field], rule);
  }
  // SPEC §2.2 rule 1: union sign-in only for the platforms that have it.
  return { key, kind, value, uid, union: shape.union ? parseUnion(key, value) : null };
}

/** A request's authData map: a non-empty object of entries. */
export function parseAuthData(raw: unknown, providers: AuthProviders): AuthEntry[] {
  if (!isObject(raw)) fail('incorrectType', 'authData must be an object: { <platform>: { … } }.');
  const entries = Object.entries(raw).map(([key, value]) => parseEntry(key, value, providers));
  if (entries.length === 0) fail('linkedIdMissing', 'authData holds no platform entry.');
  return entries;
}

/** The identities an entry is bound by, and those its union id may find a user by. */
export function lookupsOf(entries: AuthEntry[]): { direct: Identity[]; union: Identity[] } {
  return {
    direct: entries.map((entry) => ({ platform: entry.key, uid: entry.uid })),
    union: entries.flatMap((entry) => (entry.union ? [{ platform: entry.union.name, uid: entry.union.unionid }] : [])),
  };
}

function unionNameOf(key: string, value: Json): { name: string; unionid: string } | null {
  if (!isObject(value) || typeof value.unionid !== 'string') return null;
  const platform = typeof value.platform === 'string' ? value.platform : key;
  return { name: `_${platform}_unionid`, unionid: value.unionid };
}

export interface AuthDataChange {
  links: AuthEntry[];
  unlinks: string[];
  /** Unlink every platform (authData: {"__op": "Delete"}). */
  unlinkAll?: boolean;
  /** The user gets a password: it stops being anonymous. */
  becomesRegular?: boolean;
  /** Derived union entries not to write (held by another user). */
  skipDerived?: ReadonlySet<string>;
}

/**
 * The user's data after a change of its authData: links replace their platform's entry; a
 * main-account union entry adds `_<platform>_unionid: {uid}`; derived entries no remaining entry
 * carries are dropped; linking another platform or getting a password drops `anonymous`.
 */
export function withAuthData(data: JsonObject, change: AuthDataChange): JsonObject {
  const current = isObject(data.authData) && !change.unlinkAll ? (data.authData as JsonObject) : {};
  const authData: JsonObject = structuredClone(current);
  for (const key of change.unlinks) delete authData[key];
  for (const entry of change.links) authData[entry.key] = entry.value;
  for (const entry of change.links) {
    if (entry.union?.main && !change.skipDerived?.has(entry.union.name)) authData[entry.union.name] = { uid: entry.union.unionid };
  }
  if (change.unlinks.length > 0) {
    const carried = new Set<string>();
    for (const [key, value] of Object.entries(authData)) {
      const union = unionNameOf(key, value);
      if (union) carried.add(`${union.name}\0${union.unionid}`);
    }
    for (const [key, value] of Object.entries(authData)) {
      if (!derivedKey.test(key) || !isObject(value) || typeof value.uid !== 'string') continue;
      if (!carried.has(`${key}\0${value.uid}`)) delete authData[key];
    }
  }
  if (change.becomesRegular || change.links.some((entry) => entry.kind !== 'anonymous')) delete authData.anonymous;
  const next: JsonObject = { ...data, authData };
  if (Object.keys(authData).length === 0 && data.authData === undefined) delete next.authData;
  return next;
}
