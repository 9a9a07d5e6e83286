import { WebSocket } from 'ws';
import { md5Hex } from '../../lib/crypto.ts';

export interface PushFrame {
  op: 'push';
  id: string;
  data: Record<string, unknown>;
  createdAt: string;
}

export interface ChannelClientOptions {
  /** Roost's base URL (http://host:port) or the channel's ws:// URL. */
  url: string;
  appId: string;
  appKey: string;
  installationId: string;
  /** Acknowledge every message as it arrives (the default), as a device does once it has stored it. */
  autoAck?: boolean;
  onPush?: (frame: PushFrame) => void;
}

/** Closes a client socket and resolves once it is closed. */
export function closeSocket(socket: WebSocket | null): Promise<void> {
  if (!socket || socket.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.close();
  });
}

export class ChannelError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

export function channelUrl(url: string): string {
  if (url.startsWith('ws://') || url.startsWith('wss://')) return url;
  return url.replace(/^http/, 'ws').replace(/\/+$/, '') + '/1.1/push/channel';
}

/** A small client of Roost's own push channel (docs/push-channel.md), used by tests, the benchmark and the device simulator. */
export class ChannelClient {
  readonly options: ChannelClientOptions;
  readonly messages: PushFrame[] = [];
  /** How many times each message id arrived: a correct server sends each once per connection. */
  readonly received = new Map<string, number>();
  readonly errors: Array<{ code: number; error: string }> = [];
  private socket: WebSocket | null = null;
  private waiters: Array<() => void> = [];

  constructor(options: ChannelClientOptions) {
    this.options = options;
  }

  /** Opens the socket and logs in; rejects with a ChannelError when Roost refuses the login. */
  connect(): Promise<void> {
    const socket = new WebSocket(channelUrl(this.options.url), { perMessageDeflate: false });
    this.socket = socket;
    return new Promise((resolve, reject) => {
      let settled = false;
      socket.on('open', () => {
        const timestamp = String(Date.now());
        const sign = `${md5Hex(timestamp + this.options.appKey)},${timestamp}`;
        socket.send(JSON.stringify({ op: 'login', appId: this.options.appId, installationId: this.options.installationId, sign }));
      });
      socket.on('message', (raw) => {
        const frame = JSON.parse(raw.toString()) as { op: string; [key: string]: unknown };
        if (frame.op === 'loggedin' && !settled) {
          settled = true;
          resolve();
        } else if (frame.op === 'error') {
          this.errors.push({ code: frame.code as number, error: frame.error as string });
          if (!settled) {
            settled = true;
            reject(new ChannelError(frame.code as number, frame.error as string));
          }
        } else if (frame.op === 'push') {
          const push = frame as unknown as PushFrame;
          this.messages.push(push);
          this.received.set(push.id, (this.received.get(push.id) ?? 0) + 1);
          this.options.onPush?.(push);
          if (this.options.autoAck !== false) this.ack([push.id]);
          const waiters = this.waiters;
          this.waiters = [];
          for (const wake of waiters) wake();
        }
      });
      socket.on('error', (error) => {
        if (!settled) {
          settled = true;
          reject(error);
        }
      });
      socket.on('close', () => {
        if (!settled) {
          settled = true;
          reject(new Error('channel closed before login'));
        }
      });
    });
  }

  send(frame: unknown): void {
    this.socket?.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  ack(ids: string[]): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.send({ op: 'ack', ids });
  }

  /** Resolves once `count` messages have arrived in total; rejects after timeoutMs. */
  async waitForMessages(count: number, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.options.installationId}: ${this.messages.length} of ${count} messages after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  get open(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  close(): Promise<void> {
    return closeSocket(this.socket);
  }
}
