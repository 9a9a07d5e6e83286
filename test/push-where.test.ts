// Push targeting with the full query language (issue #15, point 7): POST /1.1/push `where` is an
// `_Installation` query, parsed and compiled as GET /1.1/installations parses and compiles it, so it
// reaches exactly the installations that query finds (less the invalid and idle ones), over more
// than one fan-out page, when scheduled, and through the makers under mixed push; a bad where gets
// the query's own answer.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { startServer, ManualClock, type TestServer } from './helpers/harness.ts';
import { KeyClient } from './helpers/mail.ts';
import { ChannelClient } from '../src/push/channel/client.ts';
import type { VendorDispatch, VendorSendInput } from '../src/push/vendor-dispatch.ts';

const clock = new ManualClock(Date.now());
const calls: VendorSendInput[] = [];
const dispatch: VendorDispatch = {
  async send(input) {
    calls.push(input);
    return input.devices.map((d) => ({ installationObjectId: d.installationObjectId, status: 'sent' as const }));
  },
};

let server: TestServer;
let master: KeyClient;
const devices = new Map<string, ChannelClient>();
const objectIds = new Map<string, string>();
const users: string[] = [];
let secondBatchAt = '';

const pointer = (objectId: string) => ({ __type: 'Pointer', className: '_User', objectId });
const fillers = ['pw-f0', 'pw-f1', 'pw-f2', 'pw-f3', 'pw-f4', 'pw-f5', 'pw-f6'];

async function install(installationId: string, fields: Record<string, unknown>): Promise<void> {
  clock.advance(10);
  const response = await master.post('/1.1/installations', { installationId, ...fields });
  assert.equal(response.status, 201, response.text);
  objectIds.set(installationId, response.body.objectId);
  const device = new ChannelClient({ url: server.url, appId: server.appId, appKey: server.appKey, installationId });
  await device.connect();
  devices.set(installationId, device);
}

before(async () => {
  // Pages of 10: the 12 installations take two pages, so each where also meets the paging predicate.
  server = await startServer({ clock, vendorDispatch: dispatch, env: { PUSH_PAGE_SIZE: '10' } });
  master = new KeyClient({ url: server.url, appId: server.appId, appKey: server.appKey, masterKey: server.masterKey });
  for (const username of ['pw-ann', 'pw-bob']) {
    const signup = await master.post('/1.1/users', { username, password: 'secret-1' });
    assert.equal(signup.status, 201, signup.text);
    users.push(signup.body.objectId);
  }
  await install('pw-1', { deviceType: 'ios', channels: ['a'], city: 'Oslo', age: 30, user: pointer(users[0]), prefs: { lang: 'no' } });
  await install('pw-2', { deviceType: 'android', channels: ['a', 'b'], city: 'Bergen', age: 20 });
  clock.advance(10);
  secondBatchAt = new Date(clock.now()).toISOString();
  await install('pw-3', { deviceType: 'android', channels: ['b'], age: 40 });
  await install('pw-4', { deviceType: 'ios', channels: [], city: 'oslo', user: pointer(users[1]) });
  // Matches many of the wheres below, but a maker reported it invalid: never targeted.
  await install('pw-5', { deviceType: 'android', channels: ['a', 'b'], city: 'Oslo', age: 30, valid: false });
  for (const [i, name] of fillers.entries()) await install(name, { deviceType: 'android', channels: ['z'], age: 50 + i });
});
after(async () => {
  await Promise.all([...devices.values()].map((d) => d.close()));
  await server?.close();
});

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Runs the fan-out; answers the installationIds whose device got the push on the own channel. */
async function reached(notificationId: string): Promise<string[]> {
  await server.services.push.drain();
  const record = await master.get(`/1.1/notifications/${notificationId}`);
  assert.equal(record.status, 200, record.text);
  const receivers = () => [...devices].filter(([, d]) => d.received.has(notificationId)).map(([name]) => name);
  const routed = record.body.routes.lc.devices;
  await waitFor(() => receivers().length >= routed, `${routed} devices to receive ${notificationId}`);
  // A device the push should not reach gets its chance to show up.
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(record.body.status, 'done');
  return receivers().sort();
}

async function push(body: Record<string, unknown>): Promise<string> {
  const response = await master.post('/1.1/push', { data: { alert: 'hi' }, ...body });
  assert.equal(response.status, 201, `${JSON.stringify(body)} → ${response.text}`);
  return response.body.objectId;
}

