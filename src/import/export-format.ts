import secureJson from 'secure-json-parse';
import { ApiError } from '../lib/errors.ts';
import { encodeLegacyHash } from '../accounts/legacy-passwords.ts';
import { checkUserData } from '../accounts/user-fields.ts';
import { parseAcl } from '../objects/acl.ts';
import type { Operation } from '../objects/ops.ts';
import type { Acl, JsonObject } from '../objects/types.ts';
import { checkJson, fieldPath, invalidKey, isObject, isPlausibleId, parseIsoDate } from '../objects/values.ts';
import { checkInstallationOperations } from '../push/installations.ts';
import { defaultProfile } from '../push/routing.ts';
import type { SessionSeal } from '../storage/account-store.ts';
import type { ImportRecord } from '../storage/ops-store.ts';

/**
 * One line of the hosted service's data export (JSON lines, one object a line; see
 * docs/operations.md, "Import"), turned into what the store keeps. Server fields come out of
 * the data: `objectId`, `createdAt`/`updatedAt` (plain ISO strings or `{"__type":"Date","iso"}`),
 * `ACL`; for `_User` also `salt` + `password` (kept as a legacy hash) and `sessionToken`, handed
 * back beside the record (`session` null) to be sealed like Roost's own tokens once the import
 * knows the row is new (`sealSession`), so apps already signed in stay signed in.
 */
export type ParsedLine = { record: ImportRecord; sessionToken: string | null; warnings: string[] } | { error: string };

export interface LineContext {
  className: string;
  /** Epoch ms used for a missing createdAt. */
  now: number;
}

const userSecrets = ['password', 'salt', 'sessionToken'];
/** Longest session token carried over (the service issued 25 characters). */
const maxTokenLength = 256;

function timestamp(value: unknown, name: string): number | null | string {
  if (value === undefined || value === null) return null;
  const iso = isObject(value) && value.__type === 'Date' ? value.iso : value;
  const ms = parseIsoDate(iso);
  return ms === null ? `${name} is not an ISO 8601 date` : ms;
}

export function parseExportLine(line: string, context: LineContext): ParsedLine {
  let row: unknown;
  try {
    row = secureJson.parse(line, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    return { error: `not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!isObject(row)) return { error: 'not a JSON object' };
  const { objectId, createdAt, updatedAt, ACL, ...fields } = row;
  if (typeof objectId !== 'string' || !isPlausibleId(objectId)) return { error: 'objectId is missing or not 1 to 64 of [A-Za-z0-9_-]' };
  const created = timestamp(createdAt, 'createdAt');
  if (typeof created === 'string') return { error: created };
  const updated = timestamp(updatedAt, 'updatedAt');
  if (typeof updated === 'string') return { error: updated };
  let acl: Acl | null = null;
  if (ACL !== undefined && ACL !== null) {
    const parsed = parseAcl(ACL);
    if (parsed instanceof ApiError) return { error: parsed.message };
    acl = parsed;
  }
  // Some exporters tag rows as REST "Object"s; the tag is not a field.
  if (fields.__type === 'Object') {
    delete fields.__type;
    delete fields.className;
  }
  const isUser = context.className === '_User';
  const warnings: string[] = [];
  let passwordHash: string | null = null;
  let sessionToken: string | null = null;
  if (isUser) {
    if (fields.password !== undefined && fields.password !== null) {
      passwordHash = encodeLegacyHash(fields.salt, fields.password);
      if (passwordHash === null) warnings.push('password is not a salted SHA-512 hash of the documented scheme: imported without a password');
    }
    const token = fields.sessionToken;
    if (typeof token === 'string' && token !== '' && token.length <= maxTokenLength) sessionToken = token;
    for (const key of userSecrets) delete fields[key];
  }
  const data: JsonObject = {};
  try {
    for (const [key, value] of Object.entries(fields)) {
      fieldPath(key);
      if (key.includes('.')) invalidKey(key);
      data[key] = checkJson(value);
    }
    if (isUser) checkUserData(data);
    if (context.className === '_Installation') {
      const operations: Operation[] = Object.entries(data).map(([key, value]) => ({ kind: 'set', path: [key], value }));
      checkInstallationOperations(operations);
      if (data.deviceProfile === undefined) data.deviceProfile = defaultProfile;
    }
  } catch (error) {
    // Whatever one line holds, it is reported and skipped: an import never stops on a line.
    return { error: error instanceof Error ? error.message : String(error) };
  }
  const createdMs = created ?? updated ?? context.now;
  return {
    record: {
      object: { className: context.className, objectId, createdAt: createdMs, updatedAt: updated ?? createdMs, acl, data },
      passwordHash,
      session: null,
    },
    sessionToken,
    warnings,
  };
}

/** The record with its exported session token sealed (digest and encrypted copy), ready to store. */
export function sealSession(parsed: { record: ImportRecord; sessionToken: string | null }, seal: (token: string) => SessionSeal): ImportRecord {
  return parsed.sessionToken === null ? parsed.record : { ...parsed.record, session: seal(parsed.sessionToken) };
}
