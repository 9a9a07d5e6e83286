import { ApiError, fail } from '../lib/errors.ts';
import { dictionary, own, table } from '../lib/lookup.ts';
import { templatePartProblem, type TemplatePart } from '../mail/templates.ts';
import { checkTextDeep } from '../objects/values.ts';
import { validateClassDefaultAcls, type ClassDefaultAcls } from '../objects/default-acl.ts';
import {
  defaultSmsSettings,
  mapProviderSecrets,
  mapSmsSecret,
  validateAuthProviders,
  validateSmsSettings,
  type AuthProviders,
  type SmsSettings,
} from './third-party-settings.ts';
import { validateWebDomains } from './web-domains.ts';

/** Credentials of one phone maker's push service, as entered by the developer. */
export type VendorCredentials = Record<string, string>;
/** vendors.<deviceProfile>.<vendor> → credentials */
export type VendorSettings = Record<string, Record<string, VendorCredentials>>;

export interface AppSettings {
  verifyEmailOnSignup: boolean;
  preventLoginWithUnverifiedEmail: boolean;
  forceReloginOnPasswordChange: boolean;
  userQueryPermission: boolean;
  clientPushAllowed: boolean;
  commercial: boolean;
  mixedPush: boolean;
  androidIntentHostname: string | null;
  vendors: VendorSettings;
  /** Token checks of third-party sign-in, per authData platform key (src/apps/third-party-settings.ts). */
  authProviders: AuthProviders;
  /** How SMS codes are delivered. */
  sms: SmsSettings;
  /** Origins whose pages may call the API with the app key; empty: any (src/apps/web-domains.ts). */
  webSecurityDomains: string[];
  /** The ACL of objects created without one, per class (src/objects/default-acl.ts). */
  classDefaultACL: ClassDefaultAcls;
  /** Largest file an upload may hold; null: the server's FILE_MAX_BYTES (src/files/service.ts). */
  fileMaxBytes: number | null;
  /** Media types uploads may have (`image/png`, `image/*`); empty: any. */
  fileMimeTypes: string[];
  /**
   * Mail templates (src/mail/templates.ts): null uses the built-in text. Variables
   * {{appname}} {{username}} {{email}} {{link}}; each body must contain {{link}}.
   */
  verifyEmailSubject: string | null;
  verifyEmailText: string | null;
  verifyEmailHtml: string | null;
  passwordResetSubject: string | null;
  passwordResetText: string | null;
  passwordResetHtml: string | null;
}

export const defaultSettings: AppSettings = {
  verifyEmailOnSignup: false,
  preventLoginWithUnverifiedEmail: false,
  forceReloginOnPasswordChange: true,
  userQueryPermission: false,
  clientPushAllowed: false,
  commercial: false,
  mixedPush: false,
  androidIntentHostname: null,
  vendors: {},
  authProviders: {},
  sms: defaultSmsSettings,
  webSecurityDomains: [],
  classDefaultACL: {},
  fileMaxBytes: null,
  fileMimeTypes: [],
  verifyEmailSubject: null,
  verifyEmailText: null,
  verifyEmailHtml: null,
  passwordResetSubject: null,
  passwordResetText: null,
  passwordResetHtml: null,
};

/** Settings key → the part of a mail template it sets. */
const templateKeys = table<TemplatePart>({
  verifyEmailSubject: 'subject',
  verifyEmailText: 'text',
  verifyEmailHtml: 'html',
  passwordResetSubject: 'subject',
  passwordResetText: 'text',
  passwordResetHtml: 'html',
});

const booleanKeys = [
  'verifyEmailOnSignup',
  'preventLoginWithUnverifiedEmail',
  'forceReloginOnPasswordChange',
  'userQueryPermission',
  'clientPushAllowed',
  'commercial',
  'mixedPush',
] as const;

export const vendorNames = ['HMS', 'mi', 'mz', 'oppo', 'vivo', 'honor'] as const;
const mediaTypePattern = /^[A-Za-z0-9!#$&^_.+-]{1,64}\/([A-Za-z0-9!#$&^_.+-]{1,64}|\*)$/;
const profileName = /^[A-Za-z_][A-Za-z0-9_]*$/;
const hostname = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
/** Credential fields that are shown only masked. */
const secretField = /secret|key|password|token/i;
/** Fields that are configuration, not credentials, even though their names might look secret. */
const plainFields = new Set(['baseUrl', 'authUrl', 'appKeyClient']);

export function mergeSettings(stored: Partial<AppSettings> | null | undefined): AppSettings {
  return { ...defaultSettings, ...(stored ?? {}) };
}

function invalid(message: string): never {
  fail('incorrectType', message);
}

function validateVendors(value: unknown, current: VendorSettings): VendorSettings {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    invalid('vendors must be an object: { <deviceProfile>: { <vendor>: { <field>: <string> } } }.');
  }
  // Profiles and fields are the developer's names: kept in maps without a prototype.
  const next: VendorSettings = dictionary(structuredClone(current));
  for (const [profile, byVendor] of Object.entries(value as Record<string, unknown>)) {
    if (!profileName.test(profile)) invalid(`vendors: "${profile}" is not a valid device profile name.`);
    if (byVendor === null) {
      delete next[profile];
      continue;
    }
    if (typeof byVendor !== 'object' || Array.isArray(byVendor)) invalid(`vendors.${profile} must be an object.`);
    const profileEntry = (next[profile] ??= dictionary());
    for (const [vendor, creds] of Object.entries(byVendor as Record<string, unknown>)) {
      if (!(vendorNames as readonly string[]).includes(vendor)) {
        invalid(`vendors.${profile}: unknown vendor "${vendor}" (expected one of ${vendorNames.join(', ')}).`);
      }
      if (creds === null) {
        delete profileEntry[vendor];
        continue;
      }
      if (typeof creds !== 'object' || Array.isArray(creds)) invalid(`vendors.${profile}.${vendor} must be an object.`);
      const merged: VendorCredentials = dictionary(own(profileEntry, vendor));
      for (const [field, fieldValue] of Object.entries(creds as Record<string, unknown>)) {
        if (fieldValue === null) delete merged[field];
        else if (typeof fieldValue !== 'string') invalid(`vendors.${profile}.${vendor}.${field} must be a string.`);
        else merged[field] = fieldValue;
      }
      profileEntry[vendor] = merged;
    }
  }
  return next;
}