/** What GET /1.1/installations finds for `where`, less the invalid installation: a push reaches exactly these. */
async function found(where: unknown): Promise<string[]> {
  const response = await master.get('/1.1/installations', { query: { where, limit: 1000 } });
  assert.equal(response.status, 200, response.text);
  return (response.body.results as Array<{ installationId: string; valid?: boolean }>)
    .filter((r) => r.valid !== false)
    .map((r) => r.installationId)
    .sort();
}

test('each operator of the query language reaches exactly the installations the same query finds', async () => {
  const names = (...list: string[]) => list.sort();
  const cases: Array<[unknown, string[]]> = [
    [{ deviceType: 'ios' }, names('pw-1', 'pw-4')],
    [{ deviceType: { $ne: 'ios' } }, names('pw-2', 'pw-3', ...fillers)],
    [{ city: { $in: ['Oslo', 'Bergen'] } }, names('pw-1', 'pw-2')],
    [{ city: { $nin: ['Oslo', 'Bergen'] } }, names('pw-3', 'pw-4', ...fillers)],
    [{ city: { $exists: true } }, names('pw-1', 'pw-2', 'pw-4')],
    [{ city: { $exists: false } }, names('pw-3', ...fillers)],
    [{ $or: [{ city: 'Oslo' }, { age: { $gte: 40, $lt: 50 } }] }, names('pw-1', 'pw-3')],
    [{ $and: [{ deviceType: 'android' }, { age: { $gt: 10, $lte: 20 } }] }, names('pw-2')],
    [[{ deviceType: 'ios' }, { city: 'Oslo' }], names('pw-1')],
    [{ age: { $gte: 55 } }, names('pw-f5', 'pw-f6')],
    [{ city: { $regex: '^os', $options: 'i' } }, names('pw-1', 'pw-4')],
    [{ user: pointer(users[0]) }, names('pw-1')],
    [{ user: { $in: [pointer(users[0]), pointer(users[1])] } }, names('pw-1', 'pw-4')],
    [{ user: { $exists: true }, deviceType: 'ios', city: { $ne: 'Oslo' } }, names('pw-4')],
    [{ channels: 'b' }, names('pw-2', 'pw-3')],
    [{ channels: { $in: ['b', 'z'] }, age: { $lt: 51 } }, names('pw-2', 'pw-3', 'pw-f0')],
    [{ channels: { $all: ['a', 'b'] } }, names('pw-2')],
    [{ channels: { $size: 0 } }, names('pw-4')],
    [{ installationId: { $in: ['pw-2', 'pw-4', 'pw-5', 'nobody'] } }, names('pw-2', 'pw-4')],
    [{ installationId: { $nin: ['pw-1', ...fillers] } }, names('pw-2', 'pw-3', 'pw-4')],
    [{ objectId: { $in: [objectIds.get('pw-3'), objectIds.get('pw-f6')] } }, names('pw-3', 'pw-f6')],
    [{ 'prefs.lang': 'no' }, names('pw-1')],
    [{ createdAt: { $lt: { __type: 'Date', iso: secondBatchAt } } }, names('pw-1', 'pw-2')],
    // The invalid installation stays out even when the where asks for it.
    [{ $or: [{ valid: false }, { city: 'Bergen' }] }, names('pw-2')],
    [{ $or: [{ city: 'Nowhere' }, { age: 1000 }] }, []],
    // Subqueries (#16 point 4): the installations of the users a user query finds, as the master's.
    [{ user: { $inQuery: { className: '_User', where: { username: 'pw-bob' } } } }, names('pw-4')],
    [{ user: { $notInQuery: { className: '_User', where: { username: 'pw-bob' } } }, deviceType: 'ios' }, names('pw-1')],
  ];
  for (const [where, expected] of cases) {
    assert.deepEqual(await found(where), expected, `query ${JSON.stringify(where)}`);
    assert.deepEqual(await reached(await push({ where })), expected, `push ${JSON.stringify(where)}`);
  }
});

test('where as a JSON string, and where with channels, which are added to it', async () => {
  assert.deepEqual(await reached(await push({ where: JSON.stringify({ city: { $in: ['Oslo'] } }) })), ['pw-1']);
  assert.deepEqual(await reached(await push({ where: { deviceType: { $ne: 'ios' } }, channels: ['a'] })), ['pw-2']);
  assert.deepEqual(await reached(await push({ where: { $or: [{ age: 20 }, { age: 40 }] }, channels: ['b', 'z'] })), ['pw-2', 'pw-3']);
});

