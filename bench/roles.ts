// Roles (#16 point 2): a page of 20 role-protected objects read by a user who has the role through three
// nested roles (R1.users holds the user, R2.roles holds R1, R3.roles holds R2, the objects' ACL names R3),
// against get-by-id with the same session in the same run (the yardstick), on SQLite and PostgreSQL. Half
// the class is readable only by another role, so the ACL clause (with the roles resolved inside the
// statement, src/storage/sql/roles.ts) decides about every row the page reads. users/me and a get-by-id
// of a role-protected object run beside them.
//
//   npm run bench:roles                 # prints the table
//   npm run bench:roles -- --record     # also rewrites the "roles" section of bench/RESULTS.md
//
// BENCH_ROLES=0 seeds no roles and runs only get-by-id and users/me: the cost of the role clause to an
// app without roles (with BENCH_ROOST_DIR naming a build from before roles, the same two side by side).
// Knobs (environment): BENCH_DURATION seconds per measurement (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (32),
// BENCH_OBJECTS objects in the protected class (20000), BENCH_STORES=sqlite or postgres, BENCH_PG_URL (admin URL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  analyzeDatabase,
  importClass,
  buildRoost,
  cleanup,
  createDatabase,
  createRoostApp,
  dropDatabase,
  envNumber,
  fixed,
  load,
  log,
  machine,
  median,
  percent,
  recordSection,
  roostEnv,
  run,
  startRoost,
  table,
  warm,
  type AppKeys,
  type LoadOptions,
  type ServerProcess,
  profileArgs,
} from './lib.ts';

const connections = envNumber('BENCH_CONNECTIONS', 32);
const durationSec = envNumber('BENCH_DURATION', 10);
const rounds = envNumber('BENCH_ROUNDS', 3);
const size = envNumber('BENCH_OBJECTS', 20_000);
const withRoles = process.env.BENCH_ROLES !== '0';
const publicSize = 1000;
const pageSize = 20;
const target = 0.25;
const record = process.argv.includes('--record');
const t0 = Date.UTC(2023, 0, 1);

const docId = (n: number) => 'd' + n.toString(16).padStart(23, '0');
const publicId = (n: number) => 'p' + n.toString(16).padStart(23, '0');


