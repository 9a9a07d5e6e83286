import { createHash } from 'node:crypto';

export interface Response {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body text or bytes, sent as given (malformed-input tests, file uploads). */
  raw?: string | Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
  session?: string;
  query?: Record<string, unknown>;
}

/**
 * A minimal REST client that talks to Roost as the SDKs do: signed requests (X-LC-Sign),
 * JSON bodies, the session in X-LC-Session.
 */
export class Client {
  readonly url: string;
  readonly appId: string;
  readonly appKey: string;
  readonly masterKey: string | undefined;
  /** Sent with every request unless a request names its own. */
  session: string | undefined;

  constructor(options: { url: string; appId: string; appKey: string; masterKey?: string; session?: string }) {
    this.url = options.url;
    this.appId = options.appId;
    this.appKey = options.appKey;
    this.masterKey = options.masterKey;
    this.session = options.session;
  }

  withSession(session: string | undefined): Client {
    return new Client({ url: this.url, appId: this.appId, appKey: this.appKey, masterKey: this.masterKey, session });
  }

  signature(now = Date.now()): string {
    const key = this.masterKey ?? this.appKey;
    const digest = createHash('md5').update(`${now}${key}`).digest('hex');
    return this.masterKey ? `${digest},${now},master` : `${digest},${now}`;
  }

  authHeaders(): Record<string, string> {
    return { 'X-LC-Id': this.appId, 'X-LC-Sign': this.signature() };
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    let target = this.url + path;
    if (options.query) {
      const search = new URLSearchParams();
      for (const [key, value] of Object.entries(options.query)) {
        search.set(key, typeof value === 'string' ? value : JSON.stringify(value));
      }
      target += (path.includes('?') ? '&' : '?') + search.toString();
    }
    const headers: Record<string, string> = { ...this.authHeaders(), 'Content-Type': 'application/json;charset=UTF-8' };
    const session = options.session ?? this.session;
    if (session) headers['X-LC-Session'] = session;
    Object.assign(headers, options.headers);
    for (const [key, value] of Object.entries(headers)) if (value === '') delete headers[key];
    const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const response = await fetch(target, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, options);
  }
  post(path: string, body?: unknown, options?: RequestOptions) {
    return this.request('POST', path, { ...options, body });
  }
  put(path: string, body?: unknown, options?: RequestOptions) {
    return this.request('PUT', path, { ...options, body });
  }
  delete(path: string, options?: RequestOptions) {
    return this.request('DELETE', path, { body: {}, ...options });
  }
}
