import { Server as NetServer, type Socket } from 'node:net';
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebSocket, WebSocketServer } from 'ws';

/** What a drain came to: connections still open when the grace ran out (then destroyed). */
export interface DrainOutcome {
  forced: number;
}

/** Close code 1001 (going away): the server is stopping; the client reconnects, through the proxy to another node. */
export const goingAway = { code: 1001, reason: 'Server shutting down.' } as const;
/** How long a WebSocket peer has to answer the close frame before its socket is destroyed. */
const closeHandshakeMs = 1000;
const pollMs = 25;
/**
 * How long, at most, a connection left idle since the drain began may stay: a proxy closes its own
 * idle ones first (docs/deploy/nginx.conf: keepalive_timeout 2s upstream), a direct client's is
 * closed then. Any connection that carries a request during the drain ends with its answer.
 */
const idleCloseMs = 5000;

/**
 * Sends every client of a WebSocket server a close frame (1001) and waits, a second at most, for
 * their answers: a socket terminated without one looks to the device like a network failure.
 */
export async function closeWebSockets(wss: WebSocketServer): Promise<void> {
  const clients = [...wss.clients];
  const closed = clients.map((ws: WebSocket) => new Promise<void>((resolve) => ws.once('close', () => resolve())));
  for (const ws of clients) ws.close(goingAway.code, goingAway.reason);
  const late = setTimeout(() => {
    for (const ws of clients) ws.terminate();
  }, closeHandshakeMs);
  await Promise.all(closed);
  clearTimeout(late);
}

/**
 * A node's graceful stop, before app.close(): it stops listening (a proxy's next connection is
 * refused and goes to another node) but leaves open keep-alive connections alone, since closing one
 * races a request the proxy is sending on it (which it may not retry: a POST). Every answer from
 * then on says `Connection: close`, so each connection ends after its request in flight or its next
 * one, and a proxy's idle ones when its own keep-alive timeout ends them (else after idleCloseMs, or
 * half the grace); WebSockets get a close frame. It returns when no connection is left, or destroys
 * what is left when the grace runs out.
 */
export class Drain {
  private readonly server: HttpServer;
  private readonly sockets = new Set<Socket>();
  private readonly closers: Array<() => Promise<void>> = [];
  private started = false;

  constructor(server: HttpServer) {
    this.server = server;
    // Per connection, not per request: the set costs nothing on the request path.
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  get draining(): boolean {
    return this.started;
  }

  /** Runs at the start of a drain (WebSocket servers close their clients). */
  onDrain(closer: () => Promise<void>): void {
    this.closers.push(closer);
  }

  async drain(graceMs: number): Promise<DrainOutcome> {
    this.started = true;
    const lastAnswer = (_request: IncomingMessage, response: ServerResponse) => {
      response.shouldKeepAlive = false;
    };
    this.server.prependListener('request', lastAnswer);
    // net's close, not http's: http's also closes idle keep-alive connections at once (see above).
    NetServer.prototype.close.call(this.server);
    for (const socket of this.sockets) {
      // The answer being prepared on the connection, the one place Node keeps it (as http-terminator reads it).
      const response = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
      if (response && !response.headersSent) response.shouldKeepAlive = false;
    }
    await Promise.all(this.closers.map((close) => close()));
    const began = Date.now();
    await this.settle(began + Math.min(idleCloseMs, graceMs / 2));
    this.server.closeIdleConnections();
    await this.settle(began + graceMs);
    const forced = this.sockets.size;
    for (const socket of this.sockets) socket.destroy();
    this.server.off('request', lastAnswer);
    return { forced };
  }

  private async settle(until: number): Promise<void> {
    while (this.sockets.size > 0 && Date.now() < until) await sleep(pollMs);
  }
}
