import { parseArgs } from 'node:util';
import type { Config } from './config.ts';
import { withAppStore } from './app-store-command.ts';
import { ClassIndexes } from './objects/class-indexes.ts';
import { indexSpecSchema } from './objects/index-spec.ts';
import { checkSchema } from './lib/json-schema.ts';

export const indexUsage = `index create --app APPID CLASS NAME KEYS [--unique]
                                          declare an index and wait for its build, progress on stderr;
                                          KEYS as JSON: '{"score": -1, "owner.name": 1}'
  index list --app APPID CLASS             list a class's indexes, their state (building, ready, failed),
                                          a build's progress and a failed one's error
  index drop --app APPID CLASS NAME        drop an index`;

/** How often `index create` reports a build's progress. */
const progressEveryMs = 2000;

/**
 * `roost index create|list|drop`: what POST/GET/DELETE /1.1/indexes/<className> do, from a shell, for
 * an operator building an index on a large class, who waits for it here (the build runs in this process;
 * stopped, a server resumes it). Exit 1 for a refusal or a failed build (the catalogue's message on
 * stderr), 2 for a usage error.
 */
export async function indexCommand(args: string[], config: Config, usage: (message: string) => never): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { app: { type: 'string' }, unique: { type: 'boolean' } } });
  const appId = values.app ?? usage('index needs --app APPID');
  const [className, name, keys] = positionals;
  const wanted = { create: 3, list: 1, drop: 2 }[sub as 'create' | 'list' | 'drop'];
  if (wanted === undefined) usage(`unknown index command "${sub ?? ''}"`);
  if (positionals.length !== wanted) usage(`index ${sub} takes ${['CLASS', 'NAME', 'KEYS'].slice(0, wanted).join(' ')}`);
  let body: unknown;
  if (sub === 'create') {
    try {
      body = { name, keys: JSON.parse(keys), unique: values.unique === true };
    } catch {
      usage(`KEYS is JSON, as '{"score": -1}'`);
    }
  }
  return withAppStore(config, appId, async (store) => {
    const indexes = new ClassIndexes({ store: store.classIndexes });
    if (sub === 'list') {
      process.stdout.write(JSON.stringify(await indexes.list(appId, className), null, 2) + '\n');
      return 0;
    }
    if (sub === 'drop') {
      await indexes.drop(appId, className, name);
      process.stdout.write(`dropped ${name}\n`);
      return 0;
    }
    checkSchema<Parameters<ClassIndexes['create']>[2]>(indexSpecSchema, body);
    await indexes.create(appId, className, body);
    const report = setInterval(() => void reportProgress(indexes, appId, className, name), progressEveryMs);
    try {
      await store.classIndexes.idle();
    } finally {
      clearInterval(report);
    }
    const built = (await indexes.list(appId, className)).find((index) => index.name === name);
    process.stdout.write(JSON.stringify(built, null, 2) + '\n');
    if (built?.state === 'failed') {
      process.stderr.write(`roost: ${built.error} (code ${built.code})\n`);
      return 1;
    }
    return 0;
  });
}

async function reportProgress(indexes: ClassIndexes, appId: string, className: string, name: string): Promise<void> {
  const index = (await indexes.list(appId, className).catch(() => [])).find((found) => found.name === name);
  if (index?.state !== 'building') return;
  const { progress } = index;
  const done = progress ? `${progress.phase}, blocks ${progress.blocks.done}/${progress.blocks.total}, tuples ${progress.tuples.done}/${progress.tuples.total}` : 'building';
  process.stderr.write(`roost: ${name}: ${done}\n`);
}
