/**
 * OPPO push (reference vendor-push §1.4): auth with app_key, timestamp and
 * sign = sha256(appKey + timestamp + masterSecret) → auth_token (24 h); sends are form-encoded,
 * unicast_batch carries ≤1000 messages as a JSON string; only notification-bar messages (rule 10).
 */
import { createHash } from 'node:crypto';
import { asRecord, httpFailure, isNetworkFailure, post, str } from './http.ts';
import { contentTooLarge, displayTitle, truncate, ttlSeconds } from './mapping.ts';
import type { AuthOutcome, BatchOutcome, Prepared, PushMessage, ProtocolContext, VendorProtocol } from './types.ts';

export const oppoCodes = {
  ok: 0,
  unavailable: -1,
  flowControl: -2,
  invalidAuthToken: 11,
  callLimit: 13,
  badSign: 16,
  dailyCap: 33,
  invalidArgs: 41,
  frequency: 55,
  invalidRegistrationId: 10000,
} as const;

/** SPEC §4.3 rule 10: launch app, activity by intent action, web page, activity by class, intent scheme URL. */
export const oppoClickTypes = [0, 1, 2, 4, 5] as const;

export function oppoSign(appKey: string, timestamp: string, masterSecret: string): string {
  return createHash('sha256').update(appKey + timestamp + masterSecret, 'utf8').digest('hex');
}

function option(options: Record<string, unknown>, snake: string, camel: string): unknown {
  return options[snake] ?? options[camel];
}

/** Rule 10: the click behaviour chosen by the push parameter click_action_type (default 0). */
export function oppoClickAction(options: Record<string, unknown>): { ok: true; fields: Record<string, unknown> } | { ok: false; error: string } {
  const raw = option(options, 'click_action_type', 'clickActionType') ?? 0;
  const type = Number(raw);
  if (!(oppoClickTypes as readonly number[]).includes(type)) {
    return { ok: false, error: `oppo: click_action_type must be one of ${oppoClickTypes.join(', ')} (got ${JSON.stringify(raw)}).` };
  }
  const fields: Record<string, unknown> = { click_action_type: type };
  const activity = str(option(options, 'click_action_activity', 'clickActionActivity'));
  const url = str(option(options, 'click_action_url', 'clickActionUrl'));
  if (type === 1 || type === 4) {
    if (!activity) return { ok: false, error: `oppo: click_action_type ${type} needs click_action_activity (${type === 1 ? 'the intent action' : 'the activity class name'}).` };
    fields.click_action_activity = activity;
  }
  if (type === 2 || type === 5) {
    if (!url) return { ok: false, error: `oppo: click_action_type ${type} needs click_action_url.` };
    fields.click_action_url = url;
  }
  return { ok: true, fields };
}

const passThroughOptions = ['channel_id', 'sub_title', 'call_back_url', 'call_back_parameter', 'style', 'big_picture_id', 'small_picture_id', 'show_time_type', 'notify_level', 'category'];

export const oppoProtocol: VendorProtocol = {
  vendor: 'oppo',
  maxBatch: 1000,
  passThrough: false,
  requiredFields: ['appKey', 'masterSecret'],
  defaultBaseUrl: 'https://api.push.oppomobile.com',
  defaultAuthUrl: 'https://api.push.oppomobile.com/server/v1/auth',

  prepare(message: PushMessage, context: ProtocolContext): Prepared {
    const click = oppoClickAction(message.options);
    if (!click.ok) return click;
    const notification: Record<string, unknown> = {
      title: truncate(displayTitle(message), 50),
      content: truncate(message.body || displayTitle(message), 200),
      ...click.fields,
      action_parameters: JSON.stringify(message.custom),
      off_line: true,
    };
    const ttl = ttlSeconds(message.expiresAt, context.now(), 3 * 86400);
    if (ttl !== null) notification.off_line_ttl = ttl;
    for (const key of passThroughOptions) if (message.options[key] !== undefined) notification[key] = message.options[key];
    const tooLarge = contentTooLarge('oppo', notification) ?? (str(notification.action_parameters).length > 4096 ? 'oppo: action_parameters exceed 4 KB.' : null);
    // Serialized once: unicast_batch repeats it for each of up to 1000 targets.
    return tooLarge ? { ok: false, error: tooLarge } : { ok: true, content: JSON.stringify(notification) };
  },

  async authenticate(context): Promise<AuthOutcome> {
    const timestamp = String(context.now());
    const { appKey, masterSecret } = context.credentials;
    const reply = await post(context.fetch, context.authUrl, {
      form: { app_key: appKey, timestamp, sign: oppoSign(appKey, timestamp, masterSecret) },
    });
    if (isNetworkFailure(reply)) return { kind: 'retry', error: reply.error };
    const transient = httpFailure('oppo', reply);
    if (transient) return transient;
    const answer = asRecord(reply.json);
    const code = Number(answer.code);
    const token = str(asRecord(answer.data).auth_token);
    if (code === oppoCodes.ok && token) return { kind: 'ok', token, expiresInMs: 24 * 3600_000 };
    if (code === oppoCodes.flowControl || code === oppoCodes.unavailable) return { kind: 'retry', error: `oppo ${code}: ${str(answer.message)}` };
    return { kind: 'failed', error: `oppo ${Number.isFinite(code) ? code : `HTTP ${reply.status}`}: ${str(answer.message) || 'auth refused'}` };
  },

  async sendBatch(context, content, tokens, accessToken): Promise<BatchOutcome> {
    const notification = content as string;
    const messages = `[${tokens.map((token) => `{"target_type":2,"target_value":${JSON.stringify(token)},"notification":${notification}}`).join(',')}]`;
    const reply = await post(context.fetch, `${context.baseUrl}/server/v1/message/notification/unicast_batch`, {
      form: { messages },
      headers: { auth_token: accessToken ?? '' },
    });
    if (isNetworkFailure(reply)) return { kind: 'retry', error: reply.error };
    const transient = httpFailure('oppo', reply);
    if (transient) return transient;
    const answer = asRecord(reply.json);
    const code = Number(answer.code);
    const text = str(answer.message);
    switch (code) {
      case oppoCodes.ok: {
        const invalid: string[] = [];
        const failed = new Map<string, string>();
        for (const item of Array.isArray(answer.data) ? answer.data : []) {
          const entry = asRecord(item);
          const regId = str(entry.registrationId ?? entry.registration_id ?? entry.target_value);
          const itemCode = entry.errorCode === undefined || entry.errorCode === null ? null : Number(entry.errorCode);
          if (!regId || itemCode === null || itemCode === 0) continue;
          if (itemCode === oppoCodes.invalidRegistrationId) invalid.push(regId);
          else failed.set(regId, `oppo ${itemCode}: ${str(entry.errorMessage)}`);
        }
        return { kind: 'accepted', invalid, failed };
      }
      case oppoCodes.invalidAuthToken:
        return { kind: 'authExpired', error: `oppo ${code}: ${text}` };
      case oppoCodes.flowControl:
      case oppoCodes.unavailable:
      case oppoCodes.frequency:
        return { kind: 'retry', error: `oppo ${code}: ${text}` };
      case oppoCodes.dailyCap:
      case oppoCodes.callLimit:
        return { kind: 'quota', error: `oppo ${code}: ${text}` };
      default:
        return { kind: 'failed', error: `oppo ${Number.isFinite(code) ? code : `HTTP ${reply.status}`}: ${text || reply.text.slice(0, 200)}` };
    }
  },
};
