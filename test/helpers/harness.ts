import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { ManualClock, systemClock, type Clock } from '../../src/lib/clock.ts';
import type { Store } from '../../src/storage/store.ts';
import type { FastifyInstance } from 'fastify';
import { buildServer, type Services } from '../../src/server.ts';
import type { VendorDispatch } from '../../src/push/vendor-dispatch.ts';
import { testDatabase, storeKind, type TestDatabase } from './databases.ts';
import { Client } from './client.ts';

// The database helpers live in databases.ts, which store-level tests import without the server.
export { storeKind, testDatabase, type TestDatabase };

export interface TestServer {
  url: string;
  appId: string;
  appKey: string;
  masterKey: string;
  store: Store;
  services: Services;
  /** The Fastify instance, for tests that read its routes (the fuzz test fuzzes every one). */
  app: FastifyInstance;
  clock: Clock;
  config: Config;
  /** Every log line the server wrote, for tests that check what never reaches a log. */
  logs: string[];
  /** A client signed with the app key (X-LC-* headers, as the SDKs send). */
  client: Client;
  /** A client using the master key. */
  master: Client;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  env?: Record<string, string>;
  database?: TestDatabase;
  /** The phone-maker senders the fan-out hands maker-routed devices to. */
  vendorDispatch?: VendorDispatch;
}

/** Starts Roost in this process on a free port, with a fresh database and one application. */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const database = options.database ?? (await testDatabase());
  const ownsDatabase = !options.database;
  const store = await database.open();
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', ...database.env, ...options.env });
  config.secret ||= await store.serverSecret();
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const clock = options.clock ?? systemClock;
  const logger = createLogger({ level: 'info', destination });
  const { app, services } = await buildServer({ config, store, clock, logger, vendorDispatch: options.vendorDispatch });
  const keys = await services.registry.create('test');
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  // Links in mails point at this server unless a test names another address.
  if (!options.env?.PUBLIC_URL) config.publicUrl = url;
  return {
    url,
    ...keys,
    store,
    services,
    app,
    clock,
    config,
    logs,
    client: new Client({ url, appId: keys.appId, appKey: keys.appKey }),
    master: new Client({ url, appId: keys.appId, appKey: keys.appKey, masterKey: keys.masterKey }),
    async close() {
      await app.close();
      await store.close();
      if (ownsDatabase) await database.drop();
    },
  };
}

export { ManualClock };
