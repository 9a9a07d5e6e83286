/**
 * Local fakes of the six phone makers' push servers (loopback only). Each checks what the real
 * one checks — the auth flow and signature, the encoding, the batch limit, required fields —
 * and answers success, partial success with invalid tokens, a transient error, flow control,
 * an expired access token or the daily quota, on demand. Anything the real maker would refuse
 * is also recorded in `violations`, so a test can assert there were none.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { VendorName } from '../../src/push/vendors/types.ts';

export type FakeFailure = 'transient' | 'flowControl' | 'quota' | 'authExpired';

export interface SendRecord {
  path: string;
  tokens: string[];
  /** The request as parsed: JSON body, or form fields (with JSON-string fields parsed). */
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeMaker {
  vendor: VendorName;
  /** Fields for settings vendors.<profile>.<vendor>: credentials plus baseUrl/authUrl here. */
  credentials: Record<string, string>;
  /** Whether the real maker has a documented daily-quota error code. */
  readonly supportsQuota: boolean;
  authCalls: number;
  /** Send requests refused because their access token was unknown or expired. */
  readonly rejectedTokens: number;
  sends: SendRecord[];
  violations: string[];
  /** Tokens this maker reports invalid whenever they are targeted. */
  invalidTokens: Set<string>;
  /** Tokens this maker reports not delivered for another reason (makers with per-target errors). */
  failingTokens: Set<string>;
  /** Whether the real maker reports per-target failures other than invalid tokens. */
  readonly perTargetFailures: boolean;
  /** The next `times` send requests fail this way. */
  failNext(failure: FakeFailure, times?: number): void;
  /** Forgets every access token issued so far (as if they had expired at the maker). */
  revokeTokens(): void;
  /** Back to a clean state: no planned failures, records, invalid tokens or issued tokens. */
  reset(): void;
  close(): Promise<void>;
}

export interface FakeOptions {
  /** The fake's clock for signed timestamps (default Date.now). */
  now?: () => number;
  /** expires_in of OAuth tokens, in seconds. */
  tokenLifetimeSeconds?: number;
}

type Parsed = { kind: 'json' | 'form' | 'other'; body: Record<string, unknown>; raw: string };

function formDecode(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of raw.split('&')) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const decode = (text: string) => decodeURIComponent(text.replace(/\+/g, ' '));
    if (at < 0) out[decode(pair)] = '';
    else out[decode(pair.slice(0, at))] = decode(pair.slice(at + 1));
  }
  return out;
}

async function readBody(request: IncomingMessage): Promise<Parsed> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const type = String(request.headers['content-type'] ?? '');
  if (type.startsWith('application/json')) {
    try {
      return { kind: 'json', body: JSON.parse(raw) as Record<string, unknown>, raw };
    } catch {
      return { kind: 'other', body: {}, raw };
    }
  }
  if (type.startsWith('application/x-www-form-urlencoded')) {
    return { kind: 'form', body: formDecode(raw), raw };
  }
  return { kind: 'other', body: {}, raw };
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(body));
}

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface Exchange {
  path: string;
  parsed: Parsed;
  request: IncomingMessage;
  response: ServerResponse;
}

interface State {
  authCalls: number;
  sends: SendRecord[];
  violations: string[];
  invalidTokens: Set<string>;
  failingTokens: Set<string>;
  failures: FakeFailure[];
  /** Access tokens issued → when they expire (fake clock). */
  issued: Map<string, number>;
  rejectedTokens: number;
  counter: number;
  now: () => number;
  lifetime: number;
}

type Handler = (state: State, exchange: Exchange, creds: Record<string, string>) => void;

function issue(state: State, prefix: string, lifetimeSeconds: number): string {
  const token = `${prefix}-${++state.counter}-${Math.random().toString(36).slice(2, 8)}`;
  state.issued.set(token, state.now() + lifetimeSeconds * 1000);
  return token;
}

