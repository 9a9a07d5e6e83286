import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.ts';
import { isoDate } from '../../lib/clock.ts';
import { md5Hex, safeEqual } from '../../lib/crypto.ts';
import { catalogue } from '../../lib/errors.ts';
import type { JsonObject } from '../../objects/types.ts';
import { isPlausibleId } from '../../objects/values.ts';
import { isAppId } from '../../apps/keys.ts';
import { isInstallationId } from '../installations.ts';
import type { AckEntry, PushStore } from '../../storage/push-store.ts';

/** What the hub needs of a WebSocket; the HTTP layer adapts the real one. */
export interface DeviceSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** One message for many devices, as the fan-out publishes it (and Redis carries it between nodes). */
export interface ChannelBatch {
  appId: string;
  notificationId: string;
  createdAt: number;
  expiresAt: number | null;
  data: JsonObject;
  installationIds: string[];
}

/** Close codes of the channel (docs/push-channel.md). */
export const closeCodes = { loginFailed: 4001, replaced: 4002, shuttingDown: 1001 } as const;

const signatureWindowMs = 15 * 60 * 1000;
const loginTimeoutMs = 30_000;
const mailboxBatch = 1000;
const maxSeen = 2000;

interface Session {
  socket: DeviceSocket;
  key: string | null;
  appId: string | null;
  installationId: string | null;
  /** Ids sent on this connection, so a message relayed twice (a page redone after a crash) is sent once. */
  seen: Set<string>;
  busy: Promise<void>;
  timer: NodeJS.Timeout | null;
}

export interface Connection {
  receive(text: string): void;
  closed(): void;
}

/** Checks a login `sign`: md5hex(timestamp + appKey),timestamp — X-LC-Sign made with the app key. */
export function checkLoginSign(sign: unknown, appKey: string, now: number): boolean {
  if (typeof sign !== 'string') return false;
  const [digest, timestamp, ...rest] = sign.split(',');
  if (rest.length > 0 || !digest || !timestamp || !/^\d{1,16}$/.test(timestamp)) return false;
  if (Math.abs(now - Number(timestamp)) > signatureWindowMs) return false;
  return safeEqual(md5Hex(timestamp + appKey), digest.toLowerCase());
}

/**
 * The devices connected to this node: logs them in, sends what waits in their mailbox, delivers
 * relayed batches to the ones it holds, and batches their acknowledgements into the store.
 */
export class ChannelHub {
  private readonly store: PushStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly appKey: (appId: string) => Promise<string | null>;
  private readonly sessions = new Map<string, Session>();
  private acks: AckEntry[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly flushTimer: NodeJS.Timeout;
  private closing = false;
  delivered = 0;

  constructor(options: {
    store: PushStore;
    clock: Clock;
    logger: Logger;
    appKey: (appId: string) => Promise<string | null>;
    ackFlushMs?: number;
  }) {
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
    this.appKey = options.appKey;
    this.flushTimer = setInterval(() => void this.flushAcks(), options.ackFlushMs ?? 200);
    this.flushTimer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  connect(socket: DeviceSocket): Connection {
    const session: Session = {
      socket,
      key: null,
      appId: null,
      installationId: null,
      seen: new Set(),
      busy: Promise.resolve(),
      timer: null,
    };
    session.timer = setTimeout(() => {
      if (session.key === null) this.fail(session, 'unauthorized', 'Log in within 30 seconds.', true);
    }, loginTimeoutMs);
    session.timer.unref();
    return {
      // Frames of one device are handled in order: a push after login waits for the login.
      receive: (text) => {
        session.busy = session.busy.then(() => this.handle(session, text)).catch((error) => {
          this.logger.error({ err: error }, 'push channel: frame failed');
        });
      },
      closed: () => {
        if (session.timer) clearTimeout(session.timer);
        if (session.key !== null && this.sessions.get(session.key) === session) this.sessions.delete(session.key);
      },
    };
  }

  private fail(session: Session, kind: keyof typeof catalogue, error: string, close: boolean): void {
    session.socket.send(JSON.stringify({ op: 'error', code: catalogue[kind].code, error }));
    if (close) session.socket.close(closeCodes.loginFailed, error.slice(0, 120));
  }

  private async handle(session: Session, text: string): Promise<void> {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return this.fail(session, 'invalidJson', 'Frames are JSON objects.', false);
    }
    if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) {
      return this.fail(session, 'invalidJson', 'Frames are JSON objects.', false);
    }
    const f = frame as Record<string, unknown>;
    switch (f.op) {
      case 'login':
        return this.login(session, f);
      case 'ack':
        return this.ack(session, f.ids);
      case 'ping':
        session.socket.send('{"op":"pong"}');
        return;
      default:
        return this.fail(session, 'invalidJson', `Unknown op ${JSON.stringify(f.op)}.`, false);
    }
  }

