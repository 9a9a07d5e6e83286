/**
 * Honor Push (reference vendor-push §1.7): OAuth2 client credentials with the Client ID and
 * Client Secret, JSON body in camelCase, `timestamp` header, result lists expireTokens/failTokens.
 */
import { asRecord, httpFailure, isNetworkFailure, post, str } from './http.ts';
import { oauthClientCredentials } from './hms.ts';
import { contentTooLarge, deepMerge, displayTitle, intentUri, ttlSeconds } from './mapping.ts';
import type { BatchOutcome, Prepared, PushMessage, ProtocolContext, VendorProtocol } from './types.ts';

/** data.honor keys that belong at the top of the request rather than inside `android`. */
const topLevel = new Set(['data', 'notification', 'android']);

function tokenList(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

export const honorProtocol: VendorProtocol = {
  vendor: 'honor',
  maxBatch: 1000,
  passThrough: true,
  requiredFields: ['appId', 'appSecret', 'clientId', 'clientSecret'],
  defaultBaseUrl: 'https://push-api.cloud.hihonor.com',
  defaultAuthUrl: 'https://iam.developer.hihonor.com/auth/realms/developer/protocol/openid-connect/token',

  prepare(message: PushMessage, context: ProtocolContext): Prepared {
    const android: Record<string, unknown> = { biTag: message.notificationId };
    const ttl = ttlSeconds(message.expiresAt, context.now(), 1_296_000);
    if (ttl !== null) android.ttl = `${ttl}s`;
    let body: Record<string, unknown> = { android };
    if (message.silent) {
      body.data = JSON.stringify(message.custom);
    } else {
      const notification: Record<string, unknown> = {
        title: displayTitle(message),
        body: message.body,
        clickAction: { type: 1, intent: intentUri(message.intentHost, message.custom) },
      };
      // Badge table: Honor sets the badge from the server through the `badge` parameter.
      const badgeClass = str(message.options.badgeClass) || context.credentials.badgeClass;
      if (message.badge !== undefined && badgeClass) {
        notification.badge = message.badge === 'Increment' ? { addNum: 1, badgeClass } : { setNum: Math.min(99, message.badge), badgeClass };
      }
      android.notification = notification;
    }
    const atTop: Record<string, unknown> = {};
    const inAndroid: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(message.options)) {
      if (key === 'badgeClass') continue;
      if (topLevel.has(key)) atTop[key] = value;
      else inAndroid[key] = value; // targetUserType, ttl, importance, …
    }
    body = deepMerge(deepMerge(body, atTop), { android: inAndroid });
    delete body.token;
    if (message.silent) {
      delete body.notification;
      delete asRecord(body.android).notification;
    }
    const tooLarge = contentTooLarge('honor', body);
    return tooLarge ? { ok: false, error: tooLarge } : { ok: true, content: body };
  },

  authenticate(context) {
    return oauthClientCredentials('honor', context, context.credentials.clientId, context.credentials.clientSecret);
  },

  async sendBatch(context, content, tokens, accessToken): Promise<BatchOutcome> {
    const json = { ...(content as Record<string, unknown>), token: tokens };
    const url = `${context.baseUrl}/api/v1/${encodeURIComponent(context.credentials.appId)}/sendMessage`;
    const reply = await post(context.fetch, url, {
      json,
      headers: { Authorization: `Bearer ${accessToken}`, timestamp: String(context.now()) },
    });
    if (isNetworkFailure(reply)) return { kind: 'retry', error: reply.error };
    if (reply.status === 401) return { kind: 'authExpired', error: 'Honor refused the access token (HTTP 401)' };
    const transient = httpFailure('honor', reply);
    if (transient) return transient;
    const answer = asRecord(reply.json);
    const code = str(answer.code);
    const message = str(answer.message);
    if (code === '200' || code === '80000000') {
      const data = asRecord(answer.data);
      const failed = new Map(tokenList(data.failTokens).map((token) => [token, `honor could not deliver to this token`]));
      return { kind: 'accepted', invalid: tokenList(data.expireTokens), failed };
    }
    if (code === '80300007') return { kind: 'allInvalid', error: `honor ${code}: every token of the request is invalid` };
    if (code === '80200001' || code === '80200003') return { kind: 'authExpired', error: `honor ${code}: ${message}` };
    if (code === '81000001') return { kind: 'retry', error: `honor ${code}: ${message}` };
    return { kind: 'failed', error: `honor ${code || `HTTP ${reply.status}`}: ${message || reply.text.slice(0, 200)}` };
  },
};