/** Whether an access token was issued here and has not expired; counts the refusals. */
function validToken(state: State, token: string): boolean {
  const expires = state.issued.get(token);
  if (expires !== undefined && expires > state.now()) return true;
  state.rejectedTokens++;
  return false;
}

function violation(state: State, text: string): void {
  state.violations.push(text);
}

/** Takes the next planned failure, if any. */
function planned(state: State): FakeFailure | undefined {
  return state.failures.shift();
}

function within(state: State, timestamp: unknown): boolean {
  const value = Number(timestamp);
  return Number.isFinite(value) && Math.abs(state.now() - value) < 10 * 60_000;
}

function byteLength(value: unknown): number {
  return Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value), 'utf8');
}

// ---------------------------------------------------------------- HMS
const hms: Handler = (state, { path, parsed, request, response }, creds) => {
  if (path === '/oauth2/v3/token') {
    state.authCalls++;
    const form = parsed.body;
    if (parsed.kind !== 'form') violation(state, 'HMS auth: body must be form-encoded');
    if (form.grant_type !== 'client_credentials' || form.client_id !== creds.appId || form.client_secret !== creds.appSecret) {
      violation(state, 'HMS auth: wrong client credentials');
      return send(response, 400, { error: 'invalid_client', error_description: 'client authentication failed' });
    }
    return send(response, 200, { access_token: issue(state, 'hms', state.lifetime), expires_in: state.lifetime, token_type: 'Bearer' });
  }
  if (path === `/v1/${creds.appId}/messages:send`) {
    const auth = String(request.headers.authorization ?? '');
    if (!auth.startsWith('Bearer ') || !validToken(state, auth.slice(7))) {
      return send(response, 401, { code: '80200003', msg: 'OAuth token expired' });
    }
    if (parsed.kind !== 'json') {
      violation(state, 'HMS send: body must be JSON');
      return send(response, 400, { code: '80100003', msg: 'Incorrect message structure' });
    }
    const message = (parsed.body.message ?? {}) as Record<string, unknown>;
    const tokens = Array.isArray(message.token) ? (message.token as string[]) : [];
    state.sends.push({ path, tokens, body: parsed.body, headers: request.headers });
    const targets = ['token', 'topic', 'condition'].filter((key) => message[key] !== undefined).length;
    if (targets !== 1) violation(state, 'HMS send: exactly one of token/topic/condition');
    if (tokens.length < 1 || tokens.length > 1000) {
      violation(state, `HMS send: ${tokens.length} tokens (1–1000)`);
      return send(response, 200, { code: '80300010', msg: 'The number of tokens in the message body exceeds the default value' });
    }
    const { token: _tokens, ...content } = message;
    if (byteLength(content) > 4096) {
      violation(state, 'HMS send: message over 4 KB');
      return send(response, 200, { code: '80300008', msg: 'The message body size exceeds the default value' });
    }
    const android = (message.android ?? {}) as Record<string, unknown>;
    const notification = android.notification as Record<string, unknown> | undefined;
    if (notification) {
      if (typeof notification.title !== 'string' || typeof notification.body !== 'string') violation(state, 'HMS send: notification needs title and body');
      const click = (notification.click_action ?? {}) as Record<string, unknown>;
      if (click.type === 1 && !click.intent && !click.action) violation(state, 'HMS send: click_action type 1 needs intent or action');
      if (notification.badge && !(notification.badge as Record<string, unknown>).class) violation(state, 'HMS send: badge needs class');
    } else if (message.data === undefined) {
      violation(state, 'HMS send: neither notification nor data');
    }
    const failure = planned(state);
    if (failure === 'transient') return send(response, 200, { code: '81000001', msg: 'System inner error' });
    if (failure === 'flowControl') return send(response, 503, { code: '80000000', msg: 'flow control' });
    if (failure === 'authExpired') return send(response, 200, { code: '80200003', msg: 'OAuth token expired' });
    const illegal = tokens.filter((token) => state.invalidTokens.has(token));
    if (illegal.length === tokens.length) return send(response, 200, { code: '80300007', msg: 'All tokens are invalid', requestId: 'r' });
    if (illegal.length > 0) {
      const msg = JSON.stringify({ success: tokens.length - illegal.length, failure: illegal.length, illegal_tokens: illegal });
      return send(response, 200, { code: '80100000', msg, requestId: 'r' });
    }
    return send(response, 200, { code: '80000000', msg: 'Success', requestId: 'r' });
  }
  send(response, 404, { code: '404', msg: 'not found' });
};

