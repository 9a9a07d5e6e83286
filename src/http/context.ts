import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors.ts';
import { md5Hex, safeEqual } from '../lib/crypto.ts';
import type { Clock } from '../lib/clock.ts';
import type { AppRegistry } from '../apps/registry.ts';
import type { Caller } from '../objects/acl.ts';
import type { AppRecord } from '../objects/types.ts';

/** What every /1.1 handler knows about the request once its keys have been checked. */
export interface RequestContext extends Caller {
  app: AppRecord;
  /** The session token sent, if any; `userId` is null when it is unknown or stale. */
  sessionToken: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

/** Resolves a session token to its user; issued by the accounts module. */
export type SessionResolver = (appId: string, token: string) => Promise<string | null>;

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

/** Checks X-LC-Sign / X-SVC-Sign: md5hex(timestamp + key),timestamp[,master]. */
function checkSignature(sign: string, app: AppRecord, now: number): { master: boolean } | null {
  const [digest, timestamp, flag, ...rest] = sign.split(',');
  if (rest.length > 0 || !digest || !timestamp || (flag !== undefined && flag !== 'master')) return null;
  if (!/^\d{1,16}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > signatureWindowMs) return null;
  const master = flag === 'master';
  const expected = md5Hex(timestamp + (master ? app.masterKey : app.appKey));
  return safeEqual(expected, digest.toLowerCase()) ? { master } : null;
}

/**
 * SHA-256 of the applications' keys, kept so that a request hashes only the key it brings
 * (hashing both sides on every request was ~5% of a get-by-id's CPU, bench/RESULTS.md).
 */
const keyDigests = new Map<string, Buffer>();

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Same answer and the same constant-time comparison as safeEqual(provided, secret). */
function keyEquals(provided: string, secret: string): boolean {
  let expected = keyDigests.get(secret);
  if (expected === undefined) {
    expected = sha256(secret);
    if (keyDigests.size >= 10_000) keyDigests.clear();
    keyDigests.set(secret, expected);
  }
  return timingSafeEqual(sha256(provided), expected) && provided.length === secret.length;
}

function compareKey(key: string, app: AppRecord): { master: boolean } | null {
  if (key.endsWith(',master')) return keyEquals(key.slice(0, -',master'.length), app.masterKey) ? { master: true } : null;
  return keyEquals(key, app.appKey) ? { master: false } : null;
}

const appKeyProof = { master: false };
const masterKeyProof = { master: true };

/**
 * Key headers already proven against an application record, with what they proved. Clients
 * send the same header on every request, so the digest and comparison run once per record
 * instead of per request (bench/RESULTS.md, Objects). Keyed by the record object, which the
 * registry replaces whenever it reads the application again (APP_CACHE_MS), so a changed key
 * is never answered from here. Only successes are kept: a wrong key always takes the full
 * constant-time comparison, and the lookup compares what was sent only with headers that
 * were themselves proven.
 */
const provenKeys = new WeakMap<AppRecord, Map<string, boolean>>();

function checkKey(key: string, app: AppRecord): { master: boolean } | null {
  const proven = provenKeys.get(app)?.get(key);
  if (proven !== undefined) return proven ? masterKeyProof : appKeyProof;
  const proof = compareKey(key, app);
  if (proof) {
    let keys = provenKeys.get(app);
    if (keys === undefined) provenKeys.set(app, (keys = new Map()));
    keys.set(key, proof.master);
  }
  return proof;
}

/** The application a request names and whether it proved the master key; 401 when either is wrong. */
function proveCaller(request: FastifyRequest, app: AppRecord | null, now: number): { app: AppRecord; master: boolean } {
  if (!app) throw new ApiError('unauthorized');
  const sign = header(request, signHeaders);
  const key = header(request, keyHeaders);
  const proof = sign ? checkSignature(sign, app, now) : key ? checkKey(key, app) : null;
  if (!proof) throw new ApiError('unauthorized');
  return { app, master: proof.master };
}

export function authenticate(options: { registry: AppRegistry; clock: Clock; resolveSession: SessionResolver }) {
  const { registry, clock, resolveSession } = options;

  async function authenticateFully(request: FastifyRequest): Promise<void> {
    const appId = header(request, appIdHeaders);
    const { app, master } = proveCaller(request, appId ? await registry.get(appId) : null, clock.now());
    const sessionToken = header(request, sessionHeaders);
    const userId = sessionToken ? await resolveSession(app.appId, sessionToken) : null;
    request.ctx = { app, appId: app.appId, master, userId, sessionToken };
  }

  // A callback hook: a request without a session whose application is in the registry's cache (nearly
  // all of them) is decided without a promise or a turn of the event loop; every other takes the full path.
  return function authenticateRequest(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    const appId = header(request, appIdHeaders);
    const known = appId ? registry.cached(appId) : null;
    if (known === undefined || header(request, sessionHeaders) !== null) {
      authenticateFully(request).then(() => done(), done);
      return;
    }
    let caller: { app: AppRecord; master: boolean };
    try {
      caller = proveCaller(request, known, clock.now());
    } catch (error) {
      done(error as Error);
      return;
    }
    request.ctx = { app: caller.app, appId: caller.app.appId, master: caller.master, userId: null, sessionToken: null };
    done();
  };
}

export function requireMaster(request: FastifyRequest): void {
  if (!request.ctx.master) throw new ApiError('masterKeyRequired');
}
