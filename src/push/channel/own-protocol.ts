import type { Clock } from '../../lib/clock.ts';
import { isoDate } from '../../lib/clock.ts';
import { md5Hex, safeEqual } from '../../lib/crypto.ts';
import { catalogue } from '../../lib/errors.ts';
import { isAppId } from '../../apps/keys.ts';
import { isInstallationId } from '../installations.ts';
import { closeCodes, type ChannelHub, type DeviceSession, type Wire } from './hub.ts';

const signatureWindowMs = 15 * 60 * 1000;

/** Checks a login `sign`: md5hex(timestamp + appKey),timestamp — X-LC-Sign made with the app key. */
export function checkLoginSign(sign: unknown, appKey: string, now: number): boolean {
  if (typeof sign !== 'string') return false;
  const [digest, timestamp, ...rest] = sign.split(',');
  if (rest.length > 0 || !digest || !timestamp || !/^\d{1,16}$/.test(timestamp)) return false;
  if (Math.abs(now - Number(timestamp)) > signatureWindowMs) return false;
  return safeEqual(md5Hex(timestamp + appKey), digest.toLowerCase());
}

/** Roost's own channel writes a message as one JSON text frame (docs/push-channel.md). */
const ownWire: Wire = {
  push: (m) => JSON.stringify({ op: 'push', id: m.id, data: m.data, createdAt: isoDate(m.createdAt) }),
};

export interface TextConnection {
  receive(text: string): void;
  closed(): void;
}

/** Roost's own channel: JSON text frames, a login signed with the app key (docs/push-channel.md). */
export class OwnChannelProtocol {
  private readonly hub: ChannelHub;
  private readonly clock: Clock;
  /** The app keys a login may be signed with (more than one during a rotation's grace period); null: no such app. */
  private readonly appKeys: (appId: string) => Promise<string[] | null>;

  constructor(options: { hub: ChannelHub; clock: Clock; appKeys: (appId: string) => Promise<string[] | null> }) {
    this.hub = options.hub;
    this.clock = options.clock;
    this.appKeys = options.appKeys;
  }

  connect(socket: { send(text: string): void; close(code: number, reason: string): void }): TextConnection {
    const session = this.hub.open({ wire: ownWire, send: (frame) => socket.send(frame as string), close: (code, reason) => socket.close(code, reason) }, () =>
      this.fail(session, 'unauthorized', 'Log in within 30 seconds.', true),
    );
    return {
      receive: (text) => this.hub.run(session, () => this.handle(session, text)),
      closed: () => this.hub.closed(session),
    };
  }

  private fail(session: DeviceSession, kind: keyof typeof catalogue, error: string, close: boolean): void {
    session.socket.send(JSON.stringify({ op: 'error', code: catalogue[kind].code, error }));
    if (close) session.socket.close(closeCodes.loginFailed, error.slice(0, 120));
  }

  private async handle(session: DeviceSession, text: string): Promise<void> {
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
        if (session.appId === null) return this.fail(session, 'unauthorized', 'Log in first.', false);
        if (!Array.isArray(f.ids) || f.ids.some((id) => typeof id !== 'string')) {
          return this.fail(session, 'invalidJson', 'ack needs "ids": an array of message ids.', false);
        }
        return this.hub.ack(session, f.ids as string[]);
      case 'ping':
        session.socket.send('{"op":"pong"}');
        return;
      default:
        return this.fail(session, 'invalidJson', `Unknown op ${JSON.stringify(f.op)}.`, false);
    }
  }

  private async login(session: DeviceSession, f: Record<string, unknown>): Promise<void> {
    if (session.key !== null) return this.fail(session, 'invalidJson', 'Already logged in.', false);
    const { appId, installationId, sign } = f;
    if (!isAppId(appId) || !isInstallationId(installationId)) {
      return this.fail(session, 'missingRequired', 'login needs appId, installationId and sign.', true);
    }
    const appKeys = await this.appKeys(appId);
    if (appKeys === null || !appKeys.some((appKey) => checkLoginSign(sign, appKey, this.clock.now()))) {
      return this.fail(session, 'unauthorized', 'Unauthorized: unknown appId or bad sign.', true);
    }
    await this.hub.bind(session, appId, installationId, () => session.socket.send('{"op":"loggedin"}'));
  }
}
