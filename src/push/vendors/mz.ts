/**
 * Meizu Flyme push (reference vendor-push §1.6): no token; every request carries
 * sign = md5(params sorted by key as k=v, concatenated, + appSecret). Form-encoded,
 * ≤1000 pushIds comma-joined; per-target failures come back in the `value` map.
 */
import { createHash } from 'node:crypto';
import { asRecord, httpFailure, isNetworkFailure, post, str } from './http.ts';
import { contentTooLarge, deepMerge, displayTitle, truncate, ttlSeconds } from './mapping.ts';
import type { BatchOutcome, Prepared, PushMessage, ProtocolContext, VendorProtocol } from './types.ts';

/** Per-target codes meaning the pushId will never work again. */
const invalidCodes = new Set(['110002', '110003']);
/** Top-level codes worth another try: system error, busy, rate too high. */
const retryCodes = new Set(['500', '1001', '1003', '110010']);

export function meizuSign(params: Record<string, string>, appSecret: string): string {
  const text = Object.keys(params)
    .filter((key) => key !== 'sign')
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('');
  return createHash('md5').update(text + appSecret, 'utf8').digest('hex');
}

export const mzProtocol: VendorProtocol = {
  vendor: 'mz',
  maxBatch: 1000,
  // Pass-through is restricted and being closed (reference §1.6, leancloud-api §7): silent is dropped.
  passThrough: false,
  requiredFields: ['appId', 'appSecret'],
  defaultBaseUrl: 'https://server-api-push.meizu.com',
  defaultAuthUrl: null,

  prepare(message: PushMessage, context: ProtocolContext): Prepared {
    const ttl = ttlSeconds(message.expiresAt, context.now(), 72 * 3600);
    const messageJson = deepMerge(
      {
        noticeBarInfo: {
          noticeBarType: 0,
          title: truncate(displayTitle(message), 32),
          content: truncate(message.body || displayTitle(message), 100),
        },
        clickTypeInfo: { clickType: 0, parameters: message.custom },
        pushTimeInfo: { offLine: 1, validTime: ttl === null ? 24 : Math.max(1, Math.ceil(ttl / 3600)) },
        extra: { 'callback.param': message.notificationId },
      },
      message.options,
    );
    const tooLarge = contentTooLarge('mz', messageJson);
    return tooLarge ? { ok: false, error: tooLarge } : { ok: true, content: JSON.stringify(messageJson) };
  },

  async sendBatch(context, content, tokens): Promise<BatchOutcome> {
    const params: Record<string, string> = {
      appId: context.credentials.appId,
      pushIds: tokens.join(','),
      messageJson: content as string,
    };
    params.sign = meizuSign(params, context.credentials.appSecret);
    const reply = await post(context.fetch, `${context.baseUrl}/garcia/api/server/push/varnished/pushByPushId`, { form: params });
    if (isNetworkFailure(reply)) return { kind: 'retry', error: reply.error };
    const transient = httpFailure('mz', reply);
    if (transient) return transient;
    const answer = asRecord(reply.json);
    const code = str(answer.code);
    const text = str(answer.message);
    if (code === '200') {
      const invalid: string[] = [];
      const failed = new Map<string, string>();
      for (const [itemCode, ids] of Object.entries(asRecord(answer.value))) {
        if (!Array.isArray(ids)) continue;
        for (const id of ids.map(String)) {
          if (invalidCodes.has(itemCode)) invalid.push(id);
          else failed.set(id, `mz ${itemCode}: not delivered to this pushId`);
        }
      }
      return { kind: 'accepted', invalid, failed };
    }
    if (retryCodes.has(code)) return { kind: 'retry', error: `mz ${code}: ${text}` };
    return { kind: 'failed', error: `mz ${code || `HTTP ${reply.status}`}: ${text || reply.text.slice(0, 200)}` };
  },
};