// ---------------------------------------------------------------- Xiaomi
const mi: Handler = (state, { path, parsed, request, response }, creds) => {
  if (path !== '/v3/message/regid') return send(response, 404, { result: 'error', code: 404 });
  if (request.headers.authorization !== `key=${creds.appSecret}`) {
    violation(state, 'mi: wrong Authorization header');
    return send(response, 200, { result: 'error', code: 21301, reason: 'Authentication failed' });
  }
  if (parsed.kind !== 'form') {
    violation(state, 'mi: body must be form-encoded');
    return send(response, 200, { result: 'error', code: 10017, reason: 'bad value' });
  }
  const form = parsed.body as Record<string, string>;
  const tokens = String(form.registration_id ?? '').split(',').filter(Boolean);
  const body: Record<string, unknown> = { ...form };
  try {
    body.payload = JSON.parse(decodeURIComponent(String(form.payload ?? '')));
  } catch {
    violation(state, 'mi: payload is not URL-encoded JSON');
  }
  state.sends.push({ path, tokens, body, headers: request.headers });
  if (tokens.length < 1 || tokens.length > 1000) {
    violation(state, `mi: ${tokens.length} registration ids (1–1000)`);
    return send(response, 200, { result: 'error', code: 10017, reason: 'too many registration ids' });
  }
  if (form.restricted_package_name !== creds.packageName) {
    violation(state, 'mi: wrong restricted_package_name');
    return send(response, 200, { result: 'error', code: 22022, reason: 'invalid package name' });
  }
  if (form.pass_through !== '0' && form.pass_through !== '1') violation(state, 'mi: pass_through must be 0 or 1');
  if (form.pass_through === '0') {
    if (!form.title || Array.from(form.title).length >= 50) violation(state, 'mi: title required, under 50 characters');
    if (!form.description || Array.from(form.description).length >= 128) violation(state, 'mi: description required, under 128 characters');
  }
  const failure = planned(state);
  if (failure === 'transient') return send(response, 200, { result: 'error', code: 10002, reason: 'server busy' });
  if (failure === 'flowControl') return send(response, 200, { result: 'error', code: 10027, reason: 'API called too often' });
  if (failure === 'quota') return send(response, 200, { result: 'error', code: 10034, reason: 'daily message cap reached' });
  if (failure === 'authExpired') return send(response, 200, { result: 'error', code: 21301, reason: 'Authentication failed' });
  const bad = tokens.filter((token) => state.invalidTokens.has(token));
  if (bad.length === tokens.length) return send(response, 200, { result: 'error', code: 20301, reason: 'send message failed' });
  return send(response, 200, { result: 'ok', code: 0, trace_id: 't', data: { id: 'm1', ...(bad.length ? { bad_regids: bad.join(',') } : {}) } });
};

