import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

const routes = new WeakMap<FastifyInstance, Map<string, UpgradeHandler>>();

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
      const found = created.get((request.url ?? '').split('?')[0].replace(/\/+$/, ''));
      if (found) return found(request, socket, head);
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
    });
  }
  table.set(path, handler);
}
