import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.ts';
import type { JsonObject } from '../../objects/types.ts';
import { isPlausibleId } from '../../objects/values.ts';
import type { AckEntry, PushStore } from '../../storage/push-store.ts';

/** One message for one device, as the hub hands it to a protocol to write. */
export interface ChannelMessage {
  id: string;
  data: JsonObject;
  createdAt: number;
  expiresAt: number | null;
  /** The first channel the push named, when it named any. */
  channel?: string;
}

/** One message for many devices, as the fan-out publishes it (and Redis carries it between nodes). */
export interface ChannelBatch {
  appId: string;
  notificationId: string;
  createdAt: number;
  expiresAt: number | null;
  channel?: string;
  data: JsonObject;
  installationIds: string[];
}

/** How one protocol writes a message: a batch is encoded once per protocol, not once per device. */
export interface Wire {
  push(message: ChannelMessage): string | Uint8Array;
}

/** What the hub needs of a connection; each protocol adapts its WebSocket. */
export interface DeviceSocket {
  readonly wire: Wire;
  send(frame: string | Uint8Array): void;
  close(code: number, reason: string): void;
}

/** Close codes the hub itself uses (docs/push-channel.md). */
export const closeCodes = { loginFailed: 4001, replaced: 4002, shuttingDown: 1001 } as const;

/** Messages kept for one device, at most: its newest ones are sent at a login, older ones dropped (docs/push-channel.md). */
export const mailboxLimit = 1000;
const loginTimeoutMs = 30_000;
const maxSeen = 2000;
const resendConcurrency = 8;

/** A connection as the hub tracks it; protocols read who is logged in from it. */
export interface DeviceSession {
  readonly socket: DeviceSocket;
  key: string | null;
  appId: string | null;
  installationId: string | null;
  /** Ids sent on this connection, so a message relayed twice (a page redone after a crash) is sent once. */
  seen: Set<string>;
  busy: Promise<void>;
  timer: NodeJS.Timeout | null;
}

/**
 * The devices connected to this node, whatever protocol they speak (Roost's own channel, LeanCloud's
 * push connection): binds them to their installation, sends what waits in their mailbox, delivers
 * relayed batches to the ones it holds, and batches their acknowledgements into the store.
 */
export class ChannelHub {
  private readonly store: PushStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly sessions = new Map<string, DeviceSession>();
  private acks: AckEntry[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly flushTimer: NodeJS.Timeout;
  private closing = false;
  delivered = 0;

  constructor(options: { store: PushStore; clock: Clock; logger: Logger; ackFlushMs?: number }) {
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
    this.flushTimer = setInterval(() => void this.flushAcks(), options.ackFlushMs ?? 200);
    this.flushTimer.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** A new connection; `onLoginTimeout` closes it in its protocol's words when it has not logged in in time. */
  open(socket: DeviceSocket, onLoginTimeout: () => void): DeviceSession {
    const session: DeviceSession = { socket, key: null, appId: null, installationId: null, seen: new Set(), busy: Promise.resolve(), timer: null };
    session.timer = setTimeout(() => {
      if (session.key === null) onLoginTimeout();
    }, loginTimeoutMs);
    session.timer.unref();
    return session;
  }

  /** Runs a device's frames one after another: a push after login waits for the login. */
  run(session: DeviceSession, task: () => Promise<void> | void): void {
    session.busy = session.busy.then(task).catch((error) => {
      this.logger.error({ err: error }, 'push channel: frame failed');
    });
  }

  closed(session: DeviceSession): void {
    if (session.timer) clearTimeout(session.timer);
    if (session.key !== null && this.sessions.get(session.key) === session) this.sessions.delete(session.key);
  }

  /**
   * Binds a connection to one device (a later login of the same device on this node replaces it),
   * lets the protocol confirm the login, then sends what waits in the device's mailbox.
   */
  async bind(session: DeviceSession, appId: string, installationId: string, confirm: () => void): Promise<void> {
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
    confirm();
    await this.sendMailbox(session, appId, installationId);
  }

  private async sendMailbox(session: DeviceSession, appId: string, installationId: string): Promise<void> {
    const waiting = await this.store.mailbox(appId, installationId, this.clock.now(), mailboxLimit);
    for (const message of waiting) this.sendOnce(session, message.id, session.socket.wire.push(message));
  }

  /**
   * Sends every connected device what waits in its mailbox, as at a login. The relay calls it when
   * this node listens again after losing its subscription: batches published meanwhile never reached
   * this hub, but their messages are in the mailboxes (a page is routed into them before it is
   * published). A few devices at a time, so a node holding many does not flood the database.
   */
  async resendMailboxes(): Promise<void> {
    const pending = [...this.sessions.values()];
    const worker = async () => {
      for (let session = pending.pop(); session; session = pending.pop()) {
        const { appId, installationId } = session;
        if (appId === null || installationId === null || this.sessions.get(session.key ?? '') !== session) continue;
        await this.sendMailbox(session, appId, installationId).catch((error) => {
          this.logger.warn({ err: error, installationId }, 'push channel: resending a mailbox failed; the device gets it at its next login');
        });
      }
    };
    await Promise.all(Array.from({ length: resendConcurrency }, worker));
  }

  private sendOnce(session: DeviceSession, id: string, frame: string | Uint8Array): boolean {
    if (session.seen.has(id)) return false;
    if (session.seen.size >= maxSeen) session.seen.delete(session.seen.values().next().value as string);
    session.seen.add(id);
    session.socket.send(frame);
    this.delivered++;
    return true;
  }

  /** Buffers a logged-in device's acknowledgements for the next flush. */
  ack(session: DeviceSession, ids: string[]): void {
    if (session.appId === null || session.installationId === null) return;
    // An id no push could have (a NUL byte, say) acknowledges nothing; written with the others it
    // failed the whole batched write, and every device's acks of that flush with it.
    for (const id of ids.filter(isPlausibleId)) {
      this.acks.push({ appId: session.appId, installationId: session.installationId, notificationId: id });
    }
    if (this.acks.length >= 1000) void this.flushAcks();
  }

  /** Delivers a batch to the devices of it that this node holds; returns how many got it. */
  deliver(batch: ChannelBatch): number {
    if (batch.expiresAt !== null && batch.expiresAt <= this.clock.now()) return 0;
    const message: ChannelMessage = {
      id: batch.notificationId,
      data: batch.data,
      createdAt: batch.createdAt,
      expiresAt: batch.expiresAt,
      channel: batch.channel,
    };
    const frames = new Map<Wire, string | Uint8Array>();
    let count = 0;
    for (const installationId of batch.installationIds) {
      const session = this.sessions.get(`${batch.appId}\0${installationId}`);
      if (!session) continue;
      const { wire } = session.socket;
      let frame = frames.get(wire);
      if (frame === undefined) frames.set(wire, (frame = wire.push(message)));
      if (this.sendOnce(session, batch.notificationId, frame)) count++;
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
