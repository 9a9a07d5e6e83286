// Mixed push (issue 7): one push to many installations spread over the six phone makers and the
// own channel, PostgreSQL, the fake makers (test/fakes/makers.ts) on loopback.
//   node --import tsx bench/mixed-push.ts [--record]
// Knobs: MIXED_INSTALLATIONS (1000000), MIXED_PAGE_SIZE (5000), MIXED_RUNS (2); BENCH_PROFILE=1 runs Roost
// with --cpu-prof into bench/profiles/.
// One Roost process (src/main.ts, the default senders: credentials and fake addresses come from
// PUT /1.1/settings). The six fakes run in this process and check every request as the makers
// do. Measured per push: time from the request until the record is done (every device routed,
// every maker batch answered, every own-channel device in its mailbox). Each maker's received
// registration ids are checked: every device once.
import { createDatabase, dropDatabase, envNumber, log, profileArgs, machine, recordSection, cpuTime, postgresCpu, postgresCpuSince } from './lib.ts';
import { spawnRoost } from '../test/helpers/processes.ts';
import { Client } from '../test/helpers/client.ts';
import { closeMakers, startMakers, vendorSettings } from '../test/helpers/makers.ts';
import { seedMixedInstallations } from '../test/helpers/seed-mixed.ts';
import { vendors } from '../src/push/vendors/types.ts';
import { newSecretKeyText } from '../src/lib/secret-box.ts';

const installations = envNumber('MIXED_INSTALLATIONS', 1_000_000);
const pageSize = envNumber('MIXED_PAGE_SIZE', 5000);
const runs = envNumber('MIXED_RUNS', 2);
const record = process.argv.includes('--record');
const routes = ['lc', ...vendors];

interface Run {
  doneMs: number;
  devicesPerSecond: number;
  makerRequests: number;
  roostCpuS: number;
  postgresCpuS: number;
  fakesCpuS: number;
  duplicates: number;
  missing: number;
}

