#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by package/file.
//   node bench/profile-top.js bench/profiles/<folder or file.cpuprofile> [TOP] [--last=SECONDS]
// A folder (or several files) holds a profile per thread of one process: the busiest (the main thread's) is
// summarised (a worker's, files/md5.ts, idles all along; a glob of both once read as "FILE TOP" gave empty tables).
// --last=N counts only the samples of the profile's last N seconds (e.g. the final measured run).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const lastArg = args.find((arg) => arg.startsWith('--last='));
const plain = args.filter((arg) => !arg.startsWith('--'));
const topArg = plain.find((arg) => /^\d+$/.test(arg));
const files = plain
  .filter((arg) => arg !== topArg)
  .flatMap((arg) => (statSync(arg).isDirectory() ? readdirSync(arg).filter((name) => name.endsWith('.cpuprofile')).map((name) => join(arg, name)) : [arg]));
const lastMicros = lastArg ? Number(lastArg.slice('--last='.length)) * 1e6 : Infinity;
if (files.length === 0) {
  console.error('usage: node bench/profile-top.js FOLDER|FILE.cpuprofile... [TOP] [--last=SECONDS]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
/** Samples not idle: a thread that waited all along (a worker) has as many samples as a busy one. */
function busySamples(profile) {
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
  return profile.samples.filter((id) => !idle.has(id)).length;
}
const profiles = files.map((name) => {
  const profile = JSON.parse(readFileSync(name, 'utf8'));
  return { name, profile, busy: busySamples(profile) };
});
profiles.sort((a, b) => b.busy - a.busy);
const { name: file, profile } = profiles[0];
if (profiles.length > 1) console.log(`${profiles.length} profiles; the busiest thread's: ${file}`);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map();
const deltas = profile.timeDeltas;
const from = profile.endTime - lastMicros;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += deltas[i] ?? 0;
  if (at < from) continue;
  const id = profile.samples[i];
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (deltas[i] ?? 0));
}
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

function where(frame) {
  const url = frame.url || '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url ? url.replace(/^file:\/\//, '') : `(${frame.functionName || 'native'})`;
}

const byFunction = new Map();
const byPlace = new Map();
for (const [id, micros] of selfMicros) {
  const frame = byId.get(id).callFrame;
  const place = where(frame);
  const fn = `${frame.functionName || '(anonymous)'}  ${place}:${frame.lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
}
const show = (title, map) => {
  console.log(`\n${title}`);
  for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((micros / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
  }
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled`);
show('self time by package / file', byPlace);
show('self time by function', byFunction);
