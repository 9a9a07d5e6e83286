import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { isEntryPoint } from './lib/entry-point.ts';
import { version } from './lib/version.ts';
import type { AppRegistry } from './apps/registry.ts';

// Each command imports what it needs when it runs: `roost --version` or `roost index list` loaded the whole
// HTTP server, both database drivers and the S3 client first (1.3 s of CPU per run on this machine).

/** The usage text, with each command module's own lines (loaded only to print it). */
async function usage(): Promise<string> {
  const [{ appKeysUsage }, { secretsUsage }, { devicesUsage }, { importUsage }, { indexUsage }, { schemaUsage }, { filesUsage }, { operatorUsage }] =
    await Promise.all([
      import('./app-keys-command.ts'),
      import('./secrets-command.ts'),
      import('./push/channel/simulate-command.ts'),
      import('./import/command.ts'),
      import('./index-command.ts'),
      import('./schema-command.ts'),
      import('./files-command.ts'),
      import('./operator-command.ts'),
    ]);
  return `Usage: roost <command>

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
}

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
  const [{ openStoreAtStart }, { AppRegistry }, { systemClock }] = await Promise.all([
    import('./startup.ts'),
    import('./apps/registry.ts'),
    import('./lib/clock.ts'),
  ]);
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
  const { creationRefusal, givenKeys, keyOptions } = await import('./apps/key-options.ts');
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
    const { mergeSettings, publicSettings } = await import('./apps/settings.ts');
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
      const { openFileBackend } = await import('./files/open-backend.ts');
      const backend = await openFileBackend(loadConfig());
      try {
        await backend.deleteApp(appId);
      } finally {
        await backend.close?.();
      }
    };
    const { appKeysCommand } = await import('./app-keys-command.ts');
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
        await (await import('./main.ts')).serve();
        return -1;
      case 'app':
        return await appCommand(rest);
      case 'import':
        return await (await import('./import/command.ts')).importCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'index':
        return await (await import('./index-command.ts')).indexCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'schema':
        return await (await import('./schema-command.ts')).schemaCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'files':
        return await (await import('./files-command.ts')).filesCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'secrets':
        return await (await import('./secrets-command.ts')).secretsCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'operator':
        return await (await import('./operator-command.ts')).operatorCommand(rest, loadConfig(), (message) => {
          throw new UsageError(message);
        });
      case 'devices':
        return await (await import('./push/channel/simulate-command.ts')).devicesCommand(rest, (message) => {
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
        process.stdout.write((await usage()) + '\n');
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    // parseArgs refuses unknown or malformed options with ERR_PARSE_ARGS_* errors: usage errors too.
    const code = (error as { code?: unknown })?.code;
    const argsError = typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
    if (error instanceof UsageError || argsError) {
      process.stderr.write(`roost: ${(error as Error).message}\n\n${await usage()}\n`);
      return 2;
    }
    if (error instanceof ConfigError) return (await import('./startup.ts')).reportStartFailure(error);
    const startup = await import('./startup.ts');
    if (error instanceof startup.StartError) return startup.reportStartFailure(error);
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
