import { fail } from '../lib/errors.ts';

/**
 * Web security domains, as the hosted console had them: the origins whose pages may call the API with
 * the app key. An empty list allows every origin. Entries are kept in the form browsers send in
 * `Origin` (lowercase, no default port), so a request is checked by one exact comparison.
 */
export const maxWebDomains = 100;

/** Pages served from the developer's own machine are always allowed, on any port. */
const localOrigin = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;

const example = 'origins such as "https://blog.example" or "http://blog.example:8080"';

function origin(entry: unknown): string {
  if (typeof entry !== 'string' || entry.length > 300) fail('incorrectType', `webSecurityDomains must be a list of ${example}.`);
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    fail('incorrectType', `webSecurityDomains: "${entry}" is not an origin; use ${example}.`);
  }
  // An origin is scheme, host and port only: a path, query, fragment or user name would never match.
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.href !== `${url.origin}/`) {
    fail('incorrectType', `webSecurityDomains: "${entry}" is not an origin (scheme://host[:port], nothing after); use ${example}.`);
  }
  if (url.hostname.includes('*')) fail('incorrectType', `webSecurityDomains: "${entry}" has a wildcard; list each origin exactly.`);
  return url.origin;
}

/** The list as stored: each entry checked and normalised, duplicates dropped; null clears the list. */
export function validateWebDomains(value: unknown): string[] {
  if (value === null) return [];
  if (!Array.isArray(value)) fail('incorrectType', `webSecurityDomains must be a list of ${example}.`);
  if (value.length > maxWebDomains) fail('incorrectType', `webSecurityDomains holds at most ${maxWebDomains} origins.`);
  return [...new Set(value.map(origin))];
}

/**
 * Whether a request from `requestOrigin` may go on. Requests without Origin (native apps, servers) are
 * not browser requests and are never refused.
 */
export function originAllowed(domains: readonly string[] | undefined, requestOrigin: string | undefined): boolean {
  if (!domains || domains.length === 0 || requestOrigin === undefined) return true;
  return domains.includes(requestOrigin) || localOrigin.test(requestOrigin);
}
