import { isIP } from 'node:net';
import { join } from 'node:path';
import type { S3Options } from './files/s3.ts';

export interface Config {
  host: string;
  port: number;
  /** postgres://… for PostgreSQL; absent means the embedded SQLite file. */
  databaseUrl: string | null;
  sqlitePath: string;
  /** Where the data lives by default (DATA_DIR): the SQLite file, outboxes, the first start's key file. */
  dataDir: string;
  /** ROOST_SECRET_KEY: the keys that seal secrets in the database (src/secret-keys.ts), first one sealing. */
  secretKey: string | null;
  /** ROOST_SECRET_KEY_FILE: a file holding those keys, one a line. */
  secretKeyFile: string | null;
  redisUrl: string | null;
  smtpUrl: string | null;
  mailFrom: string;
  outboxDir: string;
  /** Where SMS codes are written for apps without an SMS webhook. */
  smsOutboxDir: string;
  publicUrl: string;
  /** The ws(s):// address GET /v1/route sends LeanCloud SDK devices to; null: the request's own host. */
  pushConnectionUrl: string | null;
  /** Keys token digests and encrypted copies; must be the same on every node. */
  secret: string;
  bodyLimitBytes: number;
  /** How long a client may take to send the request line and headers (a socket that sends nothing is closed then). */
  headersTimeoutMs: number;
  /** How long a client may take to send a whole request, body included. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveTimeoutMs: number;
  /** How long a connection may pass no byte either way (e.g. a client that stops reading) before it is closed. */
  idleTimeoutMs: number;
  logLevel: string;
  /** How long a node trusts its cached copy of an application's keys and settings. */
  appCacheMs: number;
  /** Installations per fan-out page (one transaction each). */
  pushPageSize: number;
  /** How long a routed page belongs to its worker before another node redelivers it. */
  pushLeaseMs: number;
  /**
   * TRUST_PROXY: whose X-Forwarded-For/-Proto/-Host are believed (request.ip, .protocol, .host), in
   * Fastify's trustProxy terms: true (anyone), false (no one), or addresses, CIDR ranges and the names
   * loopback, linklocal, uniquelocal. Default: loopback, a reverse proxy on the same host.
   */
  trustProxy: boolean | string[];
  /** How long a stopping node waits for in-flight requests and push deliveries before it exits anyway. */
  shutdownGraceMs: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** PostgreSQL: longest a request's statement may run (0: no limit); migrations and imports are exempt. */
  statementTimeoutMs: number;
  /** SQLite: how long a write waits for another process's write lock before answering 503 (the driver is synchronous: the node answers nothing meanwhile). */
  sqliteBusyTimeoutMs: number;
  /** Where the local-disk file backend keeps bytes (FILES_DIR, default <DATA_DIR>/files). */
  filesDir: string;
  /** The address file URLs start with (FILES_PUBLIC_URL; default PUBLIC_URL): a CDN or the reverse proxy. */
  filesPublicUrl: string | null;
  /** Largest file any app may upload (FILE_MAX_BYTES); an app's fileMaxBytes setting may lower it. */
  fileMaxBytes: number;
  /** How long an upload URL from POST /1.1/fileTokens stays good. */
  fileTokenTtlMs: number;
  /** Above 0: file URLs on Roost are answered signed, good for one to two such windows (private files). */
  filesSignedUrlSeconds: number;
  /** FILES_BACKEND=s3: the S3-compatible store files' bytes go to; null: local disk (FILES_DIR). */
  s3: S3Options | null;
}

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function text(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? null : raw.trim();
}

function timeouts(env: Env): Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'idleTimeoutMs'> {
  const headersTimeoutMs = integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000);
  const requestTimeoutMs = integer(env, 'REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) throw new ConfigError('HEADERS_TIMEOUT_MS must not be above REQUEST_TIMEOUT_MS');
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    idleTimeoutMs: integer(env, 'IDLE_TIMEOUT_MS', 120_000, 100, 3_600_000),
  };
}