test('the record keeps the where as it was sent, operators included', async () => {
  const where = { city: { $in: ['Oslo'] }, 'prefs.lang': { $exists: true }, user: pointer(users[0]) };
  const id = await push({ where });
  assert.deepEqual(await reached(id), ['pw-1']);
  const record = await master.get(`/1.1/notifications/${id}`);
  assert.deepEqual(record.body.where, where);
});

test('a bad where gets the same answer as the same where in an _Installation query (never 121)', async () => {
  const wheres: unknown[] = [
    { n: { $nope: 1 } },
    { n: { $inQuery: { where: { a: 1 } } } },
    { n: { $select: { query: { className: '_User' } } } },
    { 'bad key': 1 },
    { __n: 1 },
    { $or: 'x' },
    { $or: [{ a: { $in: 'x' } }] },
    { n: { $regex: '(?<=a)b' } },
    { n: { $regex: 'a', $options: 'q' } },
    { n: { $exists: 'yes' } },
    { n: { $size: -1 } },
    { n: { $lt: { a: 1 } } },
    { n: { __type: 'Date', iso: 'yesterday' } },
    { user: { __type: 'Pointer', className: '_User' } },
    5,
    'not json',
  ];
  for (const where of wheres) {
    const query = await master.get('/1.1/installations', { query: { where } });
    const pushed = await master.post('/1.1/push', { data: { alert: 'hi' }, where });
    assert.equal(query.status, 400, `${JSON.stringify(where)} → ${query.text}`);
    assert.notEqual(query.body.code, 121);
    assert.deepEqual([pushed.status, pushed.body], [query.status, query.body], JSON.stringify(where));
  }
  // Two codes spelled out, so a change to the shared parser shows here too (the words are the parser's).
  const badKey = await master.post('/1.1/push', { data: { alert: 'hi' }, where: { 'bad key': 1 } });
  assert.deepEqual([badKey.status, badKey.body.code], [400, 105]);
  const notList = await master.post('/1.1/push', { data: { alert: 'hi' }, where: { n: { $in: 'x' } } });
  assert.deepEqual([notList.status, notList.body.code], [400, 102]);
  // Text the parser does not look at is still refused as any stored text is.
  const nul = await master.post('/1.1/push', { data: { alert: 'hi' }, where: { user: { __type: 'Pointer', className: 'a\u0000', objectId: 'x' } } });
  assert.deepEqual([nul.status, nul.body], [400, { code: 111, error: 'Strings may not contain the NUL character.' }]);
});

test('a scheduled push keeps its where and reaches the installations it selects when its time comes', async () => {
  const where = { $or: [{ city: { $regex: '^OS', $options: 'i' } }, { channels: { $all: ['a', 'b'] } }], age: { $ne: 30 } };
  const at = new Date(clock.now() + 5 * 60_000).toISOString();
  const id = await push({ where, channels: ['a', 'b', ''], push_time: at });
  const listed = await master.get('/1.1/scheduledPushMessages');
  assert.equal(listed.status, 200, listed.text);
  const entry = listed.body.results.find((r: { push_msg: { id: string } }) => r.push_msg.id === id);
  assert.deepEqual(entry.push_msg.where.query, { $and: [where, { channels: { $in: ['a', 'b', ''] } }] });
  await server.services.push.drain();
  assert.equal(devices.get('pw-2')!.received.has(id), false, 'not before push_time');
  clock.advance(6 * 60_000);
  assert.deepEqual(await reached(id), ['pw-2']);
});

test('mixed push: the same where picks the devices the makers get', async () => {
  const on = await master.put('/1.1/settings', { commercial: true, mixedPush: true });
  assert.equal(on.status, 200, on.text);
  calls.length = 0;
  await install('mx-1', { deviceType: 'android', vendor: 'HMS', registrationId: 'reg-1', city: 'Oslo', channels: ['m'] });
  await install('mx-2', { deviceType: 'android', vendor: 'mi', registrationId: 'reg-2', city: 'Bergen', channels: ['m'] });
  await install('mx-3', { deviceType: 'android', vendor: 'HMS', registrationId: 'reg-3', channels: ['m'] });
  await install('mx-4', { deviceType: 'android', vendor: 'HMS', registrationId: 'reg-4', city: 'Oslo', channels: ['m'], valid: false });
  const id = await push({ where: { vendor: { $in: ['HMS', 'mi'] }, city: { $exists: true }, registrationId: { $ne: 'reg-9' } } });
  assert.deepEqual(await reached(id), []);
  const sent = calls.flatMap((c) => c.devices.map((d) => `${c.vendor}:${d.registrationId}`)).sort();
  assert.deepEqual(sent, ['HMS:reg-1', 'mi:reg-2']);
  const record = await master.get(`/1.1/notifications/${id}`);
  assert.equal(record.body.devices, 2);
  assert.equal(record.body.successes, 2);
  // The own channel's devices and the makers' in one push, by one where.
  calls.length = 0;
  const both = await push({ where: { $or: [{ registrationId: 'reg-3' }, { installationId: 'pw-3' }] } });
  assert.deepEqual(await reached(both), ['pw-3']);
  assert.deepEqual(calls.flatMap((c) => c.devices.map((d) => d.registrationId)), ['reg-3']);
  const off = await master.put('/1.1/settings', { mixedPush: false });
  assert.equal(off.status, 200, off.text);
});

