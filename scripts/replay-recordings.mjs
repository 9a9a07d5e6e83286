#!/usr/bin/env node
// Replays the hosted service's recorded traffic (the LeanCloud JavaScript SDK's recordings/**/recording.har, Polly
// recordings of its own test suite against the hosted API in 2019) against a running Roost, in recorded time order,
// and reports where the status or the JSON shape differs: keys missing or extra, value types, error codes. Recorded
// ids and session tokens are mapped to the ones Roost answered, so a later request names Roost's objects; the
// request is signed with this app's keys (X-LC-Sign, `,master` where the recording had it). Not part of `npm test`:
// a tool for finding wire differences by hand (a difference can be the hosted app's own data, from before the run).
//
//   ROOST_URL=http://127.0.0.1:3000 APP_ID=… APP_KEY=… MASTER_KEY=… node scripts/replay-recordings.mjs
//
// Use a fresh app (`node dist/cli.js app create --name replay`): the standing data the SDK's tests read from the
// hosted app is created first, as scripts/sdk-suite.sh does. SDK_GIT (default: the mirror under /work/.mirror),
// SDK_REF (1fcc28d), ONLY (a regular expression on the recording's name), ORDER=1 also reports key order,
// MESSAGES=1 also error texts where the codes agree, HEADERS=1 also the Location and Content-Type headers.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';

const git = process.env.SDK_GIT ?? '/work/.mirror/leancloud+javascript-sdk/repo';
const ref = process.env.SDK_REF ?? '1fcc28d';
const base = process.env.ROOST_URL;
const appId = process.env.APP_ID, appKey = process.env.APP_KEY, masterKey = process.env.MASTER_KEY;
const only = process.env.ONLY ? new RegExp(process.env.ONLY) : null;

const parse = (t) => { try { return JSON.parse(t); } catch { return undefined; } };
// Polly kept gzipped bodies as a JSON array of hex chunks.
function recorded(text) {
  const v = parse(text);
  if (Array.isArray(v) && v.length > 0 && v.every((c) => typeof c === 'string' && /^[0-9a-f]*$/.test(c)) && v[0].startsWith('1f8b')) {
    try { return gunzipSync(Buffer.concat(v.map((c) => Buffer.from(c, 'hex')))).toString('utf8'); } catch { return text; }
  }
  return text;
}

const files = execFileSync('git', ['--git-dir', git, 'ls-tree', '-r', '--name-only', ref, 'recordings/'], { encoding: 'utf8' })
  .split('\n').filter((f) => f.endsWith('.har'));
