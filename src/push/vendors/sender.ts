/**
 * The part every maker shares: batches at the maker's limit, the access token cached and
 * refreshed before it expires and after an auth error, retries with backoff on transient
 * errors and flow control, a stop on the daily quota, and one result per device.
 */
import type { Clock } from '../../lib/clock.ts';
import type {
  BatchOutcome,
  DeviceResult,
  ProtocolContext,
  PushMessage,
  SendReport,
  VendorDevice,
  VendorProtocol,
  VendorSender,
} from './types.ts';

export interface RetryPolicy {
  /** Tries per batch, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const defaultRetry: RetryPolicy = { attempts: 4, baseDelayMs: 500, maxDelayMs: 15_000 };

export interface SenderOptions {
  protocol: VendorProtocol;
  credentials: Readonly<Record<string, string>>;
  clock: Clock;
  fetch?: typeof fetch;
  /** Waits between retries; tests pass one that records and returns at once. */
  sleep?: (ms: number) => Promise<void>;
  retry?: RetryPolicy;
  /** Requests in flight at once for one send call. */
  concurrency?: number;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A token is renewed this long before the maker says it expires (at most a tenth of its life). */
export function refreshMargin(lifeMs: number): number {
  return Math.min(5 * 60_000, Math.floor(lifeMs / 10));
}

interface CachedToken {
  token: string;
  renewAt: number;
}

export function createSender(options: SenderOptions): VendorSender {
  const { protocol, credentials, clock } = options;
  const retry = options.retry ?? defaultRetry;
  const sleep = options.sleep ?? realSleep;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const context: ProtocolContext = {
    credentials,
    baseUrl: (credentials.baseUrl || protocol.defaultBaseUrl).replace(/\/+$/, ''),
    authUrl: credentials.authUrl || protocol.defaultAuthUrl || '',
    fetch: options.fetch ?? globalThis.fetch,
    now: () => clock.now(),
  };

  let cached: CachedToken | null = null;
  let pending: Promise<{ token: string } | { error: string; retry: boolean; retryAfterMs?: number }> | null = null;

  /** One auth request at a time, shared by every batch waiting for a token. */
  function accessToken(): Promise<{ token: string } | { error: string; retry: boolean; retryAfterMs?: number }> {
    if (cached && clock.now() < cached.renewAt) return Promise.resolve({ token: cached.token });
    if (!pending) {
      pending = (async () => {
        try {
          const outcome = await protocol.authenticate!(context);
          if (outcome.kind === 'ok') {
            cached = { token: outcome.token, renewAt: clock.now() + outcome.expiresInMs - refreshMargin(outcome.expiresInMs) };
            return { token: outcome.token };
          }
          return { error: `${protocol.vendor} auth: ${outcome.error}`, retry: outcome.kind === 'retry', retryAfterMs: outcome.kind === 'retry' ? outcome.retryAfterMs : undefined };
        } finally {
          pending = null;
        }
      })();
    }
    return pending;
  }

  function delay(attempt: number, retryAfterMs?: number): number {
    const backoff = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
    return Math.min(retry.maxDelayMs, Math.max(backoff, retryAfterMs ?? 0));
  }

  /** Sends one batch until it is settled: accepted, refused, out of tries or out of time. */
  async function sendOne(content: unknown, tokens: string[], expiresAt: number | null): Promise<BatchOutcome> {
    let refreshed = false;
    let last: BatchOutcome = { kind: 'failed', error: `${protocol.vendor}: not sent` };
    for (let attempt = 1; attempt <= retry.attempts; ) {
      let token: string | null = null;
      if (protocol.authenticate) {
        const auth = await accessToken();
        if ('error' in auth) {
          last = auth.retry ? { kind: 'retry', error: auth.error, retryAfterMs: auth.retryAfterMs } : { kind: 'failed', error: auth.error };
        } else {
          token = auth.token;
        }
      }
      if (!protocol.authenticate || token !== null) {
        last = await protocol.sendBatch(context, content, tokens, token);
      }
      if (last.kind === 'authExpired') {
        if (refreshed || !protocol.authenticate) return { kind: 'failed', error: last.error };
        refreshed = true;
        if (cached?.token === token) cached = null;
        continue; // a fresh token does not use up a try
      }
      if (last.kind !== 'retry') return last;
      attempt++;
      if (attempt > retry.attempts) break;
      const wait = delay(attempt - 1, last.retryAfterMs);
      if (expiresAt !== null && clock.now() + wait >= expiresAt) {
        return { kind: 'failed', error: `${last.error}; the message expires before another try` };
      }
      await sleep(wait);
    }
    return { kind: 'failed', error: `${last.kind === 'retry' ? last.error : 'failed'} (gave up after ${retry.attempts} tries)` };
  }

  return {
    vendor: protocol.vendor,
    maxBatch: protocol.maxBatch,
    passThrough: protocol.passThrough,

    async send(message: PushMessage, devices: VendorDevice[]): Promise<SendReport> {
      const results: DeviceResult[] = [];
      const byToken = new Map<string, string[]>();
      for (const device of devices) {
        if (!device.registrationId) {
          results.push({ installationObjectId: device.installationObjectId, status: 'failed', error: 'installation has no registrationId' });
          continue;
        }
        const list = byToken.get(device.registrationId);
        if (list) list.push(device.installationObjectId);
        else byToken.set(device.registrationId, [device.installationObjectId]);
      }
      if (byToken.size === 0) return { results };

      const prepared = protocol.prepare(message, context);
      if (!prepared.ok) {
        for (const ids of byToken.values()) for (const id of ids) results.push({ installationObjectId: id, status: 'failed', error: prepared.error });
        return { results };
      }

      const tokens = [...byToken.keys()];
      const batches: string[][] = [];
      for (let i = 0; i < tokens.length; i += protocol.maxBatch) batches.push(tokens.slice(i, i + protocol.maxBatch));

      const report = (batch: string[], status: DeviceResult['status'], error?: string) => {
        for (const token of batch) {
          for (const id of byToken.get(token)!) results.push(error === undefined ? { installationObjectId: id, status } : { installationObjectId: id, status, error });
        }
      };

      let quotaExceeded: string | undefined;
      let next = 0;
      const worker = async () => {
        while (next < batches.length) {
          const batch = batches[next++];
          if (quotaExceeded !== undefined) {
            report(batch, 'failed', quotaExceeded);
            continue;
          }
          const outcome = await sendOne(prepared.content, batch, message.expiresAt);
          switch (outcome.kind) {
            case 'accepted': {
              const invalid = new Set(outcome.invalid ?? []);
              for (const token of batch) {
                const failure = outcome.failed?.get(token);
                if (invalid.has(token)) report([token], 'invalidToken', `${protocol.vendor} reported the registration id invalid`);
                else if (failure !== undefined) report([token], 'failed', failure);
                else report([token], 'sent');
              }
              break;
            }
            case 'allInvalid':
              report(batch, 'invalidToken', outcome.error);
              break;
            case 'quota':
              quotaExceeded ??= `${protocol.vendor} daily quota reached: ${outcome.error}`;
              report(batch, 'failed', quotaExceeded);
              break;
            default:
              report(batch, 'failed', outcome.error);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
      return quotaExceeded === undefined ? { results } : { results, quotaExceeded };
    },
  };
}