// ---------------------------------------------------------------- Meizu
const mz: Handler = (state, { path, parsed, request, response }, creds) => {
  if (path !== '/garcia/api/server/push/varnished/pushByPushId') return send(response, 404, { code: '404' });
  if (parsed.kind !== 'form') {
    violation(state, 'mz: body must be form-encoded');
    return send(response, 200, { code: '1005', message: 'parameter error' });
  }
  const form = parsed.body as Record<string, string>;
  const text = Object.keys(form).filter((key) => key !== 'sign').sort().map((key) => `${key}=${form[key]}`).join('');
  if (form.sign !== md5(text + creds.appSecret) || form.appId !== creds.appId) {
    violation(state, 'mz: bad sign or appId');
    return send(response, 200, { code: '1006', message: 'sign failure' });
  }
  const tokens = String(form.pushIds ?? '').split(',').filter(Boolean);
  let messageJson: Record<string, unknown> = {};
  try {
    messageJson = JSON.parse(String(form.messageJson)) as Record<string, unknown>;
  } catch {
    violation(state, 'mz: messageJson is not JSON');
  }
  state.sends.push({ path, tokens, body: { ...form, messageJson }, headers: request.headers });
  if (tokens.length < 1 || tokens.length > 1000) {
    violation(state, `mz: ${tokens.length} pushIds (1–1000)`);
    return send(response, 200, { code: '1005', message: 'too many pushIds' });
  }
  const bar = (messageJson.noticeBarInfo ?? {}) as Record<string, unknown>;
  const title = String(bar.title ?? '');
  const content = String(bar.content ?? '');
  if (title.length < 1 || title.length > 32 || content.length < 1 || content.length > 100) violation(state, 'mz: title 1–32, content 1–100');
  const failure = planned(state);
  if (failure === 'transient') return send(response, 200, { code: '1003', message: 'server busy' });
  if (failure === 'flowControl') return send(response, 200, { code: '110010', message: 'push rate too high' });
  const bad = tokens.filter((token) => state.invalidTokens.has(token));
  const folded = tokens.filter((token) => state.failingTokens.has(token));
  const value: Record<string, string[]> = {};
  if (bad.length) value['110003'] = bad;
  if (folded.length) value['520'] = folded;
  return send(response, 200, { code: '200', message: '', value, msgId: 'm1' });
};

// ---------------------------------------------------------------- OPPO
const oppoClickTypes = new Set([0, 1, 2, 4, 5]);
const oppo: Handler = (state, { path, parsed, request, response }, creds) => {
  if (path === '/server/v1/auth') {
    state.authCalls++;
    const form = parsed.body as Record<string, string>;
    if (parsed.kind !== 'form') violation(state, 'oppo auth: body must be form-encoded');
    if (form.app_key !== creds.appKey || form.sign !== sha256(creds.appKey + form.timestamp + creds.masterSecret) || !within(state, form.timestamp)) {
      violation(state, 'oppo auth: bad app_key, sign or timestamp');
      return send(response, 200, { code: 16, message: 'sign invalid' });
    }
    return send(response, 200, { code: 0, message: 'success', data: { auth_token: issue(state, 'oppo', 24 * 3600), create_time: state.now() } });
  }
  if (path === '/server/v1/message/notification/unicast_batch') {
    const token = String(request.headers.auth_token ?? '');
    if (!validToken(state, token)) return send(response, 200, { code: 11, message: 'Invalid AuthToken' });
    if (parsed.kind !== 'form') {
      violation(state, 'oppo send: body must be form-encoded');
      return send(response, 200, { code: 41, message: 'invalid args' });
    }
    let messages: Array<Record<string, unknown>> = [];
    try {
      messages = JSON.parse(String(parsed.body.messages)) as Array<Record<string, unknown>>;
    } catch {
      violation(state, 'oppo send: messages is not a JSON string');
    }
    const tokens = messages.map((item) => String(item.target_value));
    state.sends.push({ path, tokens, body: { messages }, headers: request.headers });
    if (messages.length < 1 || messages.length > 1000) {
      violation(state, `oppo send: ${messages.length} messages (1–1000)`);
      return send(response, 200, { code: 41, message: 'too many messages' });
    }
    for (const item of messages) {
      const n = (item.notification ?? {}) as Record<string, unknown>;
      if (item.target_type !== 2) violation(state, 'oppo send: target_type must be 2 (registration id)');
      if (!n.title || !n.content || String(n.content).length > 200) violation(state, 'oppo send: title and content (≤200) required');
      const type = Number(n.click_action_type ?? 0);
      if (!oppoClickTypes.has(type)) violation(state, 'oppo send: bad click_action_type');
      if ((type === 1 || type === 4) && !n.click_action_activity) violation(state, 'oppo send: click_action_activity required');
      if ((type === 2 || type === 5) && !n.click_action_url) violation(state, 'oppo send: click_action_url required');
    }
    const failure = planned(state);
    if (failure === 'transient') return send(response, 502, { code: -1, message: 'Service Currently Unavailable' });
    if (failure === 'flowControl') return send(response, 200, { code: -2, message: 'Service in Flow Control' });
    if (failure === 'quota') return send(response, 200, { code: 33, message: 'The number of messages exceeds the daily limit' });
    if (failure === 'authExpired') return send(response, 200, { code: 11, message: 'Invalid AuthToken' });
    const data = tokens.map((regId, i) =>
      state.invalidTokens.has(regId)
        ? { registrationId: regId, errorCode: 10000, errorMessage: 'Invalid RegistrationId' }
        : state.failingTokens.has(regId)
          ? { registrationId: regId, errorCode: 55, errorMessage: 'frequency limit' }
          : { registrationId: regId, messageId: `m${i}` },
    );
    return send(response, 200, { code: 0, message: 'Success', data });
  }
  send(response, 404, { code: 404 });
};

