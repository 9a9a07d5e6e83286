import { ApiError, fail } from '../lib/errors.ts';
import { isoDate } from '../lib/clock.ts';
import type { AppSettings } from '../apps/settings.ts';
import { parseWriteBody, type WriteBody } from '../objects/service.ts';
import { toWire, type WireOptions } from '../objects/wire.ts';
import type { JsonObject, StoredObject } from '../objects/types.ts';
import { checkText, isObject, textProblem } from '../objects/values.ts';
import type { LoginField } from '../storage/account-store.ts';
import { maxPasswordLength } from './passwords.ts';
import { normalizePhone } from './phone.ts';
import type { Caller } from '../objects/acl.ts';
import { inHashMapOrder } from '../lib/hash-map-order.ts';

/** Keys that never leave the server in a user record, whatever is stored. */
const secretKeys = ['password', 'sessionToken', 'salt', '_hashed_password', 'passwordHash'];
/** Set by the server's own flows (verification, sign-in); clients may not write them. */
const verifiedKeys = ['emailVerified', 'mobilePhoneVerified'];
const emailPattern = /^[^\s@]+@[^\s@]+$/;
const loginFields: LoginField[] = ['username', 'email', 'mobilePhoneNumber'];

/**
 * Longest username and email, in UTF-16 code units (README "Limits"). Both are unique indexed columns:
 * at most 3 bytes a unit keeps a row far below PostgreSQL's 2,704-byte btree limit (beyond it an insert
 * fails), and about the hosted service's 1 KB for indexed strings. Phone numbers are E.164 (16 at most).
 */
export const maxUsernameLength = 256;
export const maxEmailLength = 320;

/** An address Roost stores or looks up: one '@', no spaces, at most maxEmailLength, storable text. */
export function isEmailAddress(value: unknown): value is string {
  return typeof value === 'string' && value.length <= maxEmailLength && emailPattern.test(value) && textProblem(value) === null;
}

/**
 * A user record as any client may see it: no password, hash or token; authData only for the
 * user itself and the master key (`viewer`), never to anyone else.
 */
export function toUserWire(user: StoredObject, options: WireOptions & { viewer?: Caller } = {}): JsonObject {
  const out = toWire(user, options);
  for (const key of secretKeys) delete out[key];
  const viewer = options.viewer;
  if (!viewer || (!viewer.master && viewer.userId !== user.objectId)) delete out.authData;
  // The hosted user record always held more than an array map's 8 entries (password hash, salt, flags, …):
  // every user it answered lists its keys in hash-map order (src/objects/wire.ts, insertionOrderedFields).
  return inHashMapOrder(out);
}

/** A user answer with its session token, in the order the hosted service gave both. */
export function withSessionToken(user: JsonObject, sessionToken: string): JsonObject {
  return inHashMapOrder({ ...user, sessionToken });
}

/** The login-type shape: the whole user plus its session token. */
export function toSessionWire(user: StoredObject, sessionToken: string): JsonObject {
  return withSessionToken(toUserWire(user, { viewer: { appId: '', master: false, userId: user.objectId } }), sessionToken);
}

/** What an update answers, and with the new token what refreshSessionToken and updatePassword answer (reference §3). */
export function updatedWire(user: StoredObject): JsonObject {
  return { updatedAt: isoDate(user.updatedAt), objectId: user.objectId };
}

/** The user fields SPEC §4.1 row 7 (after the hosted docs) lists in refreshSessionToken's answer. */
const refreshedUserFields = ['username', 'createdAt', 'emailVerified', 'mobilePhoneVerified'];

/**
 * refreshSessionToken's answer: what the hosted service was seen to answer ({updatedAt, objectId,
 * sessionToken}, reference §3) first, then the user fields its docs and SPEC §4.1 row 7 promise, so a
 * client written to either finds what it reads.
 */
export function refreshedWire(user: StoredObject, sessionToken: string): JsonObject {
  const out: JsonObject = { ...updatedWire(user), sessionToken };
  const whole = toUserWire(user);
  for (const field of refreshedUserFields) if (whole[field] !== undefined) out[field] = whole[field];
  return out;
}

/**
 * The fields of a user an update body touches, for touchedFields (src/objects/wire.ts): its keys'
 * top-level fields, emailVerified with the email (the server resets it), and authData with a first
 * password (which drops the anonymous entry). Secrets never leave: toUserWire has removed them.
 */
export function touchedUserFields(body: unknown): Set<string> {
  const touched = new Set<string>();
  if (!isObject(body)) return touched;
  for (const key of Object.keys(body)) {
    const root = key.split('.')[0];
    if (root === 'password') touched.add('authData');
    else touched.add(root);
    if (root === 'email') touched.add('emailVerified');
  }
  return touched;
}

/** Checks a password a client chose: missing is 201, anything but a non-blank string is 218. */
export function checkNewPassword(value: unknown): string {
  if (value === undefined || value === null) fail('passwordMissing');
  if (typeof value !== 'string' || value.trim() === '') fail('passwordBlank');
  if (value.length > maxPasswordLength) fail('passwordBlank', `Invalid password, it must be at most ${maxPasswordLength} characters.`);
  return value;
}