const entries = [];
for (const file of files) {
  const har = JSON.parse(execFileSync('git', ['--git-dir', git, 'show', `${ref}:${file}`], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  for (const entry of har.log.entries) entries.push({ name: har.log._recordingName, entry });
}
// Requests the SDK sent at once (one startedDateTime) are replayed in the order the hosted service created their
// objects, so a later query without an order finds them as it did.
const createdAt = ({ entry }) => (entry.response.status === 201 && parse(recorded(entry.response.content?.text ?? ''))?.createdAt) || '';
entries.sort((a, b) => a.entry.startedDateTime.localeCompare(b.entry.startedDateTime) || createdAt(a).localeCompare(createdAt(b)) || a.entry._order - b.entry._order);

async function seed(path, body, method = 'POST') {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', 'x-lc-id': appId, 'x-lc-key': `${masterKey},master` },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`seeding ${path} failed: ${res.status} ${await res.text()}`);
  return res.json();
}
// The recorded app mailed verification links: its new users started with emailVerified false (SPEC §3.1).
await seed('/1.1/settings', { verifyEmailOnSignup: true }, 'PUT');
// The hosted app's GameScore objects without fields were older (2015) than its `contains-all-test` one (2017):
// queries without an order answered them first.
for (let i = 0; i < 9; i++) await seed('/1.1/classes/GameScore', {});
await seed('/1.1/classes/GameScore', { score: 2, playerName: 'sdf', cheatMode: false, arr: ['contains-all-test'] });
await seed('/1.1/users', { username: 'sdk-suite-standing-user', password: 'standing-user-password' });
const leeyeh = await seed('/1.1/users', { username: 'leeyeh', password: 'standing-user-password' });
// User/associate with authData logs in a user an earlier run had linked to this authData (200, not 201).
await seed('/1.1/users', { authData: { test: { uid: 'zaabbbccc123123usesomedeterministicstringplz', access_token: 'a123123aaabbbbcccc', expires_in: 1382686496 } } });
// Left by earlier runs, found and deleted by the tests' clean-up before they make their own.
await seed('/1.1/users', { username: 'imauser', password: 'standing-user-password', email: 'imauser@test.com' });
await seed('/1.1/roles', { name: 'testRole', ACL: { '*': { read: true } } });
// The four objects Queries/scan pages through were made by a hook outside the recordings.
for (let i = 0; i < 4; i++) await seed('/1.1/classes/TestClass', { timestamp: 1568867865073 });
await seed('/1.1/schemas/Person', { company: { default: 'leancloud' } });

// Recorded ids of the hosted app's standing objects that the recordings name without reading them first.
const map = new Map([['5627906060b22ef9c464cc99', leeyeh.objectId]]);
const subst = (text) => {
  if (!text) return text;
  for (const [from, to] of map) if (text.includes(from)) text = text.split(from).join(to);
  return text;
};
const idLike = (s) => typeof s === 'string' && (/^[0-9a-f]{24}$/.test(s) || /^[0-9a-z]{25}$/.test(s));
function learn(rec, ours, key) {
  if (rec === null || ours === null || typeof rec !== typeof ours) return;
  if (Array.isArray(rec) && Array.isArray(ours)) {
    for (let i = 0; i < Math.min(rec.length, ours.length); i++) learn(rec[i], ours[i], key);
    return;
  }
  if (typeof rec === 'object') {
    for (const k of Object.keys(rec)) if (k in ours) learn(rec[k], ours[k], k);
    return;
  }
  if (typeof rec === 'string' && rec !== ours && (key === 'objectId' || key === 'sessionToken' || idLike(rec)) && !map.has(rec)) map.set(rec, ours);
  // A scan cursor: the hosted service answered the same text on every page of a scan, so the latest page's counts.
  if (key === 'cursor' && typeof rec === 'string') map.set(rec, typeof ours === 'string' ? ours : rec);
}
const type = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
function shape(rec, ours, path, out) {
  if (type(rec) !== type(ours)) return out.push(`${path || '.'}: ${type(rec)} → ${type(ours)}`);
  if (Array.isArray(rec)) {
    for (let i = 0; i < Math.min(rec.length, ours.length, 3); i++) shape(rec[i], ours[i], `${path}[${i}]`, out);
    if ((rec.length === 0) !== (ours.length === 0)) out.push(`${path}: length ${rec.length} → ${ours.length}`);
    return;
  }
  if (rec && typeof rec === 'object') {
    const rk = Object.keys(rec), ok = Object.keys(ours);
    const missing = rk.filter((k) => !(k in ours)), extra = ok.filter((k) => !(k in rec));
    if (missing.length) out.push(`${path || '.'}: missing ${missing.join(',')}`);
    if (extra.length) out.push(`${path || '.'}: extra ${extra.join(',')}`);
    for (const k of rk) if (k in ours) shape(rec[k], ours[k], `${path}.${k}`, out);
    if (process.env.ORDER === '1' && !missing.length && !extra.length && rk.join() !== ok.join()) out.push(`${path || '.'}: order ${rk.join(',')} → ${ok.join(',')}`);
  }
}
let total = 0, sameStatus = 0, sameShape = 0;
const report = [];
for (const { name, entry } of entries) {
  const url = new URL(entry.request.url);
  const at = url.pathname.indexOf('/1.1/');
  if (at < 0) continue;
  if (only && !only.test(name)) continue;
  const headers = {};
  let master = false;
  for (const { name: h, value } of entry.request.headers) {
    const k = h.toLowerCase();
    if (k === 'x-lc-sign' || k === 'x-lc-key') master ||= String(value).endsWith(',master');
    else if (k === 'x-lc-session') headers[k] = subst(String(value));
    else if (k === 'content-type') headers[k] = value;
  }
  const ts = Date.now();
  headers['x-lc-id'] = appId;
  headers['x-lc-sign'] = `${createHash('md5').update(ts + (master ? masterKey : appKey)).digest('hex')},${ts}${master ? ',master' : ''}`;
  const target = base + subst(url.pathname.slice(at) + url.search);
  const body = entry.request.postData?.text ? subst(entry.request.postData.text) : undefined;
  let status, text, answered = new Headers();
  try {
    const get = entry.request.method === 'GET' || entry.request.method === 'HEAD';
    const res = await fetch(target, { method: entry.request.method, headers, body: get ? undefined : body });
    status = res.status; text = await res.text(); answered = res.headers;
  } catch (e) { status = 0; text = String(e); }
  total++;
  const recText = recorded(entry.response.content?.text ?? '');
  const rec = parse(recText), ours = parse(text);
  if (rec !== undefined && ours !== undefined) learn(rec, ours, '');
  const diffs = [];
  if (status === entry.response.status) sameStatus++;
  else diffs.push(`status ${entry.response.status} → ${status}`);
  if (rec !== undefined && ours !== undefined) shape(rec, ours, '', diffs);
  if (rec && ours && rec.code !== undefined && rec.code !== ours.code) diffs.push(`code ${rec.code} → ${ours.code}`);
  else if (process.env.MESSAGES === '1' && rec && ours && typeof rec.error === 'string' && rec.error !== ours.error) diffs.push(`error ${JSON.stringify(rec.error)} → ${JSON.stringify(ours.error)}`);
  if (process.env.HEADERS === '1') {
    // The headers a client reads: Location (ids as :id) and the content type.
    const norm = (v) => (v ?? '(none)').replace(/[0-9a-f]{24}/g, ':id').replace(/\s/g, '').toLowerCase();
    const recHeader = (n) => entry.response.headers.find((h) => h.name.toLowerCase() === n)?.value;
    for (const n of ['location', 'content-type']) {
      if (norm(recHeader(n)) !== norm(answered.get(n))) diffs.push(`header ${n}: ${recHeader(n)} → ${answered.get(n)}`);
    }
  }
  if (diffs.length === 0) sameShape++;
  else report.push(`${name} | ${entry.request.method} ${url.pathname.slice(at).replace(/[0-9a-f]{24}/g, ':id')}${url.search ? '?…' : ''}\n    ${diffs.join('\n    ')}\n    rec: ${recText.slice(0, 300)}\n    ours: ${String(text).slice(0, 300)}`);
}
console.log(report.join('\n'));
const kinds = new Map();
for (const line of report.join('\n').split('\n').filter((l) => /^    (?!rec:|ours:)/.test(l))) {
  const kind = line.trim().replace(/\[\d+\]/g, '[]').replace(/[0-9a-f]{24}/g, ':id');
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
}
console.log('\nDifferences by kind:');
for (const [kind, n] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(5)}  ${kind}`);
console.log(`\n${total} requests: status equal ${sameStatus}, status and shape equal ${sameShape} (${Math.round((100 * sameShape) / total)}%)`);