// ---------------------------------------------------------------- vivo
const vivoTasks = new Set<string>();
const vivo: Handler = (state, { path, parsed, request, response }, creds) => {
  if (path === '/message/auth') {
    state.authCalls++;
    const body = parsed.body;
    if (parsed.kind !== 'json') violation(state, 'vivo auth: body must be JSON');
    const timestamp = String(body.timestamp);
    if (body.appId !== creds.appId || body.appKey !== creds.appKey || body.sign !== md5(creds.appId + creds.appKey + timestamp + creds.appSecret) || !within(state, timestamp)) {
      violation(state, 'vivo auth: bad appId, appKey, sign or timestamp');
      return send(response, 200, { result: 10200, desc: 'sign invalid' });
    }
    return send(response, 200, { result: 0, desc: 'success', authToken: issue(state, 'vivo', 24 * 3600) });
  }
  if (!['/message/send', '/message/saveListPayload', '/message/pushToList'].includes(path)) return send(response, 404, { result: 404 });
  if (!validToken(state, String(request.headers.authtoken ?? ''))) return send(response, 200, { result: 10000, desc: 'authToken invalid' });
  if (parsed.kind !== 'json') {
    violation(state, 'vivo: body must be JSON');
    return send(response, 200, { result: 10050, desc: 'bad request' });
  }
  const body = parsed.body;
  const requestId = String(body.requestId ?? '');
  if (!requestId || requestId.length > 64) violation(state, 'vivo: requestId required, ≤64 characters');
  const checkPayload = () => {
    if (!body.title || !body.content || body.notifyType === undefined || body.skipType === undefined) violation(state, 'vivo: title, content, notifyType, skipType required');
    if ((body.skipType === 2 || body.skipType === 3 || body.skipType === 4) && !body.skipContent) violation(state, 'vivo: skipContent required for skipType 2–4');
  };
  const firstCall = path !== '/message/pushToList';
  const failure = firstCall ? planned(state) : undefined;
  if (path === '/message/saveListPayload') {
    checkPayload();
    if (failure === undefined) {
      const taskId = `task-${++state.counter}`;
      vivoTasks.add(taskId);
      return send(response, 200, { result: 0, desc: 'success', taskId });
    }
  }
  if (path === '/message/send') {
    checkPayload();
    state.sends.push({ path, tokens: [String(body.regId)], body, headers: request.headers });
  }
  if (failure === 'transient') return send(response, 500, { result: 1, desc: 'internal error' });
  if (failure === 'flowControl') return send(response, 200, { result: 10072, desc: 'rate limit' });
  if (failure === 'quota') return send(response, 200, { result: 10070, desc: 'total send quota reached' });
  if (failure === 'authExpired') return send(response, 200, { result: 10000, desc: 'authToken invalid' });
  if (path === '/message/send') {
    if (state.invalidTokens.has(String(body.regId))) return send(response, 200, { result: 10302, desc: 'regId illegal' });
    return send(response, 200, { result: 0, desc: 'success', taskId: 't1' });
  }
  // pushToList
  const tokens = Array.isArray(body.regIds) ? (body.regIds as string[]) : [];
  state.sends.push({ path, tokens, body, headers: request.headers });
  if (tokens.length < 2 || tokens.length > 1000) {
    violation(state, `vivo pushToList: ${tokens.length} regIds (2–1000)`);
    return send(response, 200, { result: 10050, desc: 'regIds size' });
  }
  if (!vivoTasks.has(String(body.taskId))) violation(state, 'vivo pushToList: unknown taskId');
  const invalidUsers = tokens.filter((token) => state.invalidTokens.has(token)).map((userid) => ({ userid, status: 1 }));
  return send(response, 200, { result: 0, desc: 'success', taskId: body.taskId, invalidUsers });
};

