// LeanCloud's push connection (issue 19), PostgreSQL: devices held per node, memory per connection,
// fan-out to these connections, and a reconnect storm after a restart.
//   node --import tsx bench/push-connection.ts [--record]
// Knobs: LC_INSTALLATIONS (100000), LC_CONNECTED (19900: 20,000 open files per process here),
// LC_SIMULATORS (2), LC_RUNS (3), LC_STORM (10000 logins), LC_STORM_CONCURRENCY (1000 logins in flight per
// simulator); BENCH_PROFILE=1 runs Roost with --cpu-prof into bench/profiles/.
// One Roost process (src/main.ts) holds every connection; the devices are `roost devices simulate
// --protocol lc` processes (src/push/connection/client.ts: login, ack of every data frame).
// 1. Connect LC_CONNECTED devices: connect time, Roost's resident memory before and after.
// 2. LC_RUNS pushes to all LC_INSTALLATIONS: until every installation is routed, until every connected
//    device has the message (the others wait in their mailboxes).
// 3. Restart Roost, then LC_STORM devices that were offline log in at once (each also receives the
//    LC_RUNS messages waiting for it): until all are logged in, until all have their messages, CPU.
import { createDatabase, dropDatabase, envNumber, log, profileArgs, machine, recordSection, cpuTime, postgresCpu, postgresCpuSince } from './lib.ts';
import { startSimulator, rssMiB, type Simulator } from './simulators.ts';
import { spawnRoost, type RoostProcess } from '../test/helpers/processes.ts';
import { seedInstallations } from '../test/helpers/seed-installations.ts';
import { Client } from '../test/helpers/client.ts';
import { newSecretKeyText } from '../src/lib/secret-box.ts';

const installations = envNumber('LC_INSTALLATIONS', 100_000);
const connected = envNumber('LC_CONNECTED', 19_900);
const simulators = envNumber('LC_SIMULATORS', 2);
const runs = envNumber('LC_RUNS', 3);
const storm = envNumber('LC_STORM', 10_000);
const stormConcurrency = envNumber('LC_STORM_CONCURRENCY', 1000);
const record = process.argv.includes('--record');

function startSimulators(roost: RoostProcess, keys: { appId: string; appKey: string }, first: number, count: number, concurrency: number): Simulator[] {
  const per = Math.ceil(count / simulators);
  const out: Simulator[] = [];
  for (let i = 0; i < simulators && i * per < count; i++) {
    out.push(startSimulator(roost.url, keys, first + i * per, Math.min(per, count - i * per), { protocol: 'lc', concurrency }));
  }
  return out;
}

