import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, ConfigError } from './config.ts';
import { createLogger } from './logger.ts';
import { systemClock } from './lib/clock.ts';
import { openStore } from './storage/open.ts';
import { buildServer } from './server.ts';

/** Starts one Roost node: config → storage → HTTP server. */
export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`roost: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel });
  const store = await openStore(config);
  if (!config.secret) config.secret = await store.serverSecret();
  const { app, services } = await buildServer({ config, store, clock: systemClock, logger });

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

  const url = await app.listen({ host: config.host, port: config.port });
  // Fan-out workers run in every node; app.close() stops them (an onClose hook of buildServer).
  services.push.start();
  logger.info({ store: store.kind, url }, 'roost is listening');
}

const isEntry = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1]);
if (isEntry) {
  serve().catch((error) => {
    console.error('roost: failed to start:', error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
