/**
 * vivo push (reference vendor-push §1.5): auth with appId, appKey, timestamp and
 * sign = md5(appId + appKey + timestamp + appSecret) → authToken (24 h), sent as header
 * `authToken`; JSON bodies; one device through /message/send, 2–1000 through
 * saveListPayload + pushToList; invalidUsers in the reply.
 */
import { createHash } from 'node:crypto';
import { asRecord, httpFailure, isNetworkFailure, post, str, type NetworkFailure, type Reply } from './http.ts';
import { contentTooLarge, deepMerge, displayTitle, truncate, ttlSeconds, vivoIntentUri } from './mapping.ts';
import type { AuthOutcome, BatchOutcome, Prepared, PushMessage, ProtocolContext, VendorProtocol } from './types.ts';

export const vivoCodes = {
  ok: 0,
  authTokenInvalid: 10000,
  totalQuota: 10070,
  rateLimit: 10072,
  batchPayloadCap: 10252,
  broadcastCap: 10254,
  illegalRegId: 10302,
} as const;

const quotaCodes = new Set<number>([vivoCodes.totalQuota, vivoCodes.batchPayloadCap, vivoCodes.broadcastCap]);

export function vivoSign(appId: string, appKey: string, timestamp: string, appSecret: string): string {
  return createHash('md5').update(appId + appKey + timestamp + appSecret, 'utf8').digest('hex');
}

/** vivo deduplicates on requestId: a retried batch keeps its id. */
function requestIdFor(notificationId: string, tokens: string[]): string {
  return createHash('sha1').update(`${notificationId}\n${tokens.join(',')}`).digest('hex');
}

/**
 * Rule 11: the click goes to the app page named in the message itself: skipType 4 with an
 * intent URI (scheme mixpushscheme, path /detail) carrying the custom keys as extra `content`.
 * data.vivo.skipType / skipContent replace it.
 */
export function vivoClick(message: PushMessage): Record<string, unknown> {
  return { skipType: 4, skipContent: vivoIntentUri(message.intentHost, message.custom) };
}

function classify(code: number, text: string, single: boolean): BatchOutcome | null {
  if (code === vivoCodes.ok) return null;
  if (code === vivoCodes.authTokenInvalid) return { kind: 'authExpired', error: `vivo ${code}: ${text}` };
  if (code === vivoCodes.rateLimit) return { kind: 'retry', error: `vivo ${code}: ${text}` };
  if (quotaCodes.has(code)) return { kind: 'quota', error: `vivo ${code}: ${text}` };
  if (code === vivoCodes.illegalRegId && single) return { kind: 'allInvalid', error: `vivo ${code}: the regId is invalid` };
  return { kind: 'failed', error: `vivo ${Number.isFinite(code) ? code : '?'}: ${text}` };
}

function readReply(reply: Reply | NetworkFailure): { outcome: BatchOutcome } | { answer: Record<string, unknown> } {
  if (isNetworkFailure(reply)) return { outcome: { kind: 'retry', error: reply.error } };
  const transient = httpFailure('vivo', reply);
  if (transient) return { outcome: transient };
  if (reply.json === null) return { outcome: { kind: 'failed', error: `vivo HTTP ${reply.status}: ${reply.text.slice(0, 200)}` } };
  return { answer: asRecord(reply.json) };
}

export const vivoProtocol: VendorProtocol = {
  vendor: 'vivo',
  maxBatch: 1000,
  passThrough: false,
  requiredFields: ['appId', 'appKey', 'appSecret'],
  defaultBaseUrl: 'https://api-push.vivo.com.cn',
  defaultAuthUrl: 'https://api-push.vivo.com.cn/message/auth',

  prepare(message: PushMessage, context: ProtocolContext): Prepared {
    const ttl = ttlSeconds(message.expiresAt, context.now(), 7 * 86400);
    const payload = deepMerge(
      {
        notifyType: 4,
        title: truncate(displayTitle(message), 40),
        content: truncate(message.body || displayTitle(message), 100),
        ...(ttl === null ? {} : { timeToLive: ttl }),
        ...vivoClick(message),
        networkType: -1,
        extra: { 'callback.param': message.notificationId },
      },
      message.options,
    );
    const tooLarge = contentTooLarge('vivo', payload);
    return tooLarge ? { ok: false, error: tooLarge } : { ok: true, content: payload };
  },

  async authenticate(context): Promise<AuthOutcome> {
    const { appId, appKey, appSecret } = context.credentials;
    const timestamp = String(context.now());
    const reply = await post(context.fetch, context.authUrl, {
      json: { appId, appKey, timestamp: Number(timestamp), sign: vivoSign(appId, appKey, timestamp, appSecret) },
    });
    const read = readReply(reply);
    if ('outcome' in read) return read.outcome.kind === 'retry' ? read.outcome : { kind: 'failed', error: (read.outcome as { error: string }).error };
    const code = Number(read.answer.result);
    const token = str(read.answer.authToken);
    if (code === vivoCodes.ok && token) return { kind: 'ok', token, expiresInMs: 24 * 3600_000 };
    if (code === vivoCodes.rateLimit) return { kind: 'retry', error: `vivo ${code}: ${str(read.answer.desc)}` };
    return { kind: 'failed', error: `vivo ${code}: ${str(read.answer.desc) || 'auth refused'}` };
  },

  async sendBatch(context, content, tokens, accessToken): Promise<BatchOutcome> {
    const headers = { authToken: accessToken ?? '' };
    const payload = content as Record<string, unknown>;
    const requestId = requestIdFor(str(asRecord(payload.extra)['callback.param']), tokens);
    if (tokens.length === 1) {
      const read = readReply(await post(context.fetch, `${context.baseUrl}/message/send`, { json: { ...payload, regId: tokens[0], requestId }, headers }));
      if ('outcome' in read) return read.outcome;
      return classify(Number(read.answer.result), str(read.answer.desc), true) ?? { kind: 'accepted' };
    }
    const saved = readReply(await post(context.fetch, `${context.baseUrl}/message/saveListPayload`, { json: { ...payload, requestId }, headers }));
    if ('outcome' in saved) return saved.outcome;
    const savedProblem = classify(Number(saved.answer.result), str(saved.answer.desc), false);
    if (savedProblem) return savedProblem;
    const taskId = str(saved.answer.taskId);
    const read = readReply(await post(context.fetch, `${context.baseUrl}/message/pushToList`, { json: { regIds: tokens, taskId, requestId }, headers }));
    if ('outcome' in read) return read.outcome;
    const problem = classify(Number(read.answer.result), str(read.answer.desc), false);
    if (problem) return problem;
    const invalid = (Array.isArray(read.answer.invalidUsers) ? read.answer.invalidUsers : []).map((user) => str(asRecord(user).userid)).filter(Boolean);
    return { kind: 'accepted', invalid };
  },
};
