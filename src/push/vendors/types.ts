/**
 * Shapes shared by the six phone-maker senders (SPEC §4.3, reference vendor-push.md).
 * A sender speaks one maker's HTTP API; the dispatcher (dispatch.ts) picks the sender,
 * applies the delivery rules and turns everything into one result per device.
 */

export const vendors = ['HMS', 'mi', 'mz', 'oppo', 'vivo', 'honor'] as const;
export type VendorName = (typeof vendors)[number];

export interface VendorDevice {
  installationObjectId: string;
  registrationId: string;
}

export type DeviceStatus = 'sent' | 'invalidToken' | 'failed' | 'dropped';

export interface DeviceResult {
  installationObjectId: string;
  status: DeviceStatus;
  error?: string;
}

/** One push as every sender sees it: the request's data reduced to what a maker can carry. */
export interface PushMessage {
  notificationId: string;
  /** data.title (after per-target overrides). */
  title: string | undefined;
  /** data.alert as text (after per-target overrides); '' when absent. */
  body: string;
  /** data.silent: pass-through instead of a notification-bar message. */
  silent: boolean;
  /** data.badge: a number to set, or 'Increment'. */
  badge: number | 'Increment' | undefined;
  /** The developer's custom keys (everything that is not a reserved push key). */
  custom: Record<string, unknown>;
  /**
   * Maker-specific parameters: the request's `hms` object for HMS, otherwise data.<vendor>
   * without the content keys (alert, title, badge, silent), passed through to the maker.
   */
  options: Record<string, unknown>;
  /** Host of the rule-7 intent URI: the app's androidIntentHostname or the default. */
  intentHost: string;
  /** Epoch ms after which the message is worthless, or null. */
  expiresAt: number | null;
}

/** What one call to a maker's send API came to. Expected failures are values, not exceptions. */
export type BatchOutcome =
  /** Accepted; listed tokens are invalid (or failed for another reason), every other token was sent. */
  | { kind: 'accepted'; invalid?: Iterable<string>; failed?: Map<string, string> }
  /** The maker says every token of the request is invalid. */
  | { kind: 'allInvalid'; error: string }
  /** The access token is expired or refused: refresh it and try again. */
  | { kind: 'authExpired'; error: string }
  /** Transient error or flow control: try again after a pause. */
  | { kind: 'retry'; error: string; retryAfterMs?: number }
  /** The application's daily quota at this maker is used up. */
  | { kind: 'quota'; error: string }
  /** Refused for a reason that a retry will not change. */
  | { kind: 'failed'; error: string };

/** Result of obtaining an access token from a maker's auth endpoint. */
export type AuthOutcome =
  | { kind: 'ok'; token: string; expiresInMs: number }
  | { kind: 'retry'; error: string; retryAfterMs?: number }
  | { kind: 'failed'; error: string };

/** Everything a protocol needs to talk to the maker. */
export interface ProtocolContext {
  credentials: Readonly<Record<string, string>>;
  /** Send API origin (credential field `baseUrl`, else the maker's real host). */
  baseUrl: string;
  /** Token endpoint (credential field `authUrl`, else the maker's real one). */
  authUrl: string;
  fetch: typeof fetch;
  now(): number;
}

/** Content prepared once per message and reused for every batch. */
export type Prepared = { ok: true; content: unknown } | { ok: false; error: string };

/** One maker's HTTP API. `createSender` adds batching, token caching, retries and results. */
export interface VendorProtocol {
  readonly vendor: VendorName;
  /** Most tokens the maker accepts in one request. */
  readonly maxBatch: number;
  /** Whether the maker delivers pass-through (silent) messages (SPEC §4.3 table, reference §7). */
  readonly passThrough: boolean;
  /** Credential fields that must be present (SPEC §4.3 rule 6). */
  readonly requiredFields: readonly string[];
  readonly defaultBaseUrl: string;
  readonly defaultAuthUrl: string | null;
  /** Builds the maker's message (without targets) and checks the content limits. */
  prepare(message: PushMessage, context: ProtocolContext): Prepared;
  /** Obtains an access token; absent for makers that sign every request instead. */
  authenticate?(context: ProtocolContext): Promise<AuthOutcome>;
  sendBatch(context: ProtocolContext, content: unknown, tokens: string[], accessToken: string | null): Promise<BatchOutcome>;
}

export interface SendReport {
  results: DeviceResult[];
  /** Set when the maker reported the daily quota used up; the dispatcher pauses the maker. */
  quotaExceeded?: string;
}

/** STYLE item 12: one sender per maker behind send(message, devices) → per-device results. */
export interface VendorSender {
  readonly vendor: VendorName;
  readonly maxBatch: number;
  readonly passThrough: boolean;
  send(message: PushMessage, devices: VendorDevice[]): Promise<SendReport>;
}
