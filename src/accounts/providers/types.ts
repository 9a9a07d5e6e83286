import type { AuthProviderSettings } from '../../apps/third-party-settings.ts';
import type { JsonObject } from '../../objects/types.ts';

/** What a provider said about a token: accepted, refused, or not reachable. */
export type CheckResult = { ok: true } | { ok: false; reason: 'refused' | 'unreachable'; message: string };

/**
 * Checks one authData entry's token with its provider. `account` is the entry's id on the platform
 * as sign-in reads it (its openid or uid, whichever names the account under its key).
 */
export type TokenCheck = (
  entry: JsonObject,
  account: string,
  settings: AuthProviderSettings,
  fetcher: typeof fetch,
) => Promise<CheckResult>;

export const accepted: CheckResult = { ok: true };

export function refused(message: string): CheckResult {
  return { ok: false, reason: 'refused', message };
}

export function unreachable(message: string): CheckResult {
  return { ok: false, reason: 'unreachable', message };
}

/** Provider calls give up after this long; a slow provider must not hold a sign-in forever. */
export const providerTimeoutMs = 5000;

/** GETs or POSTs and reads a JSON body; null with the reason when the provider could not be asked. */
export async function callJson(
  fetcher: typeof fetch,
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: Record<string, unknown> } | { failure: string }> {
  try {
    const response = await fetcher(url, { ...init, signal: AbortSignal.timeout(providerTimeoutMs) });
    const text = await response.text();
    if (response.status >= 500) return { failure: `the provider answered HTTP ${response.status}` };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = {};
    }
    return { status: response.status, body: typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {} };
  } catch (error) {
    return { failure: (error as Error).name === 'TimeoutError' ? 'the provider did not answer in time' : 'the provider could not be reached' };
  }
}
