import { createHmac, randomBytes } from 'node:crypto';
import { accepted, callJson, refused, unreachable, type TokenCheck } from './types.ts';

/** Micro-blog platform: POST /oauth2/get_token_info names the token's uid and app key. */
export const checkWeibo: TokenCheck = async (entry, account, settings, fetcher) => {
  const base = settings.baseUrl ?? 'https://api.weibo.com';
  const result = await callJson(fetcher, `${base}/oauth2/get_token_info`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ access_token: String(entry.access_token) }).toString(),
  });
  if ('failure' in result) return unreachable(result.failure);
  const { body } = result;
  if (result.status !== 200 || body.uid === undefined) return refused('The micro-blog platform refused the access token.');
  if (String(body.uid) !== account) return refused('The access token belongs to another micro-blog account.');
  if (settings.appKey && String(body.appkey) !== settings.appKey) return refused('The access token was issued to another application.');
  if (typeof body.expire_in === 'number' && body.expire_in <= 0) return refused('The access token has expired.');
  return accepted;
};

/** Social platform A: GET /oauth2.0/me names the token's openid and client id. */
export const checkQq: TokenCheck = async (entry, account, settings, fetcher) => {
  const base = settings.baseUrl ?? 'https://graph.qq.com';
  const query = new URLSearchParams({ access_token: String(entry.access_token), fmt: 'json' });
  // With a union id in the entry, ask for the token's union id too, so a client cannot claim another's.
  if (typeof entry.unionid === 'string') query.set('unionid', '1');
  const result = await callJson(fetcher, `${base}/oauth2.0/me?${query}`);
  if ('failure' in result) return unreachable(result.failure);
  const { body } = result;
  if (result.status !== 200 || typeof body.openid !== 'string') return refused('Social platform A refused the access token.');
  if (body.openid !== account) return refused('The access token belongs to another account.');
  if (settings.appId && String(body.client_id) !== settings.appId) return refused('The access token was issued to another application.');
  if (typeof entry.unionid === 'string' && body.unionid !== entry.unionid) return refused('The union id does not belong to the access token.');
  return accepted;
};

/**
 * Chat platform B: GET /sns/auth answers errcode 0 when the token is valid for that openid; with a
 * union id in the entry, GET /sns/userinfo instead, whose unionid must be the one claimed.
 */
export const checkWeixin: TokenCheck = async (entry, account, settings, fetcher) => {
  const base = settings.baseUrl ?? 'https://api.weixin.qq.com';
  const query = new URLSearchParams({ access_token: String(entry.access_token), openid: account });
  const withUnion = typeof entry.unionid === 'string';
  const result = await callJson(fetcher, `${base}/sns/${withUnion ? 'userinfo' : 'auth'}?${query}`);
  if ('failure' in result) return unreachable(result.failure);
  const { body } = result;
  if (withUnion) {
    if (result.status !== 200 || (body.errcode !== undefined && body.errcode !== 0) || body.openid !== account) {
      return refused('Chat platform B refused the access token.');
    }
    if (body.unionid !== entry.unionid) return refused('The union id does not belong to the access token.');
    return accepted;
  }
  if (result.status !== 200 || body.errcode !== 0) return refused('Chat platform B refused the access token.');
  return accepted;
};

/** The MAC authorization header the game store's open API expects (HMAC-SHA1 over the request). */
export function macAuthorization(options: { kid: string; macKey: string; method: string; url: string; now?: number }): string {
  const url = new URL(options.url);
  const ts = Math.floor((options.now ?? Date.now()) / 1000).toString();
  const nonce = randomBytes(8).toString('hex');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const normalized = `${ts}\n${nonce}\n${options.method}\n${url.pathname}${url.search}\n${url.hostname}\n${port}\n\n`;
  const mac = createHmac('sha1', options.macKey).update(normalized).digest('base64');
  return `MAC id="${options.kid}",ts="${ts}",nonce="${nonce}",mac="${mac}"`;
}

/** Game store: GET /account/profile/v1, signed with the token's MAC key, names the token's openid. */
export const checkTaptap: TokenCheck = async (entry, account, settings, fetcher) => {
  const base = settings.baseUrl ?? 'https://openapi.tap.io';
  if (!settings.clientId) return refused('The game-store check needs authProviders.<key>.clientId in the settings.');
  // kid goes into a header as a quoted string: anything else could not be a real one.
  if (!/^[\x21\x23-\x7e]{1,256}$/.test(String(entry.kid))) return refused('The game-store kid is malformed.');
  const url = `${base}/account/profile/v1?${new URLSearchParams({ client_id: settings.clientId })}`;
  const authorization = macAuthorization({ kid: String(entry.kid), macKey: String(entry.mac_key), method: 'GET', url });
  const result = await callJson(fetcher, url, { headers: { Authorization: authorization } });
  if ('failure' in result) return unreachable(result.failure);
  const data = result.body.data as Record<string, unknown> | undefined;
  if (result.status !== 200 || result.body.success !== true || typeof data?.openid !== 'string') {
    return refused('The game store refused the access token.');
  }
  if (data.openid !== account) return refused('The access token belongs to another game-store account.');
  return accepted;
};
