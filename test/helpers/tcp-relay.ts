import { createServer, connect, type Socket } from 'node:net';

/**
 * A TCP relay the test owns between Roost and a server (PostgreSQL, Redis): `cut()` drops every
 * connection through it and refuses new ones, as a failed network or a restarting server does;
 * `restore()` lets connections through again. The listening port stays the same throughout.
 */
export interface TcpRelay {
  port: number;
  /** Connections made through the relay since it started. */
  readonly connections: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const open = new Set<Socket>();
  let cut = false;
  let connections = 0;
  const server = createServer((inbound) => {
    if (cut) {
      inbound.destroy();
      return;
    }
    connections++;
    const outbound = connect(target.port, target.host);
    for (const socket of [inbound, outbound]) {
      open.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        open.delete(socket);
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    port,
    get connections() {
      return connections;
    },
    cut() {
      cut = true;
      dropAll();
    },
    restore() {
      cut = false;
    },
    async close() {
      cut = true;
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `url` with its host and port replaced by the relay's. */
export function throughRelay(url: string, relay: TcpRelay): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(relay.port);
  return parsed.toString();
}
