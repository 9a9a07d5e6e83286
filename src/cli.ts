import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { openFileBackend } from './files/open-backend.ts';
import { systemClock } from './lib/clock.ts';
import { isEntryPoint } from './lib/entry-point.ts';
import { version } from './lib/version.ts';
import { openStoreAtStart, reportStartFailure, StartError } from './startup.ts';
import { AppRegistry } from './apps/registry.ts';
import { creationRefusal, givenKeys, keyOptions } from './apps/key-options.ts';
import { mergeSettings, publicSettings } from './apps/settings.ts';
import { serve } from './main.ts';
import { appKeysCommand, appKeysUsage } from './app-keys-command.ts';
import { secretsCommand, secretsUsage } from './secrets-command.ts';
import { devicesCommand, devicesUsage } from './push/channel/simulate-command.ts';
import { importCommand, importUsage } from './import/command.ts';
import { indexCommand, indexUsage } from './index-command.ts';
import { schemaCommand, schemaUsage } from './schema-command.ts';
import { filesCommand, filesUsage } from './files-command.ts';
import { operatorCommand, operatorUsage } from './operator-command.ts';

const usage = `Usage: roost <command>

  serve                                   run the server (the default)
  app create --name NAME                  create an application; prints {"appId","appKey","masterKey"}
  app create --app-id ID [--app-key KEY] [--master-key KEY] [--name NAME]
                                          create one that keeps the hosted service's id and keys (missing ones generated)
  app list                                list applications (id, name, created)
  app settings APPID [--set key=value …]  show settings, or change them (values are JSON: true, "text", null, {…})
  ${appKeysUsage}
  migrate                                 apply database migrations and exit
  --version                               print Roost's version
  ${secretsUsage}
  ${devicesUsage}
  ${importUsage}
  ${indexUsage}
  ${schemaUsage}
  ${filesUsage}
  ${operatorUsage}

Configuration comes from the environment (DATABASE_URL, …): see README.md.`;

/** A --set value is JSON when it parses as JSON, otherwise a plain string. */
function settingValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

async function withRegistry<T>(work: (registry: AppRegistry) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStoreAtStart(config);
  try {
    return await work(new AppRegistry({ store, clock: systemClock, cacheMs: 0 }));
  } finally {
    await store.close();
  }
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

async function appCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'create') {
    const { values } = parseArgs({ args: rest, options: { name: { type: 'string' }, ...keyOptions } });
    if (!values.name && values['app-id'] === undefined) throw new UsageError('app create needs --name NAME or --app-id ID');
    const creation = await withRegistry((registry) => registry.createWithKeys(values.name, givenKeys(values)));
    if (creation.outcome !== 'created') {
      process.stderr.write(`roost: ${creationRefusal(creation)}\n`);
      return 1;
    }
    print(creation.keys);
    return 0;
  }
  if (sub === 'list') {
    const apps = await withRegistry((registry) => registry.list());
    print(apps.map((app) => ({ appId: app.appId, name: app.name, createdAt: new Date(app.createdAt).toISOString() })));
    return 0;
  }
  if (sub === 'settings') {
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { set: { type: 'string', multiple: true } },
    });
    const appId = positionals[0];
    if (!appId) throw new UsageError('app settings needs an APPID');
    const patch: Record<string, unknown> = {};
    for (const pair of values.set ?? []) {
      const at = pair.indexOf('=');
      if (at < 1) throw new UsageError(`--set wants key=value, got "${pair}"`);
      patch[pair.slice(0, at)] = settingValue(pair.slice(at + 1));
    }
    const settings = await withRegistry(async (registry) => {
      if (Object.keys(patch).length > 0) return registry.updateSettings(appId, patch);
      return registry.freshSettings(appId);
    });
    if (!settings) {
      process.stderr.write(`roost: no application with id ${appId}\n`);
      return 1;
    }
    print(publicSettings(mergeSettings(settings)));
    return 0;
  }
  if (sub === 'keys' || sub === 'rotate' || sub === 'delete') {
    const removeFiles = async (appId: string) => {
      const backend = openFileBackend(loadConfig());
      try {
        await backend.deleteApp(appId);
      } finally {
        await backend.close?.();
      }
    };
    return appKeysCommand(sub, rest, withRegistry, (message) => {
      throw new UsageError(message);
    }, removeFiles);
  }
  throw new UsageError(`unknown app command "${sub ?? ''}"`);
}

class UsageError extends Error {}

export async function runCli(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        await serve();
        return -1;
      case 'app':
        return await appCommand(rest);
      case 'import':
        return await importCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'index':
        return await indexCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'schema':
        return await schemaCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'files':
        return await filesCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'secrets':
        return await secretsCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'operator':
        return await operatorCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'devices':
        return await devicesCommand(rest, (message) => {
          throw new UsageError(message);
        });
      case 'migrate':
        await withRegistry(async () => undefined);
        process.stdout.write('migrations applied\n');
        return 0;
      case 'version':
      case '--version':
      case '-v':
        process.stdout.write(`roost ${version}\n`);
        return 0;
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(usage + '\n');
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    // parseArgs refuses unknown or malformed options with ERR_PARSE_ARGS_* errors: usage errors too.
    const code = (error as { code?: unknown })?.code;
    const argsError = typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
    if (error instanceof UsageError || argsError) {
      process.stderr.write(`roost: ${(error as Error).message}\n\n${usage}\n`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof StartError) return reportStartFailure(error);
    // Operators get one line, never a stack trace.
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`roost: ${message.split('\n')[0]}\n`);
    return 1;
  }
}

if (isEntryPoint(import.meta.url)) {
  runCli(process.argv.slice(2)).then((code) => {
    if (code >= 0) process.exit(code);
  });
}
