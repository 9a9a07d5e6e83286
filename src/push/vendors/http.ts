/** The little HTTP the senders need: JSON or form bodies, a timeout, lenient JSON replies. */

export interface Reply {
  status: number;
  /** Parsed JSON body, or null when the body is not JSON. */
  json: unknown;
  text: string;
  /** Milliseconds from a Retry-After header, when present. */
  retryAfterMs?: number;
}

/** A network failure (refused, reset, timeout): always worth a retry. */
export interface NetworkFailure {
  status: 0;
  error: string;
}

export const requestTimeoutMs = 15_000;

function retryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** application/x-www-form-urlencoded; encodeURIComponent is several times faster than URLSearchParams on large fields. */
export function formEncode(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
}

export async function post(
  fetchFn: typeof fetch,
  url: string,
  options: { json?: unknown; form?: Record<string, string>; headers?: Record<string, string> },
): Promise<Reply | NetworkFailure> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string;
  if (options.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
    body = formEncode(options.form);
  } else {
    headers['Content-Type'] = 'application/json;charset=UTF-8';
    body = JSON.stringify(options.json ?? {});
  }
  try {
    const response = await fetchFn(url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    const text = await response.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    return {
      status: response.status,
      json,
      text,
      retryAfterMs: retryAfter(response.headers.get('retry-after'), Date.now()),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { status: 0, error: `network error: ${cause ?? (error as Error).message}` };
  }
}

export function isNetworkFailure(reply: Reply | NetworkFailure): reply is NetworkFailure {
  return reply.status === 0;
}

/** A JSON object, or an empty one: replies are read field by field with the helpers below. */
export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function str(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** Short body text for error messages (never credentials: replies carry none). */
export function snippet(reply: Reply): string {
  return reply.text.length > 200 ? `${reply.text.slice(0, 200)}…` : reply.text;
}

/** The default classification of an HTTP failure: 5xx and 429 are transient, the rest final. */
export function httpFailure(vendor: string, reply: Reply): { kind: 'retry'; error: string; retryAfterMs?: number } | null {
  if (reply.status === 429 || reply.status >= 500) {
    return {
      kind: 'retry',
      error: `${vendor} answered HTTP ${reply.status}${reply.status === 429 || reply.status === 503 ? ' (flow control)' : ''}`,
      retryAfterMs: reply.retryAfterMs,
    };
  }
  return null;
}