async function main() {
  if (connected + storm > installations) throw new Error('LC_CONNECTED + LC_STORM must not exceed LC_INSTALLATIONS');
  const name = `roost_bench_lc_${process.pid}`;
  const env = { DATABASE_URL: await createDatabase(name), ROOST_SECRET_KEY: newSecretKeyText() };
  let roost = await spawnRoost(env, profileArgs());
  const keys = roost.defaultKeys!;
  let sims: Simulator[] = [];
  try {
    log(`seeding ${installations} installations`);
    await seedInstallations({ env, appId: keys.appId, count: installations, prefix: 'bench-', channel: 'bench' });
    const rssBefore = rssMiB(roost.child.pid!);
    const t = Date.now();
    sims = startSimulators(roost, keys, 0, connected, 250);
    await Promise.all(sims.map((s) => s.waitFor((e) => e.event === 'connected', 300_000)));
    const connectSeconds = (Date.now() - t) / 1000;
    const rssConnected = rssMiB(roost.child.pid!);
    log(`${connected} connected in ${connectSeconds.toFixed(1)} s; RSS ${rssBefore.toFixed(0)} → ${rssConnected.toFixed(0)} MiB`);

    const master = new Client({ url: roost.url, ...keys });
    const fanout: Array<{ routedMs: number; deliveredMs: number; roostCpuS: number; postgresCpuS: number }> = [];
    for (let run = 0; run < runs; run++) {
      const cpu0 = cpuTime(roost.child.pid!);
      const pg0 = postgresCpu(name);
      const t0 = Date.now();
      const pushed = await master.post('/1.1/push', { channels: ['bench'], data: { alert: `run ${run}` } });
      if (pushed.status !== 201) throw new Error(pushed.text);
      const id = pushed.body.objectId;
      let routedMs = 0;
      while (!routedMs) {
        const r = (await master.get(`/1.1/notifications/${id}`)).body;
        if (r.routes?.lc?.devices === installations) routedMs = Date.now() - t0;
        if (Date.now() - t0 > 120_000) throw new Error(`not routed: ${JSON.stringify(r)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const got = await Promise.all(sims.map((s) => s.waitFor((e) => e.event === 'received' && e.id === id, 60_000)));
      const deliveredMs = Math.max(...got.map((e) => e.at)) - t0;
      fanout.push({ routedMs, deliveredMs, roostCpuS: cpuTime(roost.child.pid!) - cpu0, postgresCpuS: postgresCpuSince(pg0, name) });
      log(`push ${run + 1}: routed ${routedMs} ms, every connected device ${deliveredMs} ms`);
    }
    const duplicates = sims.reduce((n, s) => n + (s.events.filter((e) => e.event === 'stats').at(-1)?.duplicates ?? 0), 0);

    log('restart, then the storm');
    for (const s of sims) s.child.kill('SIGTERM');
    await roost.stop();
    roost = await spawnRoost(env, profileArgs());
    const cpu0 = cpuTime(roost.child.pid!);
    const pg0 = postgresCpu(name);
    sims = startSimulators(roost, keys, connected, storm, stormConcurrency);
    const logins = await Promise.all(sims.map((s) => s.waitFor((e) => e.event === 'connected', 300_000)));
    // Timed by the simulators from their first login (their own start-up is not the server's work).
    const stormStart = Math.min(...logins.map((e) => e.at - e.ms));
    const stormLoginMs = Math.max(...logins.map((e) => e.at)) - stormStart;
    // Every storm device had LC_RUNS messages waiting: a simulator reports a message once all its devices have it.
    const ids = fanout.length;
    await Promise.all(sims.map((s) => s.waitFor(() => s.events.filter((e) => e.event === 'received').length >= ids, 300_000)));
    const stormFlushedMs = Math.max(...sims.flatMap((s) => s.events.filter((e) => e.event === 'received').map((e) => e.at))) - stormStart;
    const stormCpu = { roostS: cpuTime(roost.child.pid!) - cpu0, postgresS: postgresCpuSince(pg0, name) };
    log(`storm: ${storm} logged in after ${stormLoginMs} ms, every waiting message delivered after ${stormFlushedMs} ms`);

    const summary = { installations, connected, connectSeconds, rssBefore, rssConnected, fanout, duplicates, storm, stormConcurrency, stormLoginMs, stormFlushedMs, stormCpu };
    process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
    if (record) recordSection('push-connection', report(summary));
  } finally {
    for (const s of sims) s.child.kill('SIGTERM');
    await roost.stop();
    await dropDatabase(name);
  }
}

function report(s: {
  connectSeconds: number; rssBefore: number; rssConnected: number; duplicates: number; stormLoginMs: number; stormFlushedMs: number;
  fanout: Array<{ routedMs: number; deliveredMs: number; roostCpuS: number; postgresCpuS: number }>; stormCpu: { roostS: number; postgresS: number };
}): string {
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const routed = median(s.fanout.map((r) => r.routedMs));
  const perConnectionKiB = ((s.rssConnected - s.rssBefore) * 1024) / connected;
  const rows = s.fanout.map((r, i) => `| ${i + 1} | ${r.routedMs.toLocaleString('en')} | ${r.deliveredMs.toLocaleString('en')} | ${r.roostCpuS.toFixed(1)} | ${r.postgresCpuS.toFixed(1)} |`).join('\n');
  return `## LeanCloud's push connection (issue 19): connections, fan-out, reconnect storm, PostgreSQL

Run ${new Date().toISOString().slice(0, 19)}Z on ${machine()}.
One Roost process holds ${connected.toLocaleString('en')} LeanCloud-protocol connections made by ${simulators} \`roost devices simulate --protocol lc\` processes on the same cores; ${installations.toLocaleString('en')} installations on channel \`bench\`.

| push | routed ms | every connected device ms | CPU s Roost | CPU s PostgreSQL |
|------|-----------|---------------------------|-------------|------------------|
${rows}

- ${installations.toLocaleString('en')} routed in ${(routed / 1000).toFixed(1)} s, median (target < 5 s): ${verdict(routed < 5000)}; duplicates seen by the devices: ${s.duplicates}
- resident memory ${s.rssBefore.toFixed(0)} → ${s.rssConnected.toFixed(0)} MiB with ${connected.toLocaleString('en')} connections (${perConnectionKiB.toFixed(1)} KiB each; target 20,000 under 500 MiB): ${verdict(s.rssConnected < 500)}; connecting took ${s.connectSeconds.toFixed(0)} s
- reconnect storm after a restart: ${storm.toLocaleString('en')} offline devices, ${stormConcurrency} logins in flight per simulator: all logged in after ${(s.stormLoginMs / 1000).toFixed(1)} s, all ${s.fanout.length} waiting messages each delivered after ${(s.stormFlushedMs / 1000).toFixed(1)} s; CPU s Roost ${s.stormCpu.roostS.toFixed(1)}, PostgreSQL ${s.stormCpu.postgresS.toFixed(1)}

Reproduce: \`npm run bench:push-connection\` (PostgreSQL on 127.0.0.1:5432; knobs LC_* in the script's header). \`-- --record\` rewrites this section.`;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
