import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import type { OwnChannelProtocol } from '../../push/channel/own-protocol.ts';
import { onUpgrade } from '../websocket.ts';
import { closeWebSockets, type Drain } from '../drain.ts';

export const channelPath = '/1.1/push/channel';
const heartbeatMs = 30_000;
const maxFrameBytes = 64 * 1024;

/**
 * Roost's own push channel: a WebSocket at /1.1/push/channel (protocol in docs/push-channel.md).
 * This file only adapts `ws` sockets to the protocol; logins, mailboxes and acks live in the hub.
 */
export function registerPushChannel(app: FastifyInstance, options: { channel: OwnChannelProtocol; drain?: Drain }): void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxFrameBytes, perMessageDeflate: false });
  const alive = new WeakSet<WebSocket>();

  onUpgrade(app, channelPath, (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => {
      alive.add(ws);
      const connection = options.channel.connect({
        send: (text) => {
          if (ws.readyState === ws.OPEN) ws.send(text);
        },
        close: (code, reason) => ws.close(code, reason),
      });
      ws.on('message', (data, isBinary) => connection.receive(isBinary ? '' : data.toString()));
      ws.on('pong', () => alive.add(ws));
      ws.on('close', () => connection.closed());
      ws.on('error', () => ws.terminate());
    });
  });

  // A device that stops answering pings is dropped, so the hub never holds dead connections.
  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      if (!alive.has(ws)) {
        ws.terminate();
        continue;
      }
      alive.delete(ws);
      ws.ping();
    }
  }, heartbeatMs);
  heartbeat.unref();

  // Devices get a close frame (1001) and reconnect, through the proxy, to a node that is not stopping.
  options.drain?.onDrain(() => closeWebSockets(wss));
  app.addHook('preClose', async () => {
    clearInterval(heartbeat);
    await closeWebSockets(wss);
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
}
