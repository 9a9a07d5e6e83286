import type { FastifyInstance, FastifyRequest } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import { ApiError } from '../../lib/errors.ts';
import { declared } from '../schema.ts';
import { appIdPattern } from '../../apps/keys.ts';
import type { LcPushProtocol } from '../../push/connection/protocol.ts';
import { onUpgrade } from '../websocket.ts';
import { closeWebSockets, type Drain } from '../drain.ts';

export const connectionPath = '/v1/push/connection';
/** The subprotocols of LeanCloud's push connection, preferred first (docs/push-connection.md). */
export const lcSubprotocols = ['lc.protobuf2.3', 'lc.protobuf2.1'];
const pingMs = 30_000;
/** The SDKs ping every 180 s and give up after 360 s without a pong: a socket silent for longer is gone. */
const silentLimitMs = 400_000;
const maxFrameBytes = 64 * 1024;
const routeTtlSeconds = 3600;
const appIdRequired = { kind: 'missingRequired', message: 'appId is required.' } as const;
/** ?appId=… of an app of this server (repeated, it is refused as no app's). */
const routeQuery = {
  type: 'object',
  required: ['appId'],
  properties: {
    appId: { 'x-missing': appIdRequired, allOf: [{ not: { const: '' }, 'x-error': appIdRequired }, { type: 'string', pattern: appIdPattern.source, 'x-error': 'unauthorized' }] },
  },
};

/** The ws(s):// address devices are sent to: the configured one, else this request's own host and scheme. */
function connectionUrl(request: FastifyRequest, configured: string | null): string {
  if (configured) return configured;
  return `${request.protocol === 'https' ? 'wss' : 'ws'}://${request.host}${connectionPath}`;
}

/**
 * LeanCloud's push router and push connection, for Android devices whose SDK was pointed at a domain
 * that now reaches Roost: GET /v1/route tells them where to connect (no keys: the SDK sends none), and
 * the WebSocket speaks the SDK's protobuf protocol through the same hub as Roost's own channel.
 */
export function registerPushConnection(
  app: FastifyInstance,
  options: { protocol: LcPushProtocol; appExists: (appId: string) => Promise<boolean>; url: string | null; silentLimitMs?: number; drain?: Drain },
): void {
  app.get<{ Querystring: { appId: string } }>('/v1/route', declared({ querystring: routeQuery }), async (request) => {
    const { appId } = request.query;
    if (!(await options.appExists(appId))) throw new ApiError('unauthorized');
    const server = connectionUrl(request, options.url);
    // secondary is required: the Android SDK dials it on its second attempt and hangs on a missing one.
    return { groupId: 'g0', server, secondary: server, ttl: routeTtlSeconds };
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxFrameBytes,
    perMessageDeflate: false,
    // The SDK rejects an answer that does not name lc.protobuf2.3; clients before 2018 may offer 2.1.
    handleProtocols: (offered) => lcSubprotocols.find((p) => offered.has(p)) ?? false,
  });
  const lastHeard = new WeakMap<WebSocket, number>();
  const silentLimit = options.silentLimitMs ?? silentLimitMs;

  onUpgrade(app, connectionPath, (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => {
      const heard = () => lastHeard.set(ws, Date.now());
      heard();
      const connection = options.protocol.connect({
        send: (frame) => {
          if (ws.readyState === ws.OPEN) ws.send(frame);
        },
        close: (code, reason) => ws.close(code, reason),
      });
      ws.on('message', (data, isBinary) => {
        heard();
        connection.receive(data as Buffer, isBinary);
      });
      ws.on('ping', heard);
      ws.on('pong', heard);
      ws.on('close', () => connection.closed());
      ws.on('error', () => ws.terminate());
    });
  });

  // Pings keep proxies and NAT mappings open; a device is dropped only when it has been silent longer
  // than its own keep-alive allows, so a phone that cannot answer at once (Doze) keeps its socket.
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const ws of wss.clients) {
      if (now - (lastHeard.get(ws) ?? 0) > silentLimit) ws.terminate();
      else ws.ping();
    }
  }, Math.min(pingMs, silentLimit / 3));
  sweep.unref();

  // A close frame (1001), not a cut: the socket ends as a server stop, not as a network failure.
  options.drain?.onDrain(() => closeWebSockets(wss));
  app.addHook('preClose', async () => {
    clearInterval(sweep);
    await closeWebSockets(wss);
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
