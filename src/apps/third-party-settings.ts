import { fail } from '../lib/errors.ts';
import { dictionary, own } from '../lib/lookup.ts';

/** Platform kinds of SPEC §2.2 whose tokens Roost can check with the provider. */
export const providerKinds = ['weibo', 'qq', 'weixin', 'apple', 'taptap'] as const;
export type ProviderKind = (typeof providerKinds)[number];

/** One authData platform key's provider check, as the developer configures it. */
export interface AuthProviderSettings {
  /** The platform kind of a custom key (for example "weixin" for "weixin_app2"). */
  kind?: ProviderKind | 'other';
  /** Check each token with the provider before a sign-in or link is accepted. */
  validate?: boolean;
  /** The provider's base URL (its real one by default). */
  baseUrl?: string;
  /** Micro-blog: the app key; social A: the app id the token must belong to. */
  appId?: string;
  appKey?: string;
  appSecret?: string;
  /** Device-maker identity: the audience of its tokens (the service or bundle id); game store: client id. */
  clientId?: string;
  /** Device-maker identity: the token issuer (https://appleid.apple.com by default). */
  issuer?: string;
}
export type AuthProviders = Record<string, AuthProviderSettings>;

export interface SmsSettings {
  /** outbox: files under SMS_OUTBOX_DIR; webhook: a signed POST to webhookUrl. */
  provider: 'outbox' | 'webhook';
  webhookUrl: string | null;
  webhookSecret: string | null;
  /** Shown in the message text, e.g. the app's name. */
  signature: string | null;
  /** Calling code of numbers written without one. */
  defaultCountryCode: string;
}

export const defaultSmsSettings: SmsSettings = {
  provider: 'outbox',
  webhookUrl: null,
  webhookSecret: null,
  signature: null,
  defaultCountryCode: '86',
};

const platformKey = /^[A-Za-z0-9_]{1,64}$/;
const stringFields = ['baseUrl', 'appId', 'appKey', 'appSecret', 'clientId', 'issuer'] as const;

function invalid(message: string): never {
  fail('incorrectType', message);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkUrl(value: string, what: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    invalid(`${what} must be an http(s) URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') invalid(`${what} must be an http(s) URL.`);
}

/** Merges a change of authProviders: per key, field by field; null removes a key or a field. */
export function validateAuthProviders(value: unknown, current: AuthProviders): AuthProviders {
  if (!isRecord(value)) invalid('authProviders must be an object: { <platform key>: { validate, baseUrl, … } }.');
  // Platform keys and fields are the developer's names: kept in maps without a prototype.
  const next: AuthProviders = dictionary(structuredClone(current));
  for (const [key, change] of Object.entries(value)) {
    if (!platformKey.test(key)) invalid(`authProviders: "${key}" is not a valid platform key.`);
    if (change === null) {
      delete next[key];
      continue;
    }
    if (!isRecord(change)) invalid(`authProviders.${key} must be an object.`);
    const merged: Record<string, unknown> = dictionary(own(next, key) as Record<string, unknown> | undefined);
    for (const [field, fieldValue] of Object.entries(change)) {
      const where = `authProviders.${key}.${field}`;
      if (fieldValue === null) delete merged[field];
      else if (field === 'validate') {
        if (typeof fieldValue !== 'boolean') invalid(`${where} must be true or false.`);
        merged.validate = fieldValue;
      } else if (field === 'kind') {
        if (fieldValue !== 'other' && !(providerKinds as readonly unknown[]).includes(fieldValue)) {
          invalid(`${where} must be one of ${providerKinds.join(', ')}, other.`);
        }
        merged.kind = fieldValue;
      } else if ((stringFields as readonly string[]).includes(field)) {
        if (typeof fieldValue !== 'string' || fieldValue === '' || fieldValue.length > 1024) invalid(`${where} must be a non-empty string.`);
        if (field === 'baseUrl' || field === 'issuer') checkUrl(fieldValue, where);
        merged[field] = field === 'baseUrl' ? fieldValue.replace(/\/+$/, '') : fieldValue;
      } else {
        fail('invalidKeyName', `Unknown field "${field}" in authProviders.${key}.`);
      }
    }
    next[key] = merged as AuthProviderSettings;
  }
  return next;
}

/** Merges a change of the SMS settings; null resets a field to its default. */
export function validateSmsSettings(value: unknown, current: SmsSettings): SmsSettings {
  if (!isRecord(value)) invalid('sms must be an object: { provider, webhookUrl, webhookSecret, signature, defaultCountryCode }.');
  const next: SmsSettings = { ...defaultSmsSettings, ...current };
  for (const [field, fieldValue] of Object.entries(value)) {
    const where = `sms.${field}`;
    if (!Object.hasOwn(defaultSmsSettings, field)) fail('invalidKeyName', `Unknown setting "${where}".`);
    if (fieldValue === null) {
      (next as unknown as Record<string, unknown>)[field] = defaultSmsSettings[field as keyof SmsSettings];
      continue;
    }
    if (typeof fieldValue !== 'string') invalid(`${where} must be a string.`);
    if (field === 'provider' && fieldValue !== 'outbox' && fieldValue !== 'webhook') invalid(`${where} must be "outbox" or "webhook".`);
    if (field === 'webhookUrl') checkUrl(fieldValue, where);
    if (field === 'defaultCountryCode' && !/^[1-9]\d{0,3}$/.test(fieldValue)) invalid(`${where} must be 1 to 4 digits, like "86".`);
    if (fieldValue.length > 1024) invalid(`${where} is too long.`);
    (next as unknown as Record<string, unknown>)[field] = fieldValue;
  }
  if (next.provider === 'webhook' && !next.webhookUrl) invalid('sms.webhookUrl is needed when sms.provider is "webhook".');
  return next;
}

export function mapProviderSecrets(providers: AuthProviders, change: (secret: string) => string): AuthProviders {
  return Object.fromEntries(
    Object.entries(providers).map(([key, entry]) => [key, entry.appSecret ? { ...entry, appSecret: change(entry.appSecret) } : entry]),
  );
}

export function mapSmsSecret(sms: SmsSettings, change: (secret: string) => string): SmsSettings {
  return sms.webhookSecret ? { ...sms, webhookSecret: change(sms.webhookSecret) } : sms;
}