// ---------------------------------------------------------------- Honor
const honor: Handler = (state, { path, parsed, request, response }, creds) => {
  if (path === '/auth/realms/developer/protocol/openid-connect/token') {
    state.authCalls++;
    const form = parsed.body;
    if (parsed.kind !== 'form') violation(state, 'honor auth: body must be form-encoded');
    if (form.grant_type !== 'client_credentials' || form.client_id !== creds.clientId || form.client_secret !== creds.clientSecret) {
      violation(state, 'honor auth: wrong client credentials');
      return send(response, 401, { error: 'unauthorized_client', error_description: 'Invalid client credentials' });
    }
    return send(response, 200, { access_token: issue(state, 'honor', state.lifetime), expires_in: state.lifetime, token_type: 'Bearer' });
  }
  if (path === `/api/v1/${creds.appId}/sendMessage`) {
    const auth = String(request.headers.authorization ?? '');
    if (!auth.startsWith('Bearer ') || !validToken(state, auth.slice(7))) return send(response, 401, { code: 80200003, message: 'token expired' });
    if (!request.headers.timestamp) violation(state, 'honor: timestamp header required');
    if (parsed.kind !== 'json') {
      violation(state, 'honor: body must be JSON');
      return send(response, 200, { code: 80100003, message: 'bad structure' });
    }
    const body = parsed.body;
    const tokens = Array.isArray(body.token) ? (body.token as string[]) : [];
    state.sends.push({ path, tokens, body, headers: request.headers });
    if (tokens.length < 1 || tokens.length > 1000) {
      violation(state, `honor: ${tokens.length} tokens (1–1000)`);
      return send(response, 200, { code: 80300010, message: 'token count' });
    }
    const android = (body.android ?? {}) as Record<string, unknown>;
    const notification = android.notification as Record<string, unknown> | undefined;
    if (notification) {
      const click = (notification.clickAction ?? {}) as Record<string, unknown>;
      if (!notification.title || !notification.body || click.type === undefined) violation(state, 'honor: notification needs title, body and clickAction');
      if (click.type === 1 && !click.intent && !click.action) violation(state, 'honor: clickAction type 1 needs intent or action');
      const badge = notification.badge as Record<string, unknown> | undefined;
      if (badge && !badge.badgeClass) violation(state, 'honor: badge needs badgeClass');
    } else if (body.data === undefined) {
      violation(state, 'honor: neither notification nor data');
    }
    const failure = planned(state);
    if (failure === 'transient') return send(response, 500, { code: 81000001, message: 'internal error' });
    if (failure === 'flowControl') return send(response, 503, { code: 503, message: 'flow control' });
    if (failure === 'authExpired') return send(response, 200, { code: 80200003, message: 'token expired' });
    const expireTokens = tokens.filter((token) => state.invalidTokens.has(token));
    const failTokens = tokens.filter((token) => state.failingTokens.has(token));
    return send(response, 200, { code: 200, message: 'success', data: { sendResult: true, requestId: 'r', failTokens, expireTokens } });
  }
  send(response, 404, { code: 404 });
};

