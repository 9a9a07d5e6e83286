import { parseArgs } from 'node:util';
import type { Config } from './config.ts';
import { fail } from './lib/errors.ts';
import { ClassSchemas } from './objects/schemas.ts';
import { withAppStore } from './app-store-command.ts';

export const schemaUsage = `schema show --app APPID [CLASS]         the class schemas (field types, defaults), as GET /1.1/schemas[/CLASS]
  schema set --app APPID CLASS CHANGES    declare field types and defaults, as PUT /1.1/schemas/CLASS; CHANGES as
                                          JSON: '{"views": {"type": "Number", "default": 0}, "owner": {"type": "Pointer", "className": "_User"}}'
  schema default --app APPID CLASS FIELD VALUE | --clear
                                          set a field's default (VALUE as JSON: 0, "text", […]) or clear it`;

function json(text: string, usage: (message: string) => never, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return usage(`${what} is JSON`);
  }
}

/**
 * `roost schema show|set|default`: what GET and PUT /1.1/schemas do, from a shell. Exit 1 for a
 * refusal (the catalogue's message on stderr), 2 for a usage error.
 */
export async function schemaCommand(args: string[], config: Config, usage: (message: string) => never): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { app: { type: 'string' }, clear: { type: 'boolean' } } });
  const appId = values.app ?? usage('schema needs --app APPID');
  let body: unknown;
  if (sub === 'show') {
    if (positionals.length > 1) usage('schema show takes at most CLASS');
  } else if (sub === 'set') {
    if (positionals.length !== 2) usage('schema set takes CLASS CHANGES');
    body = json(positionals[1], usage, 'CHANGES');
  } else if (sub === 'default') {
    const wanted = values.clear ? 2 : 3;
    if (positionals.length !== wanted) usage(values.clear ? 'schema default --clear takes CLASS FIELD' : 'schema default takes CLASS FIELD VALUE');
    body = { [positionals[1]]: { default: values.clear ? null : json(positionals[2], usage, 'VALUE') } };
  } else {
    usage(`unknown schema command "${sub ?? ''}"`);
  }
  return withAppStore(config, appId, async (store) => {
    const schemas = new ClassSchemas({
      store: store.schemas,
      now: () => Date.now(),
      cacheMs: 0,
      classExists: (app, className) => store.classExists(app, className),
    });
    const [className] = positionals;
    let shown: unknown;
    if (sub !== 'show') shown = await schemas.update(appId, className, body);
    else if (className === undefined) shown = await schemas.describeAll(appId);
    else shown = (await schemas.describe(appId, className)) ?? fail('objectNotFound');
    process.stdout.write(JSON.stringify(shown, null, 2) + '\n');
    return 0;
  });
}
