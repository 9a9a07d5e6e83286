/**
 * Local fakes of the third-party sign-in providers Roost checks tokens with (loopback only).
 * Each checks what the real one checks: the micro-blog platform's token info, social platform
 * A's /me, chat platform B's /sns/auth and /sns/userinfo, the game store's MAC-signed profile
 * call, and the device-maker identity service's published keys (JWKS) with tokens the test signs.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

export interface FakeProviders {
  baseUrl: string;
  /** Tokens each platform accepts: access token → the account it belongs to. */
  weibo: Map<string, { uid: string; appkey: string }>;
  qq: Map<string, { openid: string; clientId: string; unionid?: string }>;
  weixin: Map<string, { openid: string; unionid?: string }>;
  /** Game store: kid → its MAC key and account. */
  taptap: Map<string, { macKey: string; openid: string; unionid?: string }>;
  /** Calls per path, to tell a check happened. */
  calls: Map<string, number>;
  /** Problems a real provider would refuse (bad MAC signature …). */
  violations: string[];
  /** Answers 503 to everything while true. */
  down: boolean;
  /** A device-maker identity token signed with the published key (or with `foreignKey`). */
  signIdentityToken(claims: JWTPayload & { sub: string; aud: string }, options?: { expiresIn?: string; issuer?: string; foreignKey?: boolean }): Promise<string>;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => resolve(text));
  });
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
}

function parseMac(header: string | undefined): Record<string, string> | null {
  if (!header?.startsWith('MAC ')) return null;
  const fields: Record<string, string> = {};
  for (const part of header.slice(4).split(',')) {
    const match = /^\s*(\w+)="([^"]*)"\s*$/.exec(part);
    if (!match) return null;
    fields[match[1]] = match[2];
  }
  return fields.id && fields.ts && fields.nonce && fields.mac ? fields : null;
}

export async function startFakeProviders(): Promise<FakeProviders> {
  const published = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(published.publicKey)), kid: 'fake-key-1', alg: 'RS256', use: 'sig' };

  const fake: Omit<FakeProviders, 'baseUrl' | 'close' | 'signIdentityToken'> = {
    weibo: new Map(),
    qq: new Map(),
    weixin: new Map(),
    taptap: new Map(),
    calls: new Map(),
    violations: [],
    down: false,
  };

  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    fake.calls.set(url.pathname, (fake.calls.get(url.pathname) ?? 0) + 1);
    const body = await readBody(request);
    if (fake.down) return json(response, 503, { error: 'down' });
    switch (`${request.method} ${url.pathname}`) {
      case 'POST /oauth2/get_token_info': {
        const token = new URLSearchParams(body).get('access_token') ?? '';
        const account = fake.weibo.get(token);
        if (!account) return json(response, 400, { error: 'invalid_access_token', error_code: 21332 });
        return json(response, 200, { uid: Number(account.uid), appkey: account.appkey, scope: '', create_at: 1, expire_in: 3600 });
      }
      case 'GET /oauth2.0/me': {
        const account = fake.qq.get(url.searchParams.get('access_token') ?? '');
        if (!account) return json(response, 200, { error: 100016, error_description: 'access token check failed' });
        const out: Record<string, unknown> = { client_id: account.clientId, openid: account.openid };
        if (url.searchParams.get('unionid') === '1' && account.unionid) out.unionid = account.unionid;
        return json(response, 200, out);
      }
      case 'GET /sns/auth':
      case 'GET /sns/userinfo': {
        const account = fake.weixin.get(url.searchParams.get('access_token') ?? '');
        if (!account || account.openid !== url.searchParams.get('openid')) {
          return json(response, 200, { errcode: 40003, errmsg: 'invalid openid' });
        }
        if (url.pathname === '/sns/auth') return json(response, 200, { errcode: 0, errmsg: 'ok' });
        return json(response, 200, { openid: account.openid, unionid: account.unionid, nickname: 'someone' });
      }
      case 'GET /account/profile/v1': {
        const mac = parseMac(request.headers.authorization);
        const account = mac ? fake.taptap.get(mac.id) : undefined;
        if (!mac || !account) return json(response, 401, { success: false, data: { error: 'invalid_token' } });
        const host = request.headers.host ?? '';
        const [hostname, port] = host.split(':');
        const normalized = `${mac.ts}\n${mac.nonce}\nGET\n${url.pathname}${url.search}\n${hostname}\n${port || '80'}\n\n`;
        const expected = createHmac('sha1', account.macKey).update(normalized).digest('base64');
        if (expected !== mac.mac) {
          fake.violations.push('taptap: MAC signature mismatch');
          return json(response, 401, { success: false, data: { error: 'invalid_signature' } });
        }
        if (Math.abs(Date.now() / 1000 - Number(mac.ts)) > 300) return json(response, 401, { success: false, data: { error: 'expired' } });
        if (!url.searchParams.get('client_id')) fake.violations.push('taptap: client_id missing');
        return json(response, 200, { success: true, data: { openid: account.openid, unionid: account.unionid, name: 'player' } });
      }
      case 'GET /auth/keys':
        return json(response, 200, { keys: [jwk] });
      default:
        return json(response, 404, { error: 'not found' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return Object.assign(fake, {
    baseUrl: `http://127.0.0.1:${port}`,
    async signIdentityToken(
      claims: JWTPayload & { sub: string; aud: string },
      options: { expiresIn?: string; issuer?: string; foreignKey?: boolean } = {},
    ) {
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'fake-key-1' })
        .setIssuer(options.issuer ?? 'https://appleid.apple.com')
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '10m')
        .sign(options.foreignKey ? foreign.privateKey : published.privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
