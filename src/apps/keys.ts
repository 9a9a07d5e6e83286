import { newAppId, newAppKey } from '../lib/ids.ts';
import type { AppRecord } from '../objects/types.ts';

export interface AppKeys {
  appId: string;
  appKey: string;
  masterKey: string;
}

/**
 * Application ids as the hosted service issued them (24 alphanumerics, often with a region suffix:
 * `…-gzGzoHsz`, `…-MdYXbMMI`) and as Roost issues them. The same characters as every id a device or
 * a URL may carry (objects/values.ts isPlausibleId), so an id kept from the hosted service passes
 * every place an id is read: headers, the push channel's login, SQL parameters, Redis keys.
 */
export const appIdPattern = /^[A-Za-z0-9_-]{1,64}$/;
/** Keys are secrets: at least 16 characters (the service's and Roost's have 24); no `,`, which X-LC-Key and X-LC-Sign use as a separator. */
const keyPattern = /^[A-Za-z0-9_-]{16,64}$/;

export function isAppId(value: unknown): value is string {
  return typeof value === 'string' && appIdPattern.test(value);
}

export function newKeys(): AppKeys {
  return { appId: newAppId(), appKey: newAppKey(), masterKey: newAppKey() };
}

/** The keys an operator gave, completed with new ones; or why they cannot be an application's. */
export function keysFrom(given: Partial<AppKeys>): AppKeys | { refused: string } {
  const keys = { ...newKeys(), ...definedOnly(given) };
  if (!isAppId(keys.appId)) return { refused: 'the application id must be 1 to 64 letters, digits, "-" or "_"' };
  for (const name of ['appKey', 'masterKey'] as const) {
    if (!keyPattern.test(keys[name])) return { refused: `the ${name} must be 16 to 64 letters, digits, "-" or "_"` };
  }
  // The app key is public: were it the master key (or the public id), anyone would hold the master key.
  if (keys.masterKey === keys.appKey || keys.masterKey === keys.appId) return { refused: 'the masterKey must differ from the appKey and the application id' };
  if (keys.appKey === keys.appId) return { refused: 'the appKey must differ from the application id' };
  return keys;
}

function definedOnly(given: Partial<AppKeys>): Partial<AppKeys> {
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
}

/**
 * The keys of that kind accepted now: the current one, then any replaced by a rotation whose grace
 * period has not ended (`roost app rotate --grace`).
 */
export function acceptedKeys(app: AppRecord, kind: 'appKey' | 'masterKey', now: number): string[] {
  const keys = [app[kind]];
  for (const retired of app.retiredKeys) if (retired.kind === kind && retired.until > now) keys.push(retired.key);
  return keys;
}