/**
 * Applies a partial settings change. Unknown keys and wrong types are refused;
 * vendor credentials merge field by field so a masked secret need not be sent back.
 */
export function applySettingsPatch(current: AppSettings, patch: unknown): AppSettings {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    fail('invalidJson', 'Settings must be a JSON object.');
  }
  // Settings are kept whole as JSON (jsonb on PostgreSQL): text no store can hold is refused first.
  checkTextDeep(patch);
  const next: AppSettings = structuredClone(current);
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if ((booleanKeys as readonly string[]).includes(key)) {
      if (typeof value !== 'boolean') invalid(`${key} must be true or false.`);
      (next as unknown as Record<string, boolean>)[key] = value;
    } else if (key === 'androidIntentHostname') {
      if (value !== null && (typeof value !== 'string' || !hostname.test(value))) {
        invalid('androidIntentHostname must be a host name (letters, digits, dots, hyphens) or null.');
      }
      next.androidIntentHostname = value as string | null;
    } else if (key === 'vendors') {
      next.vendors = validateVendors(value, current.vendors);
    } else if (key === 'authProviders') {
      next.authProviders = validateAuthProviders(value, current.authProviders);
    } else if (key === 'sms') {
      next.sms = validateSmsSettings(value, current.sms);
    } else if (key === 'webSecurityDomains') {
      next.webSecurityDomains = validateWebDomains(value);
    } else if (key === 'classDefaultACL') {
      next.classDefaultACL = validateClassDefaultAcls(value, current.classDefaultACL);
    } else if (key === 'fileMaxBytes') {
      if (value !== null && !(Number.isSafeInteger(value) && (value as number) >= 0)) invalid('fileMaxBytes must be a whole number of bytes or null.');
      next.fileMaxBytes = value as number | null;
    } else if (key === 'fileMimeTypes') {
      if (!Array.isArray(value) || !value.every((type) => typeof type === 'string' && mediaTypePattern.test(type))) {
        invalid('fileMimeTypes must be a list of media types such as "image/png" or "image/*".');
      }
      next.fileMimeTypes = (value as string[]).map((type) => type.toLowerCase());
    } else if (templateKeys[key]) {
      if (value !== null && typeof value !== 'string') invalid(`${key} must be a string or null (null: the built-in text).`);
      const problem = value === null ? null : templatePartProblem(templateKeys[key], value);
      if (problem) invalid(`${key} ${problem}.`);
      (next as unknown as Record<string, string | null>)[key] = value;
    } else {
      fail('invalidKeyName', `Unknown setting "${key}".`);
    }
  }
  if (next.mixedPush && !next.commercial) {
    throw new ApiError(
      'forbidden',
      'Mixed push is available to commercial applications only: set commercial to true before turning mixedPush on.',
    );
  }
  return next;
}

function mask(value: string): string {
  return value.length <= 4 ? '****' : `****${value.slice(-4)}`;
}

/** Whether a vendor credential field is a secret: masked to operators, sealed at rest, write-only in the console. */
export function isSecretVendorField(field: string): boolean {
  return secretField.test(field) && !plainFields.has(field);
}

/**
 * The settings with `change` applied to every secret in them: vendor credentials, sign-in provider
 * secrets, the SMS webhook secret. One list of what is secret, for masking (operators' view) and for
 * sealing (the store keeps them encrypted). Settings as stored may be partial.
 */
export function mapSecrets<S extends Partial<AppSettings>>(settings: S, change: (secret: string) => string): S {
  const next: S = { ...settings };
  if (settings.vendors) {
    const vendors: VendorSettings = dictionary();
    for (const [profile, byVendor] of Object.entries(settings.vendors)) {
      vendors[profile] = dictionary();
      for (const [vendor, creds] of Object.entries(byVendor)) {
        vendors[profile][vendor] = Object.fromEntries(
          Object.entries(creds).map(([field, value]) => [field, isSecretVendorField(field) && typeof value === 'string' ? change(value) : value]),
        );
      }
    }
    next.vendors = vendors;
  }
  if (settings.authProviders) next.authProviders = mapProviderSecrets(settings.authProviders, change);
  if (settings.sms) next.sms = mapSmsSecret(settings.sms, change);
  return next;
}

/** Settings as shown to operators: every credential secret masked. */
export function publicSettings(settings: AppSettings): AppSettings {
  return mapSecrets(settings, mask);
}
