import WebSocket from 'ws';
import { command, decodeCommand, encodeCommand, type GenericCommand } from '../../src/push/connection/messages.ts';

/**
 * A device speaking LeanCloud's push connection the way the Android SDK does (binary GenericCommand
 * frames, login with appId + installationId and systemInfo, ack of every data frame), for tests.
 */
export class LcDevice {
  readonly frames: GenericCommand[] = [];
  readonly pushes: Array<{ id: string; data: Record<string, unknown> }> = [];
  socket!: WebSocket;
  closeCode: number | null = null;
  autoAck = true;
  private waiters: Array<() => void> = [];

  /** `options`: TLS settings for a wss:// address (the CA of a test certificate). */
  static async open(url: string, protocols: string[] = ['lc.protobuf2.3'], options: WebSocket.ClientOptions = {}): Promise<LcDevice> {
    const device = new LcDevice();
    const socket = new WebSocket(url, protocols, { perMessageDeflate: false, ...options });
    device.socket = socket;
    socket.on('message', (raw, isBinary) => {
      const frame = isBinary ? decodeCommand(raw as Buffer) : null;
      if (!frame) throw new Error('Roost sent a frame that is no GenericCommand');
      device.frames.push(frame);
      if (frame.cmd === command.data) {
        const ids = frame.dataMessage?.ids ?? [];
        ids.forEach((id, k) => device.pushes.push({ id, data: JSON.parse(frame.dataMessage!.msg![k].data) }));
        if (device.autoAck) device.send({ cmd: command.ack, installationId: 'x', ackMessage: { ids } });
      }
      device.wake();
    });
    socket.on('close', (code) => {
      device.closeCode = code;
      device.wake();
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return device;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  send(fields: GenericCommand | Uint8Array): void {
    this.socket.send(fields instanceof Uint8Array ? fields : encodeCommand(fields));
  }

  /** Logs in as the unified Android SDK does: no `i`, no service, loginMessage.systemInfo. */
  login(appId: string, installationId: string): void {
    this.send({
      cmd: command.login,
      appId,
      installationId,
      loginMessage: { systemInfo: { deviceType: 1, isEmulator: true, androidVersion: { apiLevel: '33', codename: 'REL' }, osVersion: { build: 'Google/google/Pixel' } } },
    });
  }

  async until<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value) return value;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  frame(cmd: number): Promise<GenericCommand> {
    return this.until(`command ${cmd}`, () => this.frames.find((f) => f.cmd === cmd));
  }

  closed(): Promise<number> {
    return this.until('close', () => this.closeCode);
  }

  close(): void {
    this.socket.terminate();
  }
}