  private async login(session: Session, f: Record<string, unknown>): Promise<void> {
    if (session.key !== null) return this.fail(session, 'invalidJson', 'Already logged in.', false);
    const { appId, installationId, sign } = f;
    if (!isAppId(appId) || !isInstallationId(installationId)) {
      return this.fail(session, 'missingRequired', 'login needs appId, installationId and sign.', true);
    }
    const appKey = await this.appKey(appId);
    if (appKey === null || !checkLoginSign(sign, appKey, this.clock.now())) {
      return this.fail(session, 'unauthorized', 'Unauthorized: unknown appId or bad sign.', true);
    }
    if (this.closing) return;
    if (session.timer) clearTimeout(session.timer);
    const key = `${appId}\0${installationId}`;
    const previous = this.sessions.get(key);
    if (previous && previous !== session) {
      previous.key = null;
      previous.socket.close(closeCodes.replaced, 'Logged in again elsewhere.');
    }
    Object.assign(session, { key, appId, installationId });
    this.sessions.set(key, session);
    session.socket.send('{"op":"loggedin"}');
    const waiting = await this.store.mailbox(appId, installationId, this.clock.now(), mailboxBatch);
    for (const message of waiting) {
      this.sendOnce(session, message.id, JSON.stringify({ op: 'push', id: message.id, data: message.data, createdAt: isoDate(message.createdAt) }));
    }
  }

  private sendOnce(session: Session, id: string, frame: string): boolean {
    if (session.seen.has(id)) return false;
    if (session.seen.size >= maxSeen) session.seen.delete(session.seen.values().next().value as string);
    session.seen.add(id);
    session.socket.send(frame);
    this.delivered++;
    return true;
  }

  private ack(session: Session, ids: unknown): void {
    if (session.appId === null || session.installationId === null) {
      return this.fail(session, 'unauthorized', 'Log in first.', false);
    }
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) {
      return this.fail(session, 'invalidJson', 'ack needs "ids": an array of message ids.', false);
    }
    // An id no push could have (a NUL byte, say) acknowledges nothing; written with the others it
    // failed the whole batched write, and every device's acks of that flush with it.
    for (const id of (ids as string[]).filter(isPlausibleId)) {
      this.acks.push({ appId: session.appId, installationId: session.installationId, notificationId: id });
    }
    if (this.acks.length >= 1000) void this.flushAcks();
  }

  /** Delivers a batch to the devices of it that this node holds; returns how many got it. */
  deliver(batch: ChannelBatch): number {
    if (batch.expiresAt !== null && batch.expiresAt <= this.clock.now()) return 0;
    const frame = JSON.stringify({ op: 'push', id: batch.notificationId, data: batch.data, createdAt: isoDate(batch.createdAt) });
    let count = 0;
    for (const installationId of batch.installationIds) {
      const session = this.sessions.get(`${batch.appId}\0${installationId}`);
      if (session && this.sendOnce(session, batch.notificationId, frame)) count++;
    }
    return count;
  }

  /** Writes buffered acknowledgements; a failed write leaves the messages in the mailbox for the next login. */
  flushAcks(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.acks.length === 0) return;
      const entries = this.acks;
      this.acks = [];
      try {
        await this.store.ack(entries, this.clock.now());
      } catch (error) {
        this.logger.error({ err: error, count: entries.length }, 'push channel: storing acknowledgements failed');
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.flushTimer);
    for (const session of this.sessions.values()) session.socket.close(closeCodes.shuttingDown, 'Server shutting down.');
    this.sessions.clear();
    await this.flushAcks();
  }
}
