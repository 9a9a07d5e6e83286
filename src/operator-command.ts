import { parseArgs } from 'node:util';
import { userInfo } from 'node:os';
import type { Config } from './config.ts';
import { systemClock } from './lib/clock.ts';
import { randomToken } from './lib/crypto.ts';
import { openStoreAtStart } from './startup.ts';
import { minOperatorPassword, OperatorService, type OperatorChange } from './console/operators.ts';

export const operatorUsage = `operator create NAME [--role admin|viewer] [--password-stdin]
                                          a console operator (role admin by default); the password is read from
                                          stdin with --password-stdin, else generated and printed once
  operator list                           console operators (name, role, created)
  operator delete NAME                    delete an operator and end its sessions
  operator passwd NAME [--password-stdin] set a new password (generated and printed without --password-stdin)
  operator totp-reset NAME                remove the operator's TOTP (a lost phone) and end its sessions`;

const refusals: Record<Exclude<OperatorChange, 'done'>, string> = {
  unknown: 'no operator of that name',
  taken: 'an operator of that name exists',
  badName: 'a name is 1 to 64 letters, digits or . _ @ -',
  badRole: 'the role is admin or viewer',
  weakPassword: `a password has at least ${minOperatorPassword} characters`,
  wrongCode: 'the code is wrong',
  lastAdmin: 'the last admin stays an admin',
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Who the audit log names for a change made from a shell: the CLI and the system user running it. */
function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

/** `roost operator create|list|delete|passwd|totp-reset`: the console's accounts, from a shell. Exit 1 for a refusal, 2 for usage. */
export async function operatorCommand(args: string[], config: Config, usage: (message: string) => never): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { role: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
  });
  if (!['create', 'list', 'delete', 'passwd', 'totp-reset'].includes(sub ?? '')) usage(`unknown operator command "${sub ?? ''}"`);
  if (sub !== 'list' && positionals.length !== 1) usage(`operator ${sub} takes NAME`);
  const name = positionals[0];
  let generated: string | null = null;
  let password = '';
  if (sub === 'create' || sub === 'passwd') {
    if (values['password-stdin']) password = await readStdin();
    else password = generated = randomToken(18);
  }
  const store = await openStoreAtStart(config);
  try {
    const operators = new OperatorService({ store: store.operators, clock: systemClock, secret: config.secret || (await store.serverSecret()) });
    if (sub === 'list') {
      const list = await operators.list();
      const rows = list.map((op) => ({ name: op.name, role: op.role, totp: op.totp, createdAt: new Date(op.createdAt).toISOString() }));
      process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
      return 0;
    }
    let outcome: OperatorChange;
    if (sub === 'create') outcome = await operators.create(cliActor(), name, values.role ?? 'admin', password);
    else if (sub === 'passwd') outcome = await operators.setPassword(cliActor(), name, password);
    else if (sub === 'totp-reset') outcome = await operators.resetTotp(cliActor(), name);
    else outcome = await operators.delete(cliActor(), name);
    if (outcome !== 'done') {
      process.stderr.write(`roost: ${refusals[outcome]}\n`);
      return 1;
    }
    if (generated) process.stdout.write(`password for ${name} (shown once): ${generated}\n`);
    else process.stdout.write(`operator ${{ delete: 'deleted', create: 'created', passwd: 'password changed', 'totp-reset': 'TOTP removed' }[sub as string]}: ${name}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
