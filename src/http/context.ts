import { timingSafeEqual } from 'node:crypto';
import { acceptedKeys } from '../apps/keys.ts';
import type { FastifyRequest } from 'fastify';
import { ApiError, catalogue } from '../lib/errors.ts';
import { md5Hex, safeEqual } from '../lib/crypto.ts';
import type { Clock } from '../lib/clock.ts';
import type { AppRegistry } from '../apps/registry.ts';
import { originAllowed } from '../apps/web-domains.ts';
import type { Caller } from '../objects/acl.ts';
import { checkClassName } from '../objects/values.ts';
import type { AppRecord, SeenRow, StoredObject } from '../objects/types.ts';

/** What every /1.1 handler knows about the request once its keys have been checked. */
export interface RequestContext extends Caller {
  app: AppRecord;
  /** The session token sent, if any; `userId` is null when it is unknown or stale. */
  sessionToken: string | null;
  /** The token's user as this request's session lookup read it (users/me answers with it). */
  sessionUser: StoredObject | null;
  /** The store's version of sessionUser's row at that read (null if none): the user's update of itself writes against it. */
  sessionVersion: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

/** Resolves a session token to its user; issued by the accounts module. */
export type SessionResolver = (appId: string, token: string) => Promise<SeenRow | null>;

const signatureWindowMs = 15 * 60 * 1000;

function header(request: FastifyRequest, names: readonly string[]): string | null {
  for (const name of names) {
    const value = request.headers[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

const appIdHeaders = ['x-lc-id', 'x-svc-id', 'x-avoscloud-application-id'];
const keyHeaders = ['x-lc-key', 'x-svc-key', 'x-avoscloud-application-key'];
const signHeaders = ['x-lc-sign', 'x-svc-sign', 'x-avoscloud-request-sign'];
const sessionHeaders = ['x-lc-session', 'x-svc-session', 'x-avoscloud-session-token'];

/**
 * A signature's timestamp in ms. The hosted service documented milliseconds, but the PHP SDK signs with
 * `time()`, seconds, and worked against it: a timestamp of at most 10 digits is read as seconds (as ms it
 * would be before May 1970, stale either way), so both kinds meet the same window.
 */
function signedAtMs(timestamp: string): number {
  return timestamp.length <= 10 ? Number(timestamp) * 1000 : Number(timestamp);
}

/** Checks X-LC-Sign / X-SVC-Sign: md5hex(timestamp + key),timestamp[,master]. */
function checkSignature(sign: string, app: AppRecord, now: number): { master: boolean } | null {
  const [digest, timestamp, flag, ...rest] = sign.split(',');
  if (rest.length > 0 || !digest || !timestamp || (flag !== undefined && flag !== 'master')) return null;
  if (!/^\d{1,16}$/.test(timestamp) || Math.abs(now - signedAtMs(timestamp)) > signatureWindowMs) return null;
  const master = flag === 'master';
  const sent = digest.toLowerCase();
  return acceptedKeys(app, master ? 'masterKey' : 'appKey', now).some((key) => safeEqual(md5Hex(timestamp + key), sent)) ? { master } : null;
}

/**
 * An application's keys as bytes, by record. The registry replaces the record whenever it reads the
 * application again, so a changed key is never compared with old bytes, and they go with their records.
 */
const keyBytes = new WeakMap<AppRecord, { appKey: Buffer; masterKey: Buffer }>();

/**
 * Whether the key sent is the secret, in time that depends on the secret's length only: the key is written
 * into a buffer of that length (cut short or left zero-padded) and compared whole, then the lengths are.
 * Hashing both sides to compare them (safeEqual) costs an OpenSSL digest a request: 5-7% of a get-by-id's CPU
 * in the profile of b5eec76 for both, ~2-3% for the sent key's alone (bench/RESULTS.md, Accounts).
 */
function keyEquals(sent: string, secret: Buffer): boolean {
  const padded = Buffer.alloc(secret.length);
  padded.write(sent);
  return timingSafeEqual(padded, secret) && Buffer.byteLength(sent) === secret.length;
}

function keyMatches(sent: string, app: AppRecord, kind: 'appKey' | 'masterKey', now: number): boolean {
  let bytes = keyBytes.get(app);
  if (bytes === undefined) keyBytes.set(app, (bytes = { appKey: Buffer.from(app.appKey), masterKey: Buffer.from(app.masterKey) }));
  if (keyEquals(sent, bytes[kind])) return true;
  // Rare (a rotation's grace period): retired keys are read as bytes when compared.
  return acceptedKeys(app, kind, now).slice(1).some((key) => keyEquals(sent, Buffer.from(key)));
}

function checkKey(key: string, app: AppRecord, now: number): { master: boolean } | null {
  if (key.endsWith(',master')) return keyMatches(key.slice(0, -',master'.length), app, 'masterKey', now) ? { master: true } : null;
  return keyMatches(key, app, 'appKey', now) ? { master: false } : null;
}

/** The application a request names and whether it proved the master key; 401 when either is wrong. */
function proveCaller(request: FastifyRequest, app: AppRecord | null, now: number): { app: AppRecord; master: boolean } {
  if (!app) throw new ApiError('unauthorized');
  const sign = header(request, signHeaders);
  const key = header(request, keyHeaders);
  const proof = sign ? checkSignature(sign, app, now) : key ? checkKey(key, app, now) : null;
  if (!proof) throw new ApiError('unauthorized');
  return { app, master: proof.master };
}

/**
 * `GET /1.1/users/me?session_token=…`: the token to check, before any X-LC-Session. The PHP SDK asks this way
 * (`User::isAuthenticated`, with the current user's header beside it), and its suite expects the parameter's
 * token to be the one checked (211 for an unknown one while a good header is sent). Only on users/me.
 */
function legacySessionToken(request: FastifyRequest): string | null {
  if (request.routeOptions.url !== '/1.1/users/me') return null;
  const token = (request.query as Record<string, unknown> | undefined)?.session_token;
  return typeof token === 'string' && token !== '' ? token : null;
}

/**
 * The onRequest hook of every /1.1 route, one path for every request: a synchronous variant for
 * cached applications without a session measured within noise (bench/RESULTS.md, Objects).
 */
export function authenticate(options: { registry: AppRegistry; clock: Clock; resolveSession: SessionResolver }) {
  const { registry, clock, resolveSession } = options;
  return async function authenticateRequest(request: FastifyRequest): Promise<void> {
    const appId = header(request, appIdHeaders);
    const { app, master } = proveCaller(request, appId ? await registry.get(appId) : null, clock.now());
    // The domain list guards the public app key; whoever holds the master key can change the list anyway.
    const origin = request.headers.origin;
    if (!master && !originAllowed(app.settings.webSecurityDomains, origin)) {
      // The hosted service's words, including the missing space after the first full stop.
      throw new ApiError('originNotAllowed', `${catalogue.originNotAllowed.message}The request origin header is '${origin}'.`);
    }
    const sessionToken = legacySessionToken(request) ?? header(request, sessionHeaders);
    const session = sessionToken ? await resolveSession(app.appId, sessionToken) : null;
    const sessionUser = session?.object ?? null;
    request.ctx = { app, appId: app.appId, master, userId: sessionUser?.objectId ?? null, sessionToken, sessionUser, sessionVersion: session?.version ?? null };
  };
}

export function requireMaster(request: FastifyRequest): void {
  if (!request.ctx.master) throw new ApiError('masterKeyRequired');
}

/** The master key, then the class name of the path: what the class administration routes answer before their body. */
export async function requireMasterAndClass(request: FastifyRequest): Promise<void> {
  requireMaster(request);
  checkClassName((request.params as { className: string }).className);
}
