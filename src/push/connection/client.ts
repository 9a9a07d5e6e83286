import { WebSocket } from 'ws';
import { command, decodeCommand, encodeCommand } from './messages.ts';
import { closeSocket } from '../channel/client.ts';

export interface LcClientOptions {
  /** The ws(s):// address the router gave, or Roost's base URL (http://host:port). */
  url: string;
  appId: string;
  installationId: string;
  /** Acknowledge every data frame as it arrives (the default), as the Android SDK does. */
  autoAck?: boolean;
  onPush?: (message: { id: string; data: string }) => void;
}

/**
 * A device on LeanCloud's push connection as the Android SDK behaves on it (docs/push-connection.md):
 * login with appId and installationId, ack of every data frame. For `roost devices simulate --protocol lc`
 * and the benchmark; the tests' probe that also sends malformed frames is test/helpers/lc-device.ts.
 */
export class LcClient {
  readonly options: LcClientOptions;
  /** How many times each message id arrived: a correct server sends each once per connection. */
  readonly received = new Map<string, number>();
  private socket: WebSocket | null = null;

  constructor(options: LcClientOptions) {
    this.options = options;
  }

  /** Opens the socket and logs in; resolves on loggedin, rejects when the socket closes first. */
  connect(): Promise<void> {
    const url = /^wss?:/.test(this.options.url) ? this.options.url : `${this.options.url.replace(/^http/, 'ws').replace(/\/+$/, '')}/v1/push/connection`;
    const socket = new WebSocket(url, ['lc.protobuf2.3'], { perMessageDeflate: false });
    this.socket = socket;
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve();
      };
      socket.on('open', () => {
        socket.send(encodeCommand({ cmd: command.login, appId: this.options.appId, installationId: this.options.installationId }));
      });
      socket.on('message', (raw, isBinary) => {
        const frame = isBinary ? decodeCommand(raw as Buffer) : null;
        if (frame?.cmd === command.loggedin) settle();
        if (frame?.cmd !== command.data) return;
        const ids = frame.dataMessage?.ids ?? [];
        ids.forEach((id, k) => {
          this.received.set(id, (this.received.get(id) ?? 0) + 1);
          this.options.onPush?.({ id, data: frame.dataMessage?.msg?.[k]?.data ?? '' });
        });
        if (this.options.autoAck !== false && socket.readyState === WebSocket.OPEN) {
          socket.send(encodeCommand({ cmd: command.ack, installationId: this.options.installationId, ackMessage: { ids } }));
        }
      });
      socket.on('error', (error) => settle(error));
      socket.on('close', (code) => settle(new Error(`closed with ${code} before loggedin`)));
    });
  }

  get open(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  close(): Promise<void> {
    return closeSocket(this.socket);
  }
}
