// Fan-out of one push to many installations on Roost's own channel (issue 6), PostgreSQL.
//   node --import tsx bench/push-fanout.ts [--record]
// Knobs: FANOUT_INSTALLATIONS (100000), FANOUT_CONNECTED (19900: this machine allows 20,000 open
// files per process, and the Roost process needs a few for itself), FANOUT_SIMULATORS (2),
// FANOUT_PAGE_SIZE (2000), FANOUT_RUNS (3); BENCH_PROFILE=1 runs Roost with --cpu-prof into bench/profiles/.
// One Roost process (src/main.ts) holds every connection; the devices are `roost devices simulate`
// processes. Measured per run: time from the request until the record shows every installation
// routed, until every connected device has the message, and the Roost process's resident memory
// with every device connected.
import { startSimulator, rssMiB, type Simulator } from './simulators.ts';
import { createDatabase, dropDatabase, envNumber, log, profileArgs, machine, recordSection, cpuTime, postgresCpu, postgresCpuSince } from './lib.ts';
import { spawnRoost } from '../test/helpers/processes.ts';
import { seedInstallations } from '../test/helpers/seed-installations.ts';
import { Client } from '../test/helpers/client.ts';
import { newSecretKeyText } from '../src/lib/secret-box.ts';

const installations = envNumber('FANOUT_INSTALLATIONS', 100_000);
const connected = envNumber('FANOUT_CONNECTED', 19_900);
const simulators = envNumber('FANOUT_SIMULATORS', 2);
const pageSize = envNumber('FANOUT_PAGE_SIZE', 2000);
const runs = envNumber('FANOUT_RUNS', 3);
const record = process.argv.includes('--record');

interface RunResult {
  routedMs: number;
  deliveredMs: number;
  doneMs: number;
  roostCpuS: number;
  postgresCpuS: number;
  simulatorsCpuS: number;
}