const handlers: Record<VendorName, Handler> = { HMS: hms, mi, mz, oppo, vivo, honor };

/** Test credentials per maker (SPEC §4.3 rule 6 fields). */
export const fakeCredentials: Record<VendorName, Record<string, string>> = {
  HMS: { appId: '10086001', appSecret: 'hms-secret' },
  mi: { appId: '2882303761517', appSecret: 'mi-secret', appKey: '5601', packageName: 'com.example.roost' },
  mz: { appId: '110001', appSecret: 'mz-secret' },
  oppo: { appKey: 'oppo-key', masterSecret: 'oppo-master', appSecret: 'oppo-client-secret' },
  vivo: { appId: '10004', appKey: 'vivo-key', appSecret: 'vivo-secret' },
  honor: { appId: '104400001', appSecret: 'honor-app-secret', clientId: 'honor-client', clientSecret: 'honor-client-secret' },
};

const authPaths: Partial<Record<VendorName, string>> = {
  HMS: '/oauth2/v3/token',
  oppo: '/server/v1/auth',
  vivo: '/message/auth',
  honor: '/auth/realms/developer/protocol/openid-connect/token',
};

const quotaMakers = new Set<VendorName>(['mi', 'oppo', 'vivo']);
const perTargetMakers = new Set<VendorName>(['mz', 'oppo', 'honor']);

export async function startFakeMaker(vendor: VendorName, options: FakeOptions = {}): Promise<FakeMaker> {
  const creds = fakeCredentials[vendor];
  const state: State = {
    authCalls: 0,
    sends: [],
    violations: [],
    invalidTokens: new Set(),
    failingTokens: new Set(),
    failures: [],
    issued: new Map(),
    rejectedTokens: 0,
    counter: 0,
    now: options.now ?? Date.now,
    lifetime: options.tokenLifetimeSeconds ?? 3600,
  };
  const server = createServer((request, response) => {
    readBody(request)
      .then((parsed) => {
        if (request.method !== 'POST') return send(response, 405, { error: 'POST only' });
        handlers[vendor](state, { path: (request.url ?? '/').split('?')[0], parsed, request, response }, creds);
      })
      .catch((error: unknown) => send(response, 500, { error: String(error) }));
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const credentials: Record<string, string> = { ...creds, baseUrl: origin };
  if (authPaths[vendor]) credentials.authUrl = origin + authPaths[vendor];

  return {
    vendor,
    credentials,
    supportsQuota: quotaMakers.has(vendor),
    get authCalls() {
      return state.authCalls;
    },
    set authCalls(value: number) {
      state.authCalls = value;
    },
    get rejectedTokens() {
      return state.rejectedTokens;
    },
    sends: state.sends,
    violations: state.violations,
    invalidTokens: state.invalidTokens,
    failingTokens: state.failingTokens,
    perTargetFailures: perTargetMakers.has(vendor),
    failNext(failure, times = 1) {
      if (failure === 'quota' && !quotaMakers.has(vendor)) throw new Error(`${vendor} has no documented daily-quota error`);
      for (let i = 0; i < times; i++) state.failures.push(failure);
    },
    revokeTokens() {
      state.issued.clear();
    },
    reset() {
      state.failures.length = 0;
      state.sends.length = 0;
      state.violations.length = 0;
      state.invalidTokens.clear();
      state.failingTokens.clear();
      state.issued.clear();
      state.authCalls = 0;
      state.rejectedTokens = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