async function call(server: ServerProcess, headers: Record<string, string>, method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(server.url + path, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** The user the scenarios read as and, with roles, R1 ∋ user, R2.roles ∋ R1, R3.roles ∋ R2. */
async function seedUser(server: ServerProcess, keys: AppKeys): Promise<{ objectId: string; sessionToken: string }> {
  const app = { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey };
  const master = { 'x-lc-id': keys.appId, 'x-lc-key': `${keys.masterKey},master` };
  const user = await call(server, app, 'POST', '/1.1/users', { username: 'bench-role-user', password: 'bench-password' });
  const userId = user.objectId as string;
  if (withRoles) {
    const relation = (className: string, id: string) => ({ __op: 'AddRelation', objects: [{ __type: 'Pointer', className, objectId: id }] });
    const acl = { '*': { read: true } };
    const r1 = await call(server, master, 'POST', '/1.1/roles', { name: 'R1', ACL: acl, users: relation('_User', userId) });
    const r2 = await call(server, master, 'POST', '/1.1/roles', { name: 'R2', ACL: acl, roles: relation('_Role', r1.objectId as string) });
    await call(server, master, 'POST', '/1.1/roles', { name: 'R3', ACL: acl, roles: relation('_Role', r2.objectId as string) });
    await call(server, master, 'POST', '/1.1/roles', { name: 'Other', ACL: acl });
  }
  return { objectId: userId, sessionToken: user.sessionToken as string };
}

interface Scenario {
  name: string;
  store: string;
  options: LoadOptions;
}

async function main(): Promise<void> {
  const stack: Array<() => unknown> = [];
  const stopAll = cleanup(stack);
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    buildRoost();
    const dir = mkdtempSync(join(tmpdir(), 'roost-bench-roles-'));
    stack.push(() => rmSync(dir, { recursive: true, force: true }));
    const list: Scenario[] = [];
    for (const label of ['SQLite', 'PostgreSQL'] as const) {
      if (process.env.BENCH_STORES && !label.toLowerCase().startsWith(process.env.BENCH_STORES)) continue;
      const database = label === 'PostgreSQL' ? 'roost_bench_roles' : undefined;
      const store = database ? { databaseUrl: await createDatabase(database) } : { sqlitePath: join(dir, 'roles.sqlite') };
      if (database) stack.push(() => dropDatabase(database));
      const env = roostEnv(store);
      const keys = createRoostApp(env);
      const server = await startRoost(`roost ${label}`, store, profileArgs());
      stack.push(() => server.stop());
      const user = await seedUser(server, keys);
      log(`${label}: importing ${size} role-protected objects and ${publicSize} public ones`);
      await importClass(env, keys, dir, 'RolPub', publicSize, (i) => ({ objectId: publicId(i), n: i }));
      if (withRoles) {
        // Even objects are R3's, odd ones another role's: a page of 20 reads about 40 rows.
        await importClass(env, keys, dir, 'RolDoc', size, (i) => ({ objectId: docId(i), n: i, ACL: { [`role:${i % 2 === 0 ? 'R3' : 'Other'}`]: { read: true } } }));
      }
      if (store.databaseUrl) await analyzeDatabase(store.databaseUrl);
      const headers = { 'x-lc-id': keys.appId, 'x-lc-key': keys.appKey, 'x-lc-session': user.sessionToken };
      const random = (n: number) => Math.floor(Math.random() * n);
      const page = () => {
        const from = new Date(t0 + random(size - 4 * pageSize) * 1000).toISOString();
        const where = { createdAt: { $gte: { __type: 'Date', iso: from } } };
        return `/1.1/classes/RolDoc?where=${encodeURIComponent(JSON.stringify(where))}&order=createdAt&limit=${pageSize}`;
      };
      const paths: Array<[string, () => string]> = [
        ['get-by-id (own session)', () => `/1.1/classes/RolPub/${publicId(random(publicSize))}`],
        ['users/me', () => '/1.1/users/me'],
      ];
      if (withRoles) {
        paths.push(['get-by-id of a role-protected object', () => `/1.1/classes/RolDoc/${docId(2 * random(size / 2))}`]);
        paths.push([`role-protected page of ${pageSize} (3 nested roles)`, page]);
        // One request first, so a broken scenario fails here rather than as a table of errors.
        const check = await fetch(server.url + page(), { headers });
        const body = (await check.json()) as { results?: unknown[] };
        if (!check.ok || body.results?.length !== pageSize) throw new Error(`role page: ${check.status} ${JSON.stringify(body).slice(0, 300)}`);
      }
      for (const [name, next] of paths) {
        list.push({ name, store: label, options: { url: server.url, connections, durationSec, headers, next: () => ({ path: next() }) } });
      }
    }
    for (const scenario of list) await warm(scenario.options);
    const samples = new Map<Scenario, number[]>(list.map((s) => [s, []]));
    const bad = new Map<Scenario, number>(list.map((s) => [s, 0]));
    for (let round = 1; round <= rounds; round++) {
      for (const scenario of list) {
        const result = await load(scenario.options);
        samples.get(scenario)!.push(result.rps);
        bad.set(scenario, bad.get(scenario)! + result.non2xx + result.errors);
        log(`round ${round} ${scenario.store} ${scenario.name}: ${fixed(result.rps)} req/s`);
      }
    }
    const verdicts: string[] = [];
    const rows = list.map((scenario) => {
      const yardstick = list.find((s) => s.store === scenario.store)!;
      const ratio = median(samples.get(scenario)!.map((rps, i) => rps / samples.get(yardstick)![i]));
      if (scenario.name.startsWith('role-protected page')) {
        verdicts.push(`- ${scenario.store} ${scenario.name}: ${percent(ratio)} of get-by-id (target ≥ ${percent(target)}): ${ratio >= target ? 'met' : 'MISSED'}`);
      }
      return [`${scenario.store} ${scenario.name}`, fixed(median(samples.get(scenario)!)), percent(ratio), bad.get(scenario)!];
    });
    const headers = ['scenario', 'req/s (median)', 'vs get-by-id', 'non-2xx + errors'];
    const seeded = withRoles
      ? `${size.toLocaleString('en')} RolDoc objects imported with \`roost import\` (even ones readable by role R3, odd ones by another role), ${publicSize} public RolPub objects; the user is in R1, R2.roles holds R1, R3.roles holds R2`
      : `no roles; ${publicSize} public RolPub objects`;
    const settings = `${seeded}; every request with the user's session (app key), ${connections} connections, ${rounds} rounds × ${durationSec} s per scenario after 3 s warm-up; the page is \`createdAt >= <random>\` in createdAt order`;
    const text = `${table(headers, rows)}\n\n${verdicts.join('\n')}\n\n${settings}\nmachine: ${machine()}`;
    process.stdout.write(`\n${text}\n`);
    if (record) {
      recordSection('roles', `## Roles (#16 point 2): a role-protected page against get-by-id\n\nRun ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}.\n\n${text}\n\nReproduce: \`npm run bench:roles\`; \`-- --record\` rewrites this section.`);
    }
  } finally {
    await stopAll();
  }
}

await main();
