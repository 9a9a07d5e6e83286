import type { Logger } from 'pino';
import { isoDate } from '../../lib/clock.ts';
import { isAppId } from '../../apps/keys.ts';
import { isInstallationId } from '../installations.ts';
import type { ChannelHub, ChannelMessage, DeviceSession, Wire } from '../channel/hub.ts';
import { command, decodeCommand, encodeCommand, type GenericCommand } from './messages.ts';

/**
 * Close codes and error codes of LeanCloud's realtime service that this connection uses: the JS SDK
 * treats 4100 and 4103 as final (no reconnect); the Android SDKs read neither.
 */
export const lcCodes = { appNotAvailable: 4100, invalidLogin: 4103, loginTimeout: 4108 } as const;

const liveQueryService = 1;
const notServed = 'Roost serves push only: IM and LiveQuery are not available on this connection.';

/**
 * The payload the SDK reads: the push's data with `_channel` (which callback Activity shows it) and
 * `_expiration_time` (the SDK drops it after that) added, as LeanCloud's server added them.
 */
export function lcPayload(message: ChannelMessage): string {
  const data: Record<string, unknown> = { ...message.data };
  if (message.channel !== undefined) data._channel = message.channel;
  if (message.expiresAt !== null) data._expiration_time = isoDate(message.expiresAt);
  return JSON.stringify(data);
}

/** One message per `data` frame, no peerId and no service: every SDK version reads it as a push. */
const lcWire: Wire = {
  push: (m) => encodeCommand({ cmd: command.data, dataMessage: { ids: [m.id], msg: [{ data: lcPayload(m) }] } }),
};

export interface BinaryConnection {
  receive(frame: Uint8Array, isBinary: boolean): void;
  closed(): void;
}

export interface LcProtocolOptions {
  hub: ChannelHub;
  logger: Logger;
  /** Whether the application exists. */
  appExists: (appId: string) => Promise<boolean>;
  /** Whether the application has an installation with this installationId. */
  installationExists: (appId: string, installationId: string) => Promise<boolean>;
  /** A login naming an installation not saved yet is looked up once more after this long (the SDK saves it as it connects). */
  installationGraceMs?: number;
}

/**
 * LeanCloud's push connection as the Android SDKs speak it (docs/push-connection.md): binary frames
 * of one GenericCommand each; login (appId, installationId) → loggedin; data → ack; echo.
 */
export class LcPushProtocol {
  private readonly options: LcProtocolOptions;

  constructor(options: LcProtocolOptions) {
    this.options = options;
  }

  connect(socket: { send(frame: Uint8Array): void; close(code: number, reason: string): void }): BinaryConnection {
    const { hub } = this.options;
    const session = hub.open({ wire: lcWire, send: (frame) => socket.send(frame as Uint8Array), close: (code, reason) => socket.close(code, reason) }, () =>
      socket.close(lcCodes.loginTimeout, 'No login within 30 seconds.'),
    );
    return {
      receive: (frame, isBinary) => {
        // Text frames carry nothing the Android SDKs send; a frame that is no GenericCommand is dropped.
        const decoded = isBinary ? decodeCommand(frame) : null;
        if (decoded) hub.run(session, () => this.handle(session, decoded));
      },
      closed: () => hub.closed(session),
    };
  }

  private reply(session: DeviceSession, fields: GenericCommand): void {
    session.socket.send(encodeCommand(fields));
  }

  private async handle(session: DeviceSession, c: GenericCommand): Promise<void> {
    switch (c.cmd) {
      case command.login:
        if (c.service === liveQueryService) return this.refuse(session, c);
        return this.login(session, c);
      case command.ack:
        return this.options.hub.ack(session, (c.ackMessage?.ids ?? []).filter((id) => typeof id === 'string'));
      case command.echo:
        return this.reply(session, { cmd: command.echo, ...(c.i !== undefined && { i: c.i }) });
      default:
        // IM commands (session, conv, direct, …) come from IM clients: they get an error for their
        // request; a command without a serial number is ignored, as no push client sends one.
        if (c.i !== undefined) return this.refuse(session, c);
    }
  }

  private refuse(session: DeviceSession, c: GenericCommand): void {
    this.reply(session, {
      cmd: command.error,
      ...(c.i !== undefined && { i: c.i }),
      ...(c.peerId !== undefined && { peerId: c.peerId }),
      ...(c.service !== undefined && { service: c.service }),
      errorMessage: { code: lcCodes.appNotAvailable, reason: notServed },
    });
  }

  private async login(session: DeviceSession, c: GenericCommand): Promise<void> {
    const confirm = () =>
      this.reply(session, { cmd: command.loggedin, service: 0, ...(c.i !== undefined && { i: c.i }), loggedinMessage: { pushDisabled: false } });
    const { appId, installationId } = c;
    if (session.key !== null) {
      // A repeated login of the same device is confirmed again; a socket serves one device.
      if (appId === session.appId && installationId === session.installationId) confirm();
      return;
    }
    if (!isAppId(appId) || !isInstallationId(installationId)) {
      return session.socket.close(lcCodes.invalidLogin, 'login needs appId and installationId.');
    }
    if (!(await this.options.appExists(appId))) return session.socket.close(lcCodes.appNotAvailable, 'Unknown appId.');
    if (!(await this.installationKnown(appId, installationId))) {
      return session.socket.close(lcCodes.invalidLogin, 'No installation has this installationId.');
    }
    await this.options.hub.bind(session, appId, installationId, confirm);
  }

  private async installationKnown(appId: string, installationId: string): Promise<boolean> {
    if (await this.options.installationExists(appId, installationId)) return true;
    await new Promise((resolve) => setTimeout(resolve, this.options.installationGraceMs ?? 3000).unref());
    return this.options.installationExists(appId, installationId);
  }
}