async function main() {
  const name = `roost_bench_mixed_${process.pid}`;
  const env = { DATABASE_URL: await createDatabase(name), ROOST_SECRET_KEY: newSecretKeyText(), PUSH_PAGE_SIZE: String(pageSize), LOG_LEVEL: 'info' };
  const makers = await startMakers();
  const roost = await spawnRoost(env, profileArgs()).catch(async (error: unknown) => {
    await closeMakers(makers);
    await dropDatabase(name);
    throw error;
  });
  const keys = roost.defaultKeys!;
  try {
    const master = new Client({ url: roost.url, ...keys });
    const on = await master.put('/1.1/settings', { commercial: true, mixedPush: true, vendors: vendorSettings(makers) });
    if (on.status !== 200) throw new Error(on.text);
    log(`seeding ${installations} installations (INSERT … SELECT generate_series), ${routes.length} routes round-robin`);
    const t = Date.now();
    await seedMixedInstallations({ env, appId: keys.appId, count: installations, prefix: 'mx-', channel: 'mx', routes });
    const seedSeconds = (Date.now() - t) / 1000;
    log(`seeded in ${seedSeconds.toFixed(0)} s`);

    const results: Run[] = [];
    let last: Record<string, any> = {};
    for (let run = 0; run < runs; run++) {
      for (const fake of Object.values(makers)) fake.sends.length = 0;
      const cpu0 = cpuTime(roost.child.pid!);
      const pg0 = postgresCpu(name);
      const fakes0 = process.cpuUsage();
      const t0 = Date.now();
      const pushed = await master.post('/1.1/push', { channels: ['mx'], data: { alert: `run ${run}`, title: 'bench', orderId: run } });
      if (pushed.status !== 201) throw new Error(pushed.text);
      const id = pushed.body.objectId;
      for (;;) {
        last = (await master.get(`/1.1/notifications/${id}`)).body;
        if (last.status === 'done') break;
        if (Date.now() - t0 > 600_000) throw new Error(`push not done: ${JSON.stringify(last)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const doneMs = Date.now() - t0;
      const roostCpuS = cpuTime(roost.child.pid!) - cpu0;
      const postgresCpuS = postgresCpuSince(pg0, name);
      const fakesUsage = process.cpuUsage(fakes0);
      const fakesCpuS = (fakesUsage.user + fakesUsage.system) / 1e6;
      let duplicates = 0;
      let missing = 0;
      let makerRequests = 0;
      for (const fake of Object.values(makers)) {
        const tokens = fake.sends.flatMap((s) => s.tokens);
        makerRequests += fake.sends.length;
        const unique = new Set(tokens).size;
        duplicates += tokens.length - unique;
        missing += (last.routes[fake.vendor]?.devices ?? 0) - unique;
        if (fake.violations.length > 0) throw new Error(`${fake.vendor}: ${fake.violations.slice(0, 3).join('; ')}`);
      }
      if (last.devices !== installations) throw new Error(`routed ${last.devices} of ${installations}`);
      const result = { doneMs, devicesPerSecond: Math.round(installations / (doneMs / 1000)), makerRequests, roostCpuS, postgresCpuS, fakesCpuS, duplicates, missing };
      results.push(result);
      log(`run ${run + 1}: done in ${doneMs} ms = ${result.devicesPerSecond} devices/s; ${makerRequests} maker requests; CPU s: Roost ${roostCpuS.toFixed(1)}, PostgreSQL ${postgresCpuS.toFixed(1)}, fakes ${fakesCpuS.toFixed(1)}; duplicates ${duplicates}, missing ${missing}`);
    }
    const routeCounts = Object.fromEntries(routes.map((r) => [r, last.routes[r]?.devices ?? 0]));
    const summary = { installations, pageSize, seedSeconds, routeCounts, successes: last.successes, errors: last.errors, results };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    if (record) recordSection('mixed-push', report(summary));
  } finally {
    await roost.stop();
    await closeMakers(makers);
    await dropDatabase(name);
  }
}

function report(s: { seedSeconds: number; routeCounts: Record<string, number>; successes: number; errors: number; results: Run[] }): string {
  const rows = s.results
    .map((r, i) => `| ${i + 1} | ${r.doneMs.toLocaleString('en')} | ${r.devicesPerSecond.toLocaleString('en')} | ${r.makerRequests.toLocaleString('en')} | ${r.roostCpuS.toFixed(1)} | ${r.postgresCpuS.toFixed(1)} | ${r.fakesCpuS.toFixed(1)} | ${(((r.roostCpuS + r.postgresCpuS) / installations) * 1e6).toFixed(1)} | ${r.duplicates} | ${r.missing} |`)
    .join('\n');
  const best = Math.max(...s.results.map((r) => r.devicesPerSecond));
  const spread = Object.entries(s.routeCounts).map(([route, n]) => `${route} ${n.toLocaleString('en')}`).join(', ');
  return `## Mixed push (issue 7): one push to ${installations.toLocaleString('en')} installations over the six makers and the own channel, PostgreSQL

Run ${new Date().toISOString().slice(0, 20)}Z on ${machine()}.
One Roost process (\`src/main.ts\` with its default senders, PUSH_PAGE_SIZE=${pageSize}); the six fake makers of \`test/fakes/makers.ts\` on loopback in the benchmark's process (they check auth, signatures, encoding and the batch limit of every request); credentials and the fakes' addresses set through \`PUT /1.1/settings\`. Installations seeded with one \`INSERT … SELECT generate_series\` (${s.seedSeconds.toFixed(0)} s), round-robin: ${spread}. No device is connected: own-channel devices are routed into their mailboxes. Time: from the push request until the record's status is \`done\` (every page routed, every maker batch answered and recorded), polled every 50 ms. CPU: used by each process over the push; PostgreSQL counts this database's backends and the server's own processes (WAL writer, checkpointer).

| push | done ms | devices routed and sent per s | maker requests | CPU s Roost | CPU s PostgreSQL | CPU s fakes | Roost + PostgreSQL µs per device | duplicates | missing |
|------|---------|-------------------------------|----------------|-------------|------------------|-------------|----------------------------------|------------|---------|
${rows}

- best ${best.toLocaleString('en')} devices/s (target ≥ 50,000): ${best >= 50_000 ? 'met' : 'MISSED'}; the record showed ${s.successes.toLocaleString('en')} maker successes and ${s.errors} errors.
- "duplicates": registration ids a maker received more than once within one push; "missing": devices routed to a maker it never received. Both must be 0.

Reproduce: \`npm run bench:mixed-push\` (PostgreSQL on 127.0.0.1:5432; knobs MIXED_* in the script's header). \`-- --record\` rewrites this section.`;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
