import { accessSync, constants, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Redis } from 'ioredis';
import { onFirstUse } from './lib/on-first-use.ts';
import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config } from './config.ts';
import { openStore } from './storage/open.ts';
import { SecretKeyError } from './lib/secret-box.ts';
import type { Store } from './storage/store.ts';

const ioredis = onFirstUse<typeof import('ioredis')>('ioredis');

/**
 * Start-up as operators meet it: each step that depends on the outside world (the data folder, the
 * database, Redis, the port) fails with a StartError whose message is one line naming the cause
 * and the address, e.g. "cannot reach Redis at redis://127.0.0.1:6390: connection refused".
 */
export class StartError extends Error {}

const reasons: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'unknown host',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available on this machine',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'not a directory',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
};

/** Why an error happened, in a few words: the first known system error along its causes, else its first line. */
export function reasonOf(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof AggregateError && current.errors.length > 0) current = current.errors[0];
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && reasons[code]) return reasons[code];
    current = (current as { cause?: unknown }).cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] || 'unknown error';
}

/** The URL without its password, fit for a message or a log line. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    return parsed.toString();
  } catch {
    return '(malformed URL)';
  }
}

/** Opens the store (applying migrations); SQLite's folder must be writable first. */
export async function openStoreAtStart(config: Config): Promise<Store> {
  if (config.databaseUrl) {
    const url = withoutPassword(config.databaseUrl);
    try {
      return await openStore(config);
    } catch (error) {
      if (error instanceof SecretKeyError) throw new StartError(error.message, { cause: error });
      throw new StartError(`cannot reach PostgreSQL at ${url}: ${reasonOf(error)}`, { cause: error });
    }
  }
  if (config.sqlitePath !== ':memory:') {
    const folder = dirname(config.sqlitePath);
    try {
      mkdirSync(folder, { recursive: true });
      accessSync(folder, constants.W_OK);
    } catch (error) {
      throw new StartError(`cannot write to the data folder ${folder}: ${reasonOf(error)}`, { cause: error });
    }
  }
  try {
    return await openStore(config);
  } catch (error) {
    if (error instanceof SecretKeyError) throw new StartError(error.message, { cause: error });
    throw new StartError(`cannot open the SQLite database at ${config.sqlitePath}: ${reasonOf(error)}`, { cause: error });
  }
}

/**
 * Redis must answer at start: a node that cannot reach it would serve, but reach no device held
 * by another node. Later outages are lived through (ioredis reconnects on its own).
 */
export async function checkRedis(url: string, connectTimeoutMs = 5000): Promise<void> {
  const client = new (ioredis().Redis)(url, { lazyConnect: true, connectTimeout: connectTimeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // ioredis rejects with "Connection is closed."; the cause arrives as an 'error' event.
  let cause: unknown = null;
  client.on('error', (error) => (cause ??= error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw new StartError(`cannot reach Redis at ${withoutPassword(url)}: ${reasonOf(cause ?? error)}`, { cause: cause ?? error });
  } finally {
    client.disconnect();
  }
}

export async function listenAtStart(app: FastifyInstance, config: Pick<Config, 'host' | 'port'>): Promise<string> {
  try {
    return await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    throw new StartError(`cannot listen on ${config.host}:${config.port}: ${reasonOf(error)}`, { cause: error });
  }
}

/**
 * Writes the one line that says why the process could not start (no stack trace) and returns the
 * exit code: 2 for a bad setting, 1 for the rest.
 */
export function reportStartFailure(error: unknown): number {
  if (error instanceof ConfigError || error instanceof StartError) {
    process.stderr.write(`roost: ${error.message}\n`);
    return error instanceof ConfigError ? 2 : 1;
  }
  process.stderr.write(`roost: failed to start: ${reasonOf(error)}\n`);
  return 1;
}
