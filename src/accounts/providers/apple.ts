import type * as Jose from 'jose';
import { onFirstUse } from '../../lib/on-first-use.ts';
import { accepted, providerTimeoutMs, refused, unreachable, type TokenCheck } from './types.ts';

const jose = onFirstUse<typeof Jose>('jose');
const defaultIssuer = 'https://appleid.apple.com';
/** One key set per URL per process; jose refetches it when a token names a key it does not hold. */
const keySets = new Map<string, ReturnType<typeof Jose.createRemoteJWKSet>>();

function keySet(url: string): ReturnType<typeof Jose.createRemoteJWKSet> {
  let set = keySets.get(url);
  if (!set) {
    if (keySets.size > 100) keySets.clear();
    set = jose().createRemoteJWKSet(new URL(url), { timeoutDuration: providerTimeoutMs });
    keySets.set(url, set);
  }
  return set;
}

/**
 * Device-maker identity service: identity_token is a JWT signed with one of the keys the provider
 * publishes (JWKS at <baseUrl>/auth/keys); it must name the configured client id as audience,
 * the provider as issuer, the authData uid as subject, and not be expired.
 */
export const checkApple: TokenCheck = async (entry, account, settings) => {
  if (!settings.clientId) return refused('The identity-token check needs authProviders.<key>.clientId in the settings.');
  const base = settings.baseUrl ?? defaultIssuer;
  try {
    const { payload } = await jose().jwtVerify(String(entry.identity_token), keySet(`${base}/auth/keys`), {
      issuer: settings.issuer ?? defaultIssuer,
      audience: settings.clientId,
      algorithms: ['RS256', 'ES256'],
    });
    if (payload.sub !== account) return refused('The identity token belongs to another account.');
    return accepted;
  } catch (error) {
    if (error instanceof jose().errors.JWKSTimeout) return unreachable('the provider did not answer in time');
    if (error instanceof jose().errors.JWTExpired) return refused('The identity token has expired.');
    if (error instanceof jose().errors.JOSEError && !(error instanceof jose().errors.JWKSInvalid)) return refused('The identity token is invalid.');
    return unreachable('the provider could not be reached');
  }
};
