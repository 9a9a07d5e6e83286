/**
 * Xiaomi MiPush v3 (reference vendor-push §1.3): static header `Authorization: key=<AppSecret>`,
 * form-encoded, registration ids comma-joined (≤1000), bad_regids inside a successful reply.
 */
import { asRecord, httpFailure, isNetworkFailure, post, str } from './http.ts';
import { contentTooLarge, displayTitle, truncate, ttlSeconds } from './mapping.ts';
import type { BatchOutcome, Prepared, PushMessage, ProtocolContext, VendorProtocol } from './types.ts';

/** Codes a production sender retries (busy, remote error, called too often, request expired). */
const retryCodes = new Set([10002, 10003, 10027, 10037]);
/** Daily message cap. */
const quotaCodes = new Set([10034]);
/** Send failed: every target invalid. */
const allInvalidCode = 20301;

function scalar(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

export const miProtocol: VendorProtocol = {
  vendor: 'mi',
  maxBatch: 1000,
  passThrough: true,
  requiredFields: ['appId', 'appSecret', 'packageName'],
  defaultBaseUrl: 'https://api.xmpush.xiaomi.com',
  defaultAuthUrl: null,

  prepare(message: PushMessage, context: ProtocolContext): Prepared {
    const form: Record<string, string> = {
      // The payload string itself is URL-encoded, then the whole form is encoded once more.
      payload: encodeURIComponent(JSON.stringify(message.custom)),
      restricted_package_name: context.credentials.packageName,
      pass_through: message.silent ? '1' : '0',
      notify_id: String(Math.abs(hashCode(message.notificationId)) % 2_147_483_647),
    };
    if (!message.silent) {
      form.title = truncate(displayTitle(message), 49);
      form.description = truncate(message.body || displayTitle(message), 127);
      form.notify_type = '-1';
      form['extra.notify_effect'] = '1';
    }
    const ttl = ttlSeconds(message.expiresAt, context.now(), 14 * 86400);
    if (ttl !== null) form.time_to_live = String(ttl * 1000);
    // data.mi keys pass through as MiPush parameters (extra.channel_id, notify_foreground, …).
    for (const [key, value] of Object.entries(message.options)) {
      const text = scalar(value);
      if (text !== null && key !== 'registration_id') form[key] = text;
    }
    const tooLarge = contentTooLarge('mi', form);
    return tooLarge ? { ok: false, error: tooLarge } : { ok: true, content: form };
  },

  async sendBatch(context, content, tokens): Promise<BatchOutcome> {
    const form = { ...(content as Record<string, string>), registration_id: tokens.join(',') };
    const reply = await post(context.fetch, `${context.baseUrl}/v3/message/regid`, {
      form,
      headers: { Authorization: `key=${context.credentials.appSecret}` },
    });
    if (isNetworkFailure(reply)) return { kind: 'retry', error: reply.error };
    const transient = httpFailure('mi', reply);
    if (transient) return transient;
    const answer = asRecord(reply.json);
    const code = Number(answer.code);
    const reason = str(answer.reason) || str(answer.description);
    if (answer.result === 'ok' && code === 0) {
      const bad = str(asRecord(answer.data).bad_regids);
      return { kind: 'accepted', invalid: bad ? bad.split(',').filter(Boolean) : [] };
    }
    if (retryCodes.has(code)) return { kind: 'retry', error: `mi ${code}: ${reason}` };
    if (quotaCodes.has(code)) return { kind: 'quota', error: `mi ${code}: ${reason}` };
    if (code === allInvalidCode) return { kind: 'allInvalid', error: `mi ${code}: every registration id of the request is invalid` };
    return { kind: 'failed', error: `mi ${Number.isFinite(code) ? code : `HTTP ${reply.status}`}: ${reason || reply.text.slice(0, 200)}` };
  },
};

function hashCode(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(31, hash) + text.charCodeAt(i)) | 0;
  return hash;
}
