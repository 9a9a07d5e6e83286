import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { AppKeys } from './apps/keys.ts';
import { loadConfig, type Config } from './config.ts';
import { createLogger } from './logger.ts';
import { systemClock } from './lib/clock.ts';
import { isEntryPoint } from './lib/entry-point.ts';
import { checkRedis, listenAtStart, openStoreAtStart, reportStartFailure } from './startup.ts';
import { buildServer } from './server.ts';
import { keyFilePath } from './secret-keys.ts';
import type { FirstOperator } from './console/operators.ts';

/**
 * The keys of the application made on first start reach the operator and no log collector: on a
 * terminal they are printed; otherwise (a service manager, a container, a pipe, whose output is
 * collected as logs) they go to a file only its owner reads, and the log says where.
 */
export function showFirstKeys(keys: AppKeys, config: Pick<Config, 'dataDir'>, logger: Logger, operator?: FirstOperator | null): void {
  let text = `Roost created the application "default":\n  appId:     ${keys.appId}\n  appKey:    ${keys.appKey}\n  masterKey: ${keys.masterKey}\n`;
  if (operator) text += `and the console operator (sign in at /console):\n  name:      ${operator.name}\n  password:  ${operator.password}\n`;
  if (process.stdout.isTTY) {
    process.stdout.write(`\n${text}\n`);
    logger.info({ appId: keys.appId }, 'created application "default" (keys printed on the terminal once)');
    return;
  }
  const keysFile = resolve(config.dataDir, 'default-app-keys.txt');
  mkdirSync(dirname(keysFile), { recursive: true });
  writeFileSync(keysFile, text, { mode: 0o600 });
  chmodSync(keysFile, 0o600);
  logger.info({ appId: keys.appId, keysFile }, 'created application "default": its keys are in keysFile (readable by this user only); read them, then delete the file');
}

/** Starts one Roost node: config → storage → HTTP server. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel });
  const store = await openStoreAtStart(config);
  const keyFile = config.databaseUrl ? keyFilePath(config) : null;
  if (keyFile && !config.secretKeyFile) {
    logger.warn({ keyFile }, 'secrets are sealed with the key generated in keyFile: every node needs the same key (copy the file, or set ROOST_SECRET_KEY)');
  }
  if (config.redisUrl) await checkRedis(config.redisUrl);
  if (!config.secret) config.secret = await store.serverSecret();
  const { app, services, drain } = await buildServer({ config, store, clock: systemClock, logger });
  // Listening comes before the first application: a port in use stops the node before it prints keys.
  const url = await listenAtStart(app, config);

  const created = await services.registry.ensureDefault();
  // Only the node that made the first application makes the first operator: one of each, printed once.
  if (created) showFirstKeys(created, config, logger, await services.operators.ensureFirst());

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: draining connections');
    // A stop that hangs (a push delivery waiting on a maker) still ends, and says it did not finish.
    setTimeout(() => {
      logger.error('shutdown did not finish in SHUTDOWN_GRACE_MS + 10 s: exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 10_000).unref();
    const { forced } = await drain.drain(config.shutdownGraceMs);
    if (forced > 0) logger.warn({ forced }, 'connections still open after SHUTDOWN_GRACE_MS were closed');
    // Push workers finish the pages they hold (the others stay for the other nodes), acks are stored.
    await app.close();
    await store.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // Fan-out workers run in every node; app.close() stops them (an onClose hook of buildServer).
  services.push.start();
  logger.info({ store: store.kind, url }, 'roost is listening');
}

if (isEntryPoint(import.meta.url)) {
  serve().catch((error) => process.exit(reportStartFailure(error)));
}
