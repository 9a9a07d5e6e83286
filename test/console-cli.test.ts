// `roost operator create|list|delete|passwd` run as an operator runs them, on the database of a
// running server: the printed password signs in to the console; passwd and delete end that.
import { test, before, after } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import * as OTPAuth from 'otpauth';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { roostCli } from './helpers/cli.ts';
import { ConsoleClient } from './helpers/console.ts';
import { roostScript } from './helpers/scripts.ts';

let database: TestDatabase;
let t: TestServer;

before(async () => {
  database = await testDatabase();
  t = await startServer({ database });
});
after(async () => {
  await t?.close();
  await database?.drop();
});

const printedPassword = (stdout: string, name: string) => {
  const match = new RegExp(`^password for ${name} \\(shown once\\): (\\S{24})\\n$`).exec(stdout);
  assert.ok(match, stdout);
  return match[1];
};

test('create prints a password once; it signs in; list shows the operator', async () => {
  const made = await roostCli(database.env, 'operator', 'create', 'root');
  assert.equal(made.code, 0, made.stderr);
  const password = printedPassword(made.stdout, 'root');
  const c = new ConsoleClient(t.url);
  assert.equal((await c.signIn('root', password)).status, 200);
  const list = await roostCli(database.env, 'operator', 'list');
  assert.deepEqual(JSON.parse(list.stdout).map((o: { name: string; role: string }) => [o.name, o.role]), [['root', 'admin']]);
  const audit = (await c.request('GET', '/console/api/audit')).body.results.find((e: { action: string }) => e.action === 'operator.create');
  assert.match(audit.actor, /^cli/);
  assert.deepEqual([audit.target, audit.detail], ['root', { role: 'admin' }]);
  assert.ok(!JSON.stringify(await roostCli(database.env, 'operator', 'list')).includes(password));
});

test('passwd replaces the password and ends sessions; delete removes the operator', async () => {
  const first = printedPassword((await roostCli(database.env, 'operator', 'create', 'vera', '--role', 'viewer')).stdout, 'vera');
  const c = new ConsoleClient(t.url);
  assert.equal((await c.signIn('vera', first)).status, 200);
  const second = printedPassword((await roostCli(database.env, 'operator', 'passwd', 'vera')).stdout, 'vera');
  assert.equal((await c.request('GET', '/console/api/apps')).status, 401, 'the session ended');
  assert.equal((await c.signIn('vera', first)).status, 401);
  assert.equal((await c.signIn('vera', second)).status, 200);
  assert.equal((await c.request('GET', '/console/api/session')).body.operator.role, 'viewer');
  // totp-reset: a lost phone; the operator signs in with the password alone again, its sessions ended.
  const enrol = await c.change('POST', '/console/api/account/totp');
  const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(enrol.body.secret) }).generate();
  assert.equal((await c.change('POST', '/console/api/account/totp/confirm', { code })).status, 200);
  assert.equal((await new ConsoleClient(t.url).signIn('vera', second)).status, 401, 'TOTP on: a code is needed');
  assert.deepEqual(await roostCli(database.env, 'operator', 'totp-reset', 'vera'), { code: 0, stdout: 'operator TOTP removed: vera\n', stderr: '' });
  assert.equal((await c.request('GET', '/console/api/session')).status, 401, 'the sessions ended');
  assert.equal((await c.signIn('vera', second)).status, 200);
  const deleted = await roostCli(database.env, 'operator', 'delete', 'vera');
  assert.deepEqual([deleted.code, deleted.stdout], [0, 'operator deleted: vera\n']);
  assert.equal((await c.request('GET', '/console/api/apps')).status, 401);
  assert.equal((await c.signIn('vera', second)).status, 401);
});

test('refusals: exit 1 with the reason; usage errors exit 2', async () => {
  assert.deepEqual(await roostCli(database.env, 'operator', 'create', 'root'), { code: 1, stdout: '', stderr: 'roost: an operator of that name exists\n' });
  assert.deepEqual(await roostCli(database.env, 'operator', 'create', 'x', '--role', 'owner'), { code: 1, stdout: '', stderr: 'roost: the role is admin or viewer\n' });
  assert.deepEqual(await roostCli(database.env, 'operator', 'delete', 'nobody'), { code: 1, stdout: '', stderr: 'roost: no operator of that name\n' });
  assert.equal((await roostCli(database.env, 'operator', 'rename', 'x')).code, 2);
  assert.equal((await roostCli(database.env, 'operator', 'create')).code, 2);
});

test('--password-stdin takes the password from standard input, and refuses a short one', async () => {
  const cli = (input: string, ...args: string[]) =>
    spawnSync(process.execPath, [...roostScript('cli'), 'operator', ...args, '--password-stdin'], {
      input,
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'warn', ...database.env },
    });
  const made = cli('chosen by me, long enough\n', 'create', 'carol', '--role', 'viewer');
  assert.deepEqual([made.status, made.stdout, made.stderr], [0, 'operator created: carol\n', '']);
  assert.equal((await new ConsoleClient(t.url).signIn('carol', 'chosen by me, long enough')).status, 200);
  const short = cli('short\n', 'passwd', 'carol');
  assert.deepEqual([short.status, short.stderr], [1, 'roost: a password has at least 10 characters\n']);
});
