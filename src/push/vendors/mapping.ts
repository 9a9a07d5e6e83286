/**
 * From a push request's data to the maker-neutral PushMessage, and the pieces every maker's
 * message is built from: the rule-7 intent URI, limits, deep merge of pass-through objects.
 */
import type { PushMessage, VendorName } from './types.ts';

/** SPEC §4.3 rule 7: host when the app has no androidIntentHostname. */
export const defaultIntentHost = 'cn.leancloud.push';
/** SPEC §4.3 rule 7: the fixed push scheme of the intent URI. */
export const pushScheme = 'lcpushscheme';
/** Scheme and path of the vivo click intent (reference leancloud-api §7). */
export const vivoScheme = 'mixpushscheme';
export const vivoPath = '/detail';

/** SPEC §8: message content at most 4 KB. */
export const maxContentBytes = 4096;
/** SPEC §8: application package name at most 128 bytes. */
export const maxPackageNameBytes = 128;

/** Keys of data that are not the developer's custom properties. */
const reservedKeys = new Set([
  'alert',
  'title',
  'badge',
  'sound',
  'silent',
  'category',
  'thread-id',
  'content-available',
  'mutable-content',
  'collapse-id',
  'apns-priority',
  'apns-push-type',
  'aps',
  '_notificationChannel',
  '_profile',
  '_apns_team_id',
  'ios',
  'android',
  'fcm',
  'hms',
  'mi',
  'mz',
  'oppo',
  'vivo',
  'honor',
]);

/** Keys of a per-target object that change the content rather than being maker parameters. */
const contentKeys = new Set(['alert', 'title', 'badge', 'silent', 'sound']);

/** Name of the per-target override object in data for each maker. */
export const overrideKey: Record<VendorName, string> = {
  HMS: 'hms',
  mi: 'mi',
  mz: 'mz',
  oppo: 'oppo',
  vivo: 'vivo',
  honor: 'honor',
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Objects merge key by key; arrays and scalars from `over` replace. Neither input is changed. */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    const current = out[key];
    out[key] = isRecord(current) && isRecord(value) ? deepMerge(current, value) : value;
  }
  return out;
}

function alertText(alert: unknown): string {
  if (typeof alert === 'string') return alert;
  if (isRecord(alert) && typeof alert.body === 'string') return alert.body;
  if (alert === undefined || alert === null) return '';
  return String(alert);
}

function badgeOf(value: unknown): number | 'Increment' | undefined {
  if (value === 'Increment' || value === 'increment') return 'Increment';
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return undefined;
}

/** The developer's custom properties: data without the reserved push keys. */
export function customKeys(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (!reservedKeys.has(key)) out[key] = value;
  return out;
}

export interface MessageInput {
  vendor: VendorName;
  notificationId: string;
  data: Record<string, unknown>;
  /** The request's top-level `hms` object (SPEC §4.3 rule 9). */
  hms?: unknown;
  expiresAt: number | null;
  androidIntentHostname: string | null;
}

/**
 * Applies the per-target overrides (data.android, then data.<vendor>) and splits the result into
 * content and maker parameters.
 */
export function buildPushMessage(input: MessageInput): PushMessage {
  const android = isRecord(input.data.android) ? input.data.android : {};
  const perVendor = isRecord(input.data[overrideKey[input.vendor]]) ? (input.data[overrideKey[input.vendor]] as Record<string, unknown>) : {};
  const contentOverrides: Record<string, unknown> = {};
  let options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(perVendor)) {
    if (contentKeys.has(key)) contentOverrides[key] = value;
    else options[key] = value;
  }
  if (input.vendor === 'HMS' && isRecord(input.hms)) options = deepMerge(options, input.hms);
  const data = { ...input.data, ...android, ...contentOverrides };
  const title = data.title === undefined || data.title === null ? undefined : String(data.title);
  return {
    notificationId: input.notificationId,
    title,
    body: alertText(data.alert),
    silent: data.silent === true || data.silent === 'true',
    badge: badgeOf(data.badge),
    custom: customKeys(input.data),
    options,
    intentHost: input.androidIntentHostname || defaultIntentHost,
    expiresAt: input.expiresAt,
  };
}

/** SPEC §4.3 rule 7, character for character. */
export function intentUri(host: string, custom: Record<string, unknown>): string {
  const content = encodeURIComponent(JSON.stringify(custom));
  return `intent://${host}/notify_detail#Intent;scheme=${pushScheme};S.content=${content};launchFlags=0x10000000;end`;
}

/** The vivo click intent (rule 11): same content extra, vivo's scheme and path. */
export function vivoIntentUri(host: string, custom: Record<string, unknown>): string {
  const content = encodeURIComponent(JSON.stringify(custom));
  return `intent://${host}${vivoPath}#Intent;scheme=${vivoScheme};S.content=${content};launchFlags=0x10000000;end`;
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** SPEC §8: content over 4 KB is refused before it reaches the maker. */
export function contentTooLarge(vendor: VendorName, content: unknown): string | null {
  const size = byteLength(typeof content === 'string' ? content : JSON.stringify(content));
  return size > maxContentBytes
    ? `${vendor}: message content is ${size} bytes; phone makers accept at most ${maxContentBytes} bytes (4 KB).`
    : null;
}

/** SPEC §8: the package name configured for the maker must fit in 128 bytes. */
export function packageNameProblem(packageName: string | undefined): string | null {
  if (packageName === undefined || packageName === '') return null;
  const size = byteLength(packageName);
  return size > maxPackageNameBytes
    ? `packageName is ${size} bytes; phone makers accept an application package name of at most ${maxPackageNameBytes} bytes.`
    : null;
}

/** Seconds until expiry for a maker's time-to-live, clamped to [1, maxSeconds]; null when no expiry. */
export function ttlSeconds(expiresAt: number | null, now: number, maxSeconds: number): number | null {
  if (expiresAt === null) return null;
  return Math.min(maxSeconds, Math.max(1, Math.ceil((expiresAt - now) / 1000)));
}

/** The title to show: data.title, else the alert (makers refuse an empty title). */
export function displayTitle(message: PushMessage): string {
  return message.title !== undefined && message.title !== '' ? message.title : message.body;
}

export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}
