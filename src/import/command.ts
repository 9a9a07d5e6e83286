import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import type { Config } from '../config.ts';
import { systemClock } from '../lib/clock.ts';
import { availableParallelism } from 'node:os';
import { stat } from 'node:fs/promises';
import { openStore } from '../storage/open.ts';
import type { Store } from '../storage/store.ts';
import { AppRegistry, type AppKeys } from '../apps/registry.ts';
import { creationRefusal, givenKeys, keyOptions } from '../apps/key-options.ts';
import { Importer, type FileReport, type ImportProblem } from './importer.ts';

export const importUsage = `import --app APPID PATH [--class NAME] [--batch N] [--workers N]
                                          load the hosted service's export (JSON lines; a file or a folder of them)
  import --create-app --app-id ID [--app-key KEY] [--master-key KEY] [--name NAME] PATH …
                                          create the application with the hosted service's id and keys, then load`;

/**
 * `roost import --app APPID PATH`: streams the export into the store. Bad lines and conflicts
 * go to stderr as `file:line: message`; the summary is JSON on stdout. Exit 0 even with bad
 * lines (they are reported, never fatal); 1 when the application does not exist, or cannot be created.
 */
export async function importCommand(args: string[], config: Config, usage: (message: string) => never): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      app: { type: 'string' },
      'create-app': { type: 'boolean' },
      name: { type: 'string' },
      ...keyOptions,
      class: { type: 'string' },
      batch: { type: 'string' },
      workers: { type: 'string' },
    },
  });
  // --app-id as in `roost app create`; --app as the import has always had it.
  if (values.app !== undefined && values['app-id'] !== undefined && values.app !== values['app-id']) usage('--app and --app-id name two applications');
  const given = { ...givenKeys(values), appId: values['app-id'] ?? values.app };
  const createApp = values['create-app'] === true;
  if (!createApp && !given.appId) usage('import needs --app APPID (or --create-app)');
  if (!createApp && (given.appKey !== undefined || given.masterKey !== undefined || values.name !== undefined)) {
    usage('--app-key, --master-key and --name go with --create-app');
  }
  if (positionals.length !== 1) usage('import needs one PATH (an export file or a folder of them)');
  const batchSize = values.batch === undefined ? undefined : Number(values.batch);
  if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 20000)) {
    usage('--batch wants a whole number from 1 to 20000');
  }
  // Parse threads: one per core by default (at most 4); the database takes the rest of the machine.
  const workers = values.workers === undefined ? Math.min(4, availableParallelism()) : Number(values.workers);
  if (!(Number.isInteger(workers) && workers >= 0 && workers <= 16)) usage('--workers wants a whole number from 0 to 16');
  // An export that cannot be read fails (the CLI's one line, exit 1) before an application is created for it.
  await stat(positionals[0]);
  const store = await openStore(config);
  try {
    const target = createApp ? await createTarget(store, values.name, given) : await existingTarget(store, given.appId!);
    if (typeof target === 'string') {
      process.stderr.write(`roost: ${target}\n`);
      return 1;
    }
    const appId = target.appId;
    const secret = config.secret || (await store.serverSecret());
    // A bar only on a terminal; logs and CI get the problems and the summary alone.
    const bars = process.stderr.isTTY
      ? new cliProgress.MultiBar(
          { format: 'importing [{bar}] {percentage}% | {value}/{total} MB | {eta_formatted} left', hideCursor: true, stream: process.stderr },
          cliProgress.Presets.shades_classic,
        )
      : null;
    const bar = bars?.create(1, 0);
    const say = (text: string) => (bars ? bars.log(text + '\n') : process.stderr.write(text + '\n'));
    const counts = { bad: 0, conflict: 0, warning: 0 };
    const importer = new Importer({
      store,
      clock: systemClock,
      appId,
      secret,
      batchSize,
      workers,
      className: values.class,
      onProblem: (problem: ImportProblem) => {
        counts[problem.kind]++;
        say(`${problem.file}:${problem.line}: ${problem.kind === 'warning' ? 'warning' : 'skipped'}: ${problem.message}`);
      },
      onProgress: (done, total) => {
        if (!bar) return;
        bar.setTotal(Math.max(1, Math.round(total / 1e6)));
        bar.update(Math.round(done / 1e6));
      },
    });
    const started = performance.now();
    let reports: FileReport[];
    try {
      reports = await importer.run(positionals[0]);
    } finally {
      bars?.stop();
    }
    const seconds = Math.round(performance.now() - started) / 1000;
    const created = 'created' in target ? { app: target.created } : {};
    process.stdout.write(JSON.stringify({ ...created, seconds, files: reports, problems: counts }, null, 2) + '\n');
    return 0;
  } finally {
    await store.close();
  }
}

type Target = { appId: string; created?: AppKeys } | string;

async function existingTarget(store: Store, appId: string): Promise<Target> {
  return (await store.getApp(appId)) ? { appId } : `no application with id ${appId}`;
}

/**
 * --create-app: the application with the keys given, then the import. An application that already has
 * the id and every key given is imported into, so a migration's command can simply be run again.
 */
async function createTarget(store: Store, name: string | undefined, given: Partial<AppKeys>): Promise<Target> {
  const creation = await new AppRegistry({ store, clock: systemClock, cacheMs: 0 }).createWithKeys(name, given);
  if (creation.outcome === 'created') return { appId: creation.keys.appId, created: creation.keys };
  if (creation.outcome === 'taken' && creation.sameKeys) {
    process.stderr.write(`roost: application ${creation.appId} exists with the keys given; importing into it\n`);
    return { appId: creation.appId };
  }
  return creation.outcome === 'taken' ? `${creationRefusal(creation)} with other keys` : creationRefusal(creation);
}