/**
 * The one filter of a user write body: which keys become fields of the user, for every sign-up kind
 * and every update. `password` is never a field (a sign-up takes it as the credential; afterwards
 * only updatePassword and the resets change it), `sessionToken` is ignored (SDKs echo it back),
 * the verification flags are the server's and the master key's, and authData is bound only by
 * the flows that check it. `flowKeys`: keys the calling flow reads itself (smsCode, authData).
 */
function userWriteBody(body: Record<string, unknown>, master: boolean, creating: boolean, flowKeys: readonly string[]): WriteBody {
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'sessionToken' || flowKeys.includes(key)) continue;
    if (key === 'password' && !creating) {
      fail('operationForbidden', 'The password can only be changed through PUT /1.1/users/<objectId>/updatePassword or a password reset.');
    }
    if (key === 'password') continue;
    const root = key.split('.')[0];
    if (root !== key && secretKeys.includes(root)) {
      fail('invalidKeyName', `Invalid key name '${key}': ${root} cannot be written through a dotted key.`);
    }
    if (root === 'authData') {
      fail('operationForbidden', `${key}: authData is bound only by an authData sign-in (POST /1.1/users with authData) or a link (PUT /1.1/users/<objectId>), which check it.`);
    }
    if (!master && verifiedKeys.includes(root)) {
      fail('operationForbidden', `${key} is set by the server's verification flows; only the master key may write it.`);
    }
    rest[key] = value;
  }
  return parseWriteBody(rest);
}

/** Checks the identity fields of a user's data once the write has been applied. */
export function checkUserData(data: JsonObject): void {
  if (data.username === undefined || data.username === null) fail('usernameMissing');
  if (typeof data.username !== 'string' || data.username.trim() === '') fail('usernameBlank');
  if (data.username.length > maxUsernameLength) {
    fail('usernameBlank', `Invalid username, it must be a non-blank string of at most ${maxUsernameLength} characters.`);
  }
  if (data.email !== undefined && data.email !== null) {
    if (typeof data.email === 'string' && data.email.length > maxEmailLength) {
      fail('invalidEmail', `The email address is invalid: it may be at most ${maxEmailLength} characters.`);
    }
    if (!isEmailAddress(data.email)) fail('invalidEmail');
  }
  if (data.mobilePhoneNumber !== undefined && data.mobilePhoneNumber !== null) {
    // Stored in E.164 form (a number without a country code is taken as +86), so every flow finds it.
    const phone = normalizePhone(data.mobilePhoneNumber);
    if (!phone) fail('invalidPhone', 'The mobile phone number is invalid: give it in E.164 form, like +8613800138000.');
    data.mobilePhoneNumber = phone;
  }
}

/** A sign-up body: the new user's fields, and its username and password as sent (each flow says which it needs). */
export interface SignupBody {
  write: WriteBody;
  username: unknown;
  password: unknown;
}

export function parseSignupBody(body: unknown, master: boolean, flowKeys: readonly string[]): SignupBody {
  if (!isObject(body)) fail('invalidJson');
  return { write: userWriteBody(body, master, true, flowKeys), username: body.username, password: body.password };
}

export function parseUpdateBody(body: unknown, master: boolean): WriteBody {
  const given = body ?? {};
  if (!isObject(given)) fail('invalidJson');
  return userWriteBody(given, master, false, []);
}

/** SPEC §3.1: an address set while verification is on starts unconfirmed, and the link is mailed. */
export function emailNeedsVerifying(user: StoredObject, settings: AppSettings): boolean {
  return settings.verifyEmailOnSignup && typeof user.data.email === 'string' && user.data.emailVerified === false;
}

/** emailVerified of a user whose email was just set (SPEC §3.1). */
export function emailVerifiedFor(email: unknown, settings: AppSettings): boolean | null {
  return settings.verifyEmailOnSignup && typeof email === 'string' ? false : null;
}

export interface LoginBody {
  field: LoginField;
  value: string;
  password: string;
}

/**
 * What POST /1.1/login's schema (src/http/routes/user-schemas.ts) lets through to a password login:
 * a non-empty password and exactly one identifier, a non-blank string (the others absent or null).
 */
export type LoginInput = Record<string, unknown> & { password: string };

export function parseLoginBody(body: LoginInput): LoginBody {
  const field = loginFields.find((name) => body[name] !== undefined && body[name] !== null)!;
  const value = body[field] as string;
  // The identifier is compared in SQL: text no store can hold is refused before it gets there.
  checkText(value);
  // No stored password is longer; refusing early keeps huge inputs from costing hashing time.
  if (body.password.length > maxPasswordLength) fail('passwordMismatch');
  const lookup = field === 'mobilePhoneNumber' ? (normalizePhone(value) ?? value) : value;
  return { field, value: lookup, password: body.password };
}