// A where the parser accepts must never fail in the database: a push is sent by workers in order of
// push_time, so a push whose page query failed would be tried again forever and hold every later push.
test('a where no installation can match ($size past any array) is sent to nobody, and later pushes still go', async () => {
  for (const size of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
    const where = { channels: { $size: size } };
    const id = await push({ where });
    assert.deepEqual(await reached(id), []);
    assert.deepEqual(await found(where), []);
  }
  assert.deepEqual(await reached(await push({ where: { installationId: 'pw-3' } })), ['pw-3']);
});

test('a push whose stored selector this version cannot run is closed with the error, and the pushes after it still go', async () => {
  const at = (minutes: number) => new Date(clock.now() + minutes * 60_000).toISOString();
  const broken = await push({ where: { installationId: 'pw-1' }, push_time: at(2) });
  const next = await push({ where: { installationId: 'pw-2' }, push_time: at(3) });
  // As a record written by a version whose where tree this one does not know.
  const db = (server.store as unknown as { db: Kysely<any> }).db;
  await sql`UPDATE push_notifications SET selector = '{"op":"within","path":["n"]}' WHERE id = ${broken}`.execute(db);
  clock.advance(4 * 60_000);
  assert.deepEqual(await reached(next), ['pw-2']);
  const record = await master.get(`/1.1/notifications/${broken}`);
  assert.equal(record.body.status, 'done');
  assert.equal(record.body.devices, 0);
  const reasons = Object.keys(record.body.errorDetails);
  assert.equal(reasons.length, 1);
  assert.equal(reasons[0], 'the installations could not be selected: Unknown where node "within".');
  assert.equal(devices.get('pw-1')!.received.has(broken), false);
  assert.ok(server.logs.some((line) => line.includes('selecting the installations failed') && line.includes(broken)));
});

test('a client push where reaches other classes as a find by the same caller would: class rules, ACLs', async () => {
  assert.equal((await master.put('/1.1/settings', { clientPushAllowed: true })).status, 200);
  try {
    const client = new KeyClient({ url: server.url, appId: server.appId, appKey: server.appKey });
    const login = await client.post('/1.1/login', { username: 'pw-ann', password: 'secret-1' });
    assert.equal(login.status, 200, login.text);
    const ann = client.withSession(login.body.sessionToken);
    // _User is found with the master key only (userQueryPermission off): a push may not probe it either.
    const probe = await client.post('/1.1/push', {
      data: { alert: 'hi' },
      where: { user: { $inQuery: { className: '_User', where: { username: 'pw-bob' } } } },
    });
    assert.equal(probe.status, 403);
    assert.deepEqual(probe.body, { code: 403, error: 'Forbidden to find by class permissions.' });
    // pw-ann's tag is hers alone; pw-bob's is public.
    for (const [i, acl] of [{ [users[0]]: { read: true } }, { '*': { read: true } }].entries()) {
      const tag = await master.post('/1.1/classes/PwTag', { tag: 'x', user: pointer(users[i]), ACL: acl });
      assert.equal(tag.status, 201, tag.text);
    }
    const where = { user: { $select: { query: { className: 'PwTag', where: { tag: 'x' } }, key: 'user' } } };
    const send = async (caller: KeyClient) => {
      const response = await caller.post('/1.1/push', { data: { alert: 'hi' }, where });
      assert.equal(response.status, 201, response.text);
      return reached(response.body.objectId);
    };
    assert.deepEqual(await send(client), ['pw-4']);
    assert.deepEqual(await send(ann), ['pw-1', 'pw-4']);
    assert.deepEqual(await send(master), ['pw-1', 'pw-4']);
  } finally {
    await master.put('/1.1/settings', { clientPushAllowed: false });
  }
});
