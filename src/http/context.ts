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

function header(request: FastifyRequest, ...names: string[]): string | null {
  for (const name of names) {
    const value = request.headers[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

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

export function authenticate(options: { registry: AppRegistry; clock: Clock; resolveSession: SessionResolver }) {
  return async function authenticateRequest(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const appId = header(request, 'x-lc-id', 'x-svc-id', 'x-avoscloud-application-id');
    const app = appId ? await options.registry.get(appId) : null;
    if (!app) throw new ApiError('unauthorized');
    const sign = header(request, 'x-lc-sign', 'x-svc-sign', 'x-avoscloud-request-sign');
    const key = header(request, 'x-lc-key', 'x-svc-key', 'x-avoscloud-application-key');
    const proof = sign ? checkSignature(sign, app, options.clock.now()) : key ? checkKey(key, app) : null;
    if (!proof) throw new ApiError('unauthorized');
    const sessionToken = header(request, 'x-lc-session', 'x-svc-session', 'x-avoscloud-session-token');
    const userId = sessionToken ? await options.resolveSession(app.appId, sessionToken) : null;
    request.ctx = { app, appId: app.appId, master: proof.master, userId, sessionToken };
  };
}

export function requireMaster(request: FastifyRequest): void {
  if (!request.ctx.master) throw new ApiError('masterKeyRequired');
}