const proxyNames = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address or CIDR range as proxy-addr reads it (IPv4, IPv6, or IPv4 with a dotted netmask). */
function isProxyAddress(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (family === 4 && isIP(prefix) === 4) return true;
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

function trustProxy(env: Env): Config['trustProxy'] {
  const raw = text(env, 'TRUST_PROXY') ?? 'loopback';
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  // Fastify 5 trusts nothing for a hop count (it cannot tell the proxy from a client sending as many hops).
  if (/^\d+$/.test(raw)) throw new ConfigError('TRUST_PROXY takes the proxies\' addresses or ranges (e.g. loopback or 10.0.0.0/8), not a hop count');
  const entries = raw.split(',').map((entry) => entry.trim());
  const wrong = entries.find((entry) => !proxyNames.has(entry) && !isProxyAddress(entry));
  if (wrong !== undefined) {
    throw new ConfigError(`TRUST_PROXY must be true, false, or a comma-separated list of addresses, CIDR ranges and loopback/linklocal/uniquelocal; "${wrong}" is none of these`);
  }
  return entries;
}

function filesPublicUrl(env: Env): string | null {
  const url = text(env, 'FILES_PUBLIC_URL');
  if (url && !/^https?:\/\/[^/?#]+/.test(url)) throw new ConfigError('FILES_PUBLIC_URL must be an http:// or https:// address');
  return url?.replace(/\/+$/, '') ?? null;
}

function s3Options(env: Env): S3Options | null {
  const backend = text(env, 'FILES_BACKEND') ?? 'local';
  if (backend === 'local') return null;
  if (backend !== 's3') throw new ConfigError('FILES_BACKEND must be local or s3');
  const bucket = text(env, 'S3_BUCKET');
  if (!bucket) throw new ConfigError('FILES_BACKEND=s3 needs S3_BUCKET');
  const prefix = text(env, 'S3_PREFIX') ?? '';
  if (prefix && !/^[A-Za-z0-9._\/-]+\/$/.test(prefix)) throw new ConfigError('S3_PREFIX must be letters, digits, ".", "_", "-" and "/", ending with "/"');
  const endpoint = text(env, 'S3_ENDPOINT');
  const publicUrl = text(env, 'S3_PUBLIC_URL');
  for (const [name, url] of [['S3_ENDPOINT', endpoint], ['S3_PUBLIC_URL', publicUrl]] as const) {
    if (url && !/^https?:\/\/[^/?#]+/.test(url)) throw new ConfigError(`${name} must be an http:// or https:// address`);
  }
  const accessKeyId = text(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = text(env, 'S3_SECRET_ACCESS_KEY');
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together');
  return {
    bucket,
    prefix,
    region: text(env, 'S3_REGION') ?? 'us-east-1',
    endpoint: endpoint?.replace(/\/+$/, '') ?? null,
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : null,
    publicUrl: publicUrl?.replace(/\/+$/, '') ?? null,
    signedUrlSeconds: integer(env, 'S3_SIGNED_URL_SECONDS', 3600, 1, 7 * 24 * 3600),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const dataDir = text(env, 'DATA_DIR') ?? './data';
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// (leave it unset for the embedded SQLite store)');
  }
  const secret = text(env, 'ROOST_SECRET');
  if (secret !== null && secret.length < 16) throw new ConfigError('ROOST_SECRET must be at least 16 characters');
  const smtpUrl = text(env, 'SMTP_URL');
  if (smtpUrl && !/^smtps?:\/\/[^/?#]+/.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL must look like smtp://user:pass@host:587 or smtps://user:pass@host:465 (leave it unset for the outbox folder)');
  }
  const publicUrl = text(env, 'PUBLIC_URL');
  if (publicUrl && !/^https?:\/\/[^/?#]+/.test(publicUrl)) {
    throw new ConfigError('PUBLIC_URL must be an http:// or https:// address, as users\' browsers reach Roost');
  }
  const pushConnectionUrl = text(env, 'PUSH_CONNECTION_URL');
  if (pushConnectionUrl && !/^wss?:\/\/[^/?#]+/.test(pushConnectionUrl)) {
    throw new ConfigError('PUSH_CONNECTION_URL must be a ws:// or wss:// address, as devices reach Roost\'s push connection');
  }
  return {
    host,
    port,
    databaseUrl,
    sqlitePath: text(env, 'SQLITE_PATH') ?? join(dataDir, 'roost.sqlite'),
    dataDir,
    secretKey: text(env, 'ROOST_SECRET_KEY') ?? null,
    secretKeyFile: text(env, 'ROOST_SECRET_KEY_FILE') ?? null,
    redisUrl: text(env, 'REDIS_URL'),
    smtpUrl,
    mailFrom: text(env, 'MAIL_FROM') ?? 'Roost <no-reply@localhost>',
    outboxDir: text(env, 'OUTBOX_DIR') ?? join(dataDir, 'outbox'),
    smsOutboxDir: text(env, 'SMS_OUTBOX_DIR') ?? join(dataDir, 'sms-outbox'),
    publicUrl: (publicUrl ?? `http://${host}:${port}`).replace(/\/+$/, ''),
    pushConnectionUrl,
    metricsToken: text(env, 'METRICS_TOKEN'),
    trustProxy: trustProxy(env),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 3_600_000),
    // Without ROOST_SECRET the store keeps a generated one (see storage); null here means "ask the store".
    secret: secret ?? '',
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    ...timeouts(env),
    logLevel: text(env, 'LOG_LEVEL') ?? 'info',
    appCacheMs: integer(env, 'APP_CACHE_MS', 1000, 0, 3_600_000),
    pushPageSize: integer(env, 'PUSH_PAGE_SIZE', 2000, 10, 5000),
    pushLeaseMs: integer(env, 'PUSH_LEASE_MS', 30_000, 500, 3_600_000),
    statementTimeoutMs: integer(env, 'STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
    sqliteBusyTimeoutMs: integer(env, 'SQLITE_BUSY_TIMEOUT_MS', 5_000, 0, 60_000),
    filesDir: text(env, 'FILES_DIR') ?? join(dataDir, 'files'),
    filesPublicUrl: filesPublicUrl(env),
    fileMaxBytes: integer(env, 'FILE_MAX_BYTES', 1024 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
    fileTokenTtlMs: integer(env, 'FILE_TOKEN_TTL_MS', 3_600_000, 1000, 7 * 24 * 3_600_000),
    filesSignedUrlSeconds: integer(env, 'FILES_SIGNED_URL_SECONDS', 0, 0, 7 * 24 * 3600),
    s3: s3Options(env),
  };
}
