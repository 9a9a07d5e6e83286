import { Writable } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { ManualClock, systemClock, type Clock } from '../../src/lib/clock.ts';
import { openPostgresStore } from '../../src/storage/postgres/open.ts';
import { openSqliteStore } from '../../src/storage/sqlite/open.ts';
import type { Store } from '../../src/storage/store.ts';
import type { FastifyInstance } from 'fastify';
import { buildServer, type Services } from '../../src/server.ts';
import type { VendorDispatch } from '../../src/push/vendor-dispatch.ts';
import { freshPostgresDatabase, storeKind } from './databases.ts';
import { Client } from './client.ts';

export { storeKind };

/** A database for one test file: a private PostgreSQL database or a temporary SQLite file. */
export interface TestDatabase {
  kind: 'sqlite' | 'postgres';
  /** What a Roost process needs in its environment to use this database. */
  env: Record<string, string>;
  open(): Promise<Store>;
  drop(): Promise<void>;
}

export async function testDatabase(): Promise<TestDatabase> {
  if (storeKind === 'postgres') {
    const db = await freshPostgresDatabase();
    return {
      kind: 'postgres',
      env: { DATABASE_URL: db.url },
      open: () => openPostgresStore({ url: db.url, poolSize: 5 }),
      drop: db.drop,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'roost-test-'));
  const path = join(dir, 'roost.sqlite');
  return {
    kind: 'sqlite',
    env: { SQLITE_PATH: path },
    open: () => openSqliteStore({ path }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

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
