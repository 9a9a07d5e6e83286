import { parseArgs } from 'node:util';
import { simulateDevices } from './simulate.ts';

export const devicesUsage =
  'devices simulate --url URL --app-id ID --app-key KEY --count N [--prefix dev-] [--start 0] [--concurrency 200] [--protocol own|lc]\n' +
  '                                          connect N simulated devices to the own push channel, or to LeanCloud\'s push connection with\n' +
  '                                          --protocol lc (JSON lines on stdout)';

/**
 * `roost devices simulate …`: holds N device connections until interrupted, printing a JSON line
 * when they are connected, when all of them have a message, and every 5 seconds.
 */
export async function devicesCommand(args: string[], usageError: (message: string) => never): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'simulate') usageError(`unknown devices command "${sub ?? ''}"`);
  const { values } = parseArgs({
    args: rest,
    options: {
      url: { type: 'string' },
      'app-id': { type: 'string' },
      'app-key': { type: 'string' },
      count: { type: 'string', default: '100' },
      prefix: { type: 'string', default: 'dev-' },
      start: { type: 'string', default: '0' },
      concurrency: { type: 'string', default: '200' },
      protocol: { type: 'string', default: 'own' },
    },
  });
  const url = values.url;
  const appId = values['app-id'];
  const appKey = values['app-key'];
  if (!url || !appId || !appKey) usageError('devices simulate needs --url, --app-id and --app-key');
  const count = Number(values.count);
  const start = Number(values.start);
  const concurrency = Number(values.concurrency);
  if (![count, start, concurrency].every((n) => Number.isInteger(n) && n >= 0) || concurrency < 1) {
    usageError('--count, --start and --concurrency must be whole numbers');
  }
  const protocol = values.protocol;
  if (protocol !== 'own' && protocol !== 'lc') usageError('--protocol must be own or lc');
  const emit = (event: Record<string, unknown>) => process.stdout.write(JSON.stringify(event) + '\n');
  const simulation = await simulateDevices({ url, appId, appKey, count, prefix: values.prefix!, start, concurrency, protocol, emit });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await simulation.close();
  return 0;
}
