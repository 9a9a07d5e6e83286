import { loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { systemClock } from './lib/clock.ts';
import { isEntryPoint } from './lib/entry-point.ts';
import { checkRedis, listenAtStart, openStoreAtStart, reportStartFailure } from './startup.ts';
import { buildServer } from './server.ts';

/** Starts one Roost node: config → storage → HTTP server. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel });
  const store = await openStoreAtStart(config);
  if (config.redisUrl) await checkRedis(config.redisUrl);
  if (!config.secret) config.secret = await store.serverSecret();
  const { app, services } = await buildServer({ config, store, clock: systemClock, logger });
  // Listening comes before the first application: a port in use stops the node before it prints keys.
  const url = await listenAtStart(app, config);

  const created = await services.registry.ensureDefault();
  if (created) {
    // Printed once, on the first start with an empty store, so the operator can copy the keys.
    process.stdout.write(
      `\nRoost created the application "default":\n  appId:     ${created.appId}\n  appKey:    ${created.appKey}\n  masterKey: ${created.masterKey}\n\n`,
    );
    logger.info({ appId: created.appId }, 'created application "default" (keys printed on stdout once)');
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    await app.close();
    await store.close();
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
