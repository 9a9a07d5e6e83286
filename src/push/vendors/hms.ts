/**
 * Huawei HMS Push Kit v1 (reference vendor-push §1.2): OAuth2 client credentials, JSON body,
 * up to 1000 tokens, codes 80000000 / 80100000 (partial, msg lists illegal_tokens) / 80300007.
 */
import { asRecord, httpFailure, isNetworkFailure, post, str } from './http.ts';
import { contentTooLarge, deepMerge, displayTitle, intentUri, ttlSeconds } from './mapping.ts';
import type { AuthOutcome, BatchOutcome, Prepared, ProtocolContext, PushMessage, VendorProtocol } from './types.ts';

export const hmsCodes = {
  ok: '80000000',
  partial: '80100000',
  oauthError: '80200001',
  oauthExpired: '80200003',
  allInvalid: '80300007',
  tooLarge: '80300008',
  tokenCount: '80300010',
  internal: '81000001',
} as const;

/** OAuth token request shared by HMS and Honor (form client_credentials → access_token). */
export async function oauthClientCredentials(
  vendor: string,
  context: ProtocolContext,
  clientId: string,
  clientSecret: string,
): Promise<AuthOutcome> {
  const reply = await post(context.fetch, context.authUrl, {
    form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  });
  if (isNetworkFailure(reply)) return { kind: 'retry', error: reply.error };
  const transient = httpFailure(vendor, reply);
  if (transient) return transient;
  const body = asRecord(reply.json);
  const token = str(body.access_token);
  if (reply.status !== 200 || !token) {
    const reason = str(body.error_description) || str(body.error) || `HTTP ${reply.status}`;
    return { kind: 'failed', error: `token request refused: ${reason}` };
  }
  const seconds = Number(body.expires_in);
  return { kind: 'ok', token, expiresInMs: (Number.isFinite(seconds) && seconds > 0 ? seconds : 3600) * 1000 };
}

/** The illegal tokens inside an 80100000 reply, whose msg is itself JSON. */
function illegalTokens(msg: unknown): string[] {
  try {
    const parsed = asRecord(typeof msg === 'string' ? JSON.parse(msg) : msg);
    const list = parsed.illegal_tokens ?? parsed.illegalTokens;
    return Array.isArray(list) ? list.map(String) : [];
  } catch {
    return [];
  }
}

export const hmsProtocol: VendorProtocol = {
  vendor: 'HMS',
  maxBatch: 1000,
  passThrough: true,
  requiredFields: ['appId', 'appSecret'],
  defaultBaseUrl: 'https://push-api.cloud.huawei.com',
  defaultAuthUrl: 'https://oauth-login.cloud.huawei.com/oauth2/v3/token',

  prepare(message: PushMessage, context: ProtocolContext): Prepared {
    const android: Record<string, unknown> = { bi_tag: message.notificationId };
    const ttl = ttlSeconds(message.expiresAt, context.now(), 15 * 86400);
    if (ttl !== null) android.ttl = `${ttl}s`;
    const inner: Record<string, unknown> = { android };
    if (message.silent) {
      inner.data = JSON.stringify(message.custom);
    } else {
      const notification: Record<string, unknown> = {
        title: displayTitle(message),
        body: message.body,
        // SPEC §4.3 rules 7 and 8: open the app's page through the fixed intent URI.
        click_action: { type: 1, intent: intentUri(message.intentHost, message.custom) },
      };
      const badgeClass = context.credentials.badgeClass;
      if (message.badge !== undefined && badgeClass) {
        notification.badge = message.badge === 'Increment' ? { add_num: 1, class: badgeClass } : { set_num: message.badge, class: badgeClass };
      }
      android.notification = notification;
    }
    // Rule 9: the request's hms object passes through (foreground_show, target_user_type, …).
    const options = { ...message.options };
    if (options.target_user_type !== undefined) {
      android.target_user_type = options.target_user_type;
      delete options.target_user_type;
    }
    const body = deepMerge({ validate_only: false, message: inner }, options);
    const merged = asRecord(body.message);
    delete merged.topic;
    delete merged.condition;
    delete merged.token;
    if (message.silent) {
      // Pass-through carries message.data only (reference §1.2): no notification from the hms object either.
      delete merged.notification;
      delete asRecord(merged.android).notification;
    }
    const tooLarge = contentTooLarge('HMS', body);
    return tooLarge ? { ok: false, error: tooLarge } : { ok: true, content: body };
  },

  authenticate(context) {
    return oauthClientCredentials('HMS', context, context.credentials.appId, context.credentials.appSecret);
  },

  async sendBatch(context, content, tokens, accessToken): Promise<BatchOutcome> {
    const body = content as Record<string, unknown>;
    const json = { ...body, message: { ...asRecord(body.message), token: tokens } };
    const url = `${context.baseUrl}/v1/${encodeURIComponent(context.credentials.appId)}/messages:send`;
    const reply = await post(context.fetch, url, { json, headers: { Authorization: `Bearer ${accessToken}` } });
    if (isNetworkFailure(reply)) return { kind: 'retry', error: reply.error };
    if (reply.status === 401) return { kind: 'authExpired', error: 'HMS refused the access token (HTTP 401)' };
    const transient = httpFailure('HMS', reply);
    if (transient) return transient;
    const answer = asRecord(reply.json);
    const code = str(answer.code);
    const msg = str(answer.msg);
    switch (code) {
      case hmsCodes.ok:
        return { kind: 'accepted' };
      case hmsCodes.partial:
        return { kind: 'accepted', invalid: illegalTokens(answer.msg) };
      case hmsCodes.allInvalid:
        return { kind: 'allInvalid', error: `HMS ${code}: every token of the request is invalid` };
      case hmsCodes.oauthError:
      case hmsCodes.oauthExpired:
        return { kind: 'authExpired', error: `HMS ${code}: ${msg}` };
      case hmsCodes.internal:
        return { kind: 'retry', error: `HMS ${code}: ${msg}` };
      default:
        return { kind: 'failed', error: `HMS ${code || `HTTP ${reply.status}`}: ${msg || reply.text.slice(0, 200)}` };
    }
  },
};