async function main() {
  const name = `roost_bench_fanout_${process.pid}`;
  const env = { DATABASE_URL: await createDatabase(name), ROOST_SECRET_KEY: newSecretKeyText(), PUSH_PAGE_SIZE: String(pageSize) };
  const roost = await spawnRoost(env, profileArgs());
  const keys = roost.defaultKeys!;
  const sims: Simulator[] = [];
  try {
    log(`seeding ${installations} installations`);
    await seedInstallations({ env, appId: keys.appId, count: installations, prefix: 'bench-', channel: 'bench' });
    const rssBefore = rssMiB(roost.child.pid!);
    log(`connecting ${connected} devices from ${simulators} simulator processes`);
    const per = Math.ceil(connected / simulators);
    const t = Date.now();
    for (let i = 0; i < simulators; i++) {
      sims.push(startSimulator(roost.url, keys, i * per, Math.min(per, connected - i * per)));
    }
    await Promise.all(sims.map((s) => s.waitFor((e) => e.event === 'connected', 300_000)));
    const connectSeconds = (Date.now() - t) / 1000;
    const rssConnected = rssMiB(roost.child.pid!);
    log(`connected in ${connectSeconds.toFixed(1)} s; Roost RSS ${rssBefore.toFixed(0)} → ${rssConnected.toFixed(0)} MiB`);

    const master = new Client({ url: roost.url, ...keys });
    const results: RunResult[] = [];
    const simulatorsCpu = () => sims.reduce((sum, s) => sum + cpuTime(s.child.pid!), 0);
    for (let run = 0; run < runs; run++) {
      const roostCpu0 = cpuTime(roost.child.pid!);
      const pg0 = postgresCpu(name);
      const sims0 = simulatorsCpu();
      const t0 = Date.now();
      const pushed = await master.post('/1.1/push', { channels: ['bench'], data: { alert: `run ${run}`, title: 'bench' } });
      if (pushed.status !== 201) throw new Error(pushed.text);
      const id = pushed.body.objectId;
      let routedMs = 0;
      let doneMs = 0;
      while (!doneMs) {
        const r = (await master.get(`/1.1/notifications/${id}`)).body;
        if (!routedMs && r.routes?.lc?.devices === installations) routedMs = Date.now() - t0;
        if (r.status === 'done') doneMs = Date.now() - t0;
        if (Date.now() - t0 > 120_000) throw new Error(`push not done: ${JSON.stringify(r)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const got = await Promise.all(sims.map((s) => s.waitFor((e) => e.event === 'received' && e.id === id, 60_000)));
      const deliveredMs = Math.max(...got.map((e) => e.at)) - t0;
      // CPU from the request until every connected device had it and the record was done (acks included).
      const roostCpuS = cpuTime(roost.child.pid!) - roostCpu0;
      const postgresCpuS = postgresCpuSince(pg0, name);
      const simulatorsCpuS = simulatorsCpu() - sims0;
      results.push({ routedMs, deliveredMs, doneMs, roostCpuS, postgresCpuS, simulatorsCpuS });
      log(`run ${run + 1}: routed ${routedMs} ms, every connected device had it after ${deliveredMs} ms, record done ${doneMs} ms; CPU s: Roost ${roostCpuS.toFixed(1)}, PostgreSQL ${postgresCpuS.toFixed(1)}, simulators ${simulatorsCpuS.toFixed(1)}`);
    }
    const duplicates = sims.map((s) => s.events.filter((e) => e.event === 'stats').at(-1)?.duplicates ?? 0);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const summary = {
      installations,
      connected,
      pageSize,
      connectSeconds,
      rssBeforeMiB: Math.round(rssBefore),
      rssConnectedMiB: Math.round(rssConnected),
      routedMs: results.map((r) => r.routedMs),
      deliveredMs: results.map((r) => r.deliveredMs),
      cpuS: results.map((r) => ({ roost: r.roostCpuS, postgres: r.postgresCpuS, simulators: r.simulatorsCpuS })),
      medianRoutedMs: median(results.map((r) => r.routedMs)),
      medianDeliveredMs: median(results.map((r) => r.deliveredMs)),
      duplicates,
    };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    if (record) recordSection('push-fanout', report(summary, results));
  } finally {
    for (const s of sims) s.child.kill('SIGTERM');
    await roost.stop();
    await dropDatabase(name);
  }
}

function report(
  s: { connectSeconds: number; rssBeforeMiB: number; rssConnectedMiB: number; medianRoutedMs: number; medianDeliveredMs: number; duplicates: number[] },
  results: RunResult[],
): string {
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const rows = results
    .map(
      (r, i) =>
        `| ${i + 1} | ${r.routedMs.toLocaleString('en')} | ${r.deliveredMs.toLocaleString('en')} | ${r.doneMs.toLocaleString('en')} | ${r.roostCpuS.toFixed(1)} | ${r.postgresCpuS.toFixed(1)} | ${r.simulatorsCpuS.toFixed(1)} | ${(((r.roostCpuS + r.postgresCpuS) / installations) * 1e6).toFixed(0)} |`,
    )
    .join('\n');
  const perConnectionKiB = ((s.rssConnectedMiB - s.rssBeforeMiB) * 1024) / connected;
  return `## Push fan-out (issue 6): one push to ${installations.toLocaleString('en')} installations on the own channel, PostgreSQL

Run ${new Date().toISOString().slice(0, 20)}Z on ${machine()}.
One Roost process (\`src/main.ts\`, PUSH_PAGE_SIZE=${pageSize}) holds ${connected.toLocaleString('en')} device connections made by ${simulators} \`roost devices simulate\` processes on the same two cores; ${installations.toLocaleString('en')} installations on channel \`bench\`, ${runs} pushes one after another. "Routed": from sending the request until the record counts every installation routed (polled every 10 ms). "Every connected device": until the last connected device received it (the simulators' clocks, same machine). CPU: used by each process from the request until the record was done and every connected device had the message (acknowledgements included); PostgreSQL counts this database's backends and the server's own processes (WAL writer, checkpointer). ${connected.toLocaleString('en')}, not 20,000, connections: this machine's hard limit is 20,000 open files per process and the Roost process needs a few dozen for itself (database, Redis, logs).

| push | routed ms | every connected device ms | record done ms | CPU s Roost | CPU s PostgreSQL | CPU s simulators | Roost + PostgreSQL µs per installation |
|------|-----------|---------------------------|----------------|-------------|------------------|------------------|----------------------------------------|
${rows}

- ${installations.toLocaleString('en')} routed in ${(s.medianRoutedMs / 1000).toFixed(1)} s, median (target < 5 s): ${verdict(s.medianRoutedMs < 5000)}
- every connected device had the message after ${(s.medianDeliveredMs / 1000).toFixed(1)} s, median (target < 5 s): ${verdict(s.medianDeliveredMs < 5000)}
- Roost's resident memory ${s.rssBeforeMiB} MiB idle → ${s.rssConnectedMiB} MiB with ${connected.toLocaleString('en')} devices connected (${perConnectionKiB.toFixed(1)} KiB per connection; target < 1 GiB): ${verdict(s.rssConnectedMiB < 1024)}
- connecting the devices took ${s.connectSeconds.toFixed(0)} s; duplicates seen by the devices: ${s.duplicates.reduce((a, b) => a + b, 0)}

Reproduce: \`npm run bench:push-fanout\` (PostgreSQL on 127.0.0.1:5432; knobs FANOUT_* in the script's header). \`-- --record\` rewrites this section.`;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
