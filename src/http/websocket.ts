import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../lib/errors.ts';

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

const routes = new WeakMap<FastifyInstance, Map<string, UpgradeHandler>>();

function isWebSocket(request: IncomingMessage): boolean {
  return (request.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/**
 * Node hands every request with an Upgrade header to the 'upgrade' listeners once there is one, so a
 * client offering another protocol (Java's HttpClient offers h2c on every http:// request) got no
 * answer. Without a body it is answered as the plain request it also is; Node has stopped parsing the
 * connection, so a body cannot be read and is refused in words, and the connection closed either way.
 */
function answerPlainly(app: FastifyInstance, request: IncomingMessage, socket: Duplex): void {
  const response = new ServerResponse(request);
  response.shouldKeepAlive = false;
  response.assignSocket(socket as Socket);
  response.on('finish', () => {
    response.detachSocket(socket as Socket);
    socket.end();
  });
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody) {
    app.server.emit('request', request, response);
    return;
  }
  const refused = new ApiError('other', `Upgrade to ${request.headers.upgrade} is not supported: send the request without an Upgrade header.`);
  response.writeHead(refused.status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(refused.toBody()));
}

/**
 * Routes WebSocket upgrades by path: the server has one 'upgrade' listener, and a path no
 * protocol serves is answered 404 and closed.
 */
export function onUpgrade(app: FastifyInstance, path: string, handler: UpgradeHandler): void {
  let table = routes.get(app);
  if (!table) {
    const created = new Map<string, UpgradeHandler>();
    routes.set(app, (table = created));
    app.server.on('upgrade', (request, socket, head) => {
      if (!isWebSocket(request)) return answerPlainly(app, request, socket);
      const found = created.get((request.url ?? '').split('?')[0].replace(/\/+$/, ''));
      if (found) return found(request, socket, head);
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    });
  }
  table.set(path, handler);
}
