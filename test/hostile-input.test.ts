// Review of e2b2d15 (issue #13, points 7, 8 and 10): ordinary but hostile input — names that are
// Object.prototype members, NUL and lone surrogates, over-long indexed values, dotted writes into
// server-owned fields, arithmetic past what JSON carries — gets one answer on SQLite and PostgreSQL:
// stored correctly, or 400 with a catalogue code. test/malformed.test.ts only asks for "not a 5xx";
// these scenarios pin the exact answer (SPEC-style table: name, request, status, body).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, uniqueName, type SignedUpUser } from './helpers/accounts.ts';
import type { Client, Response } from './helpers/client.ts';

let server: TestServer;
let user: SignedUpUser;
/** An object of class Hostile every scenario may change and read. */
let target: string;

before(async () => {
  server = await startServer();
  user = await signUp(server.client);
  target = (await server.client.post('/1.1/classes/Hostile', { title: 'h' })).body.objectId;
});
after(async () => {
  await server?.close();
});

interface Scenario {
  name: string;
  /** app: the app key; master: the master key; user: the app key with `user`'s session. */
  as?: 'app' | 'master' | 'user';
  method: string;
  path: string | (() => string);
  send?: unknown;
  /** A body sent as this exact text (NUL and lone surrogates as JSON escapes). */
  raw?: string;
  query?: Record<string, string>;
  status: number;
  /** The whole answer; a function checks what varies (ids, dates). */
  body?: unknown | ((body: any) => void);
}

function clientFor(as: Scenario['as']): Client {
  if (as === 'master') return server.master;
  if (as === 'user') return server.client.withSession(user.sessionToken);
  return server.client;
}

async function run(scenarios: Scenario[]): Promise<void> {
  for (const s of scenarios) {
    const path = typeof s.path === 'function' ? s.path() : s.path;
    const options = s.raw !== undefined ? { raw: s.raw, query: s.query } : { body: s.send, query: s.query };
    const res: Response = await clientFor(s.as).request(s.method, path, options);
    const label = `${s.name}: ${s.method} ${path} → ${res.status} ${res.text.slice(0, 300)}`;
    assert.equal(res.status, s.status, label);
    if (typeof s.body === 'function') (s.body as (body: unknown) => void)(res.body);
    else if (s.body !== undefined) assert.deepEqual(res.body, s.body, label);
  }
}

const nul = 'Strings may not contain the NUL character.';
const surrogate = 'Strings must be valid Unicode (a lone surrogate was found).';
const outOfRange = 'cannot be stored (numbers must be finite, and whole numbers within ±9007199254740991 to count exactly)';
const objectPath = () => `/1.1/classes/Hostile/${target}`;
/** The hosted service's answers to a bad key and a bad class name (#15). */
const badKey = (key: string) => ({ code: 105, error: `Invalid key name. Keys are case-sensitive and 'a-zA-Z0-9_' are the only valid characters. The column is: '${key}'.` });
const badClass = { code: 103, error: 'Missing or invalid classname. Classnames are case-sensitive. They must start with a letter, and a-zA-Z0-9_ are the only valid characters.' };
const userPath = () => `/1.1/users/${user.objectId}`;

/** Every name Object.prototype holds: toString, constructor, __proto__, hasOwnProperty, valueOf, … */
const protoNames = Object.getOwnPropertyNames(Object.prototype);
/** Those a client may use as a class or field name (the others start with "__", which is reserved). */
const fieldNames = protoNames.filter((name) => !name.startsWith('__'));
const reservedNames = protoNames.filter((name) => name.startsWith('__'));

/** Text of `length` random CJK characters (3 UTF-8 bytes each, and incompressible, unlike 'a'.repeat). */
function cjk(length: number): string {
  return Array.from({ length }, () => String.fromCharCode(0x4e00 + Math.floor(Math.random() * 20000))).join('');
}

// Review of e2b2d15: a class, field, setting or batch path named like an Object.prototype member answered
// 500 (a plain-object table returned the inherited member: SQL got a function's source); an Increment of a
// field named 'toString' said "not a number"; vendors.toString changed Object.prototype.toString itself.
test('Object.prototype names as class names, keys, ids, settings and batch paths are ordinary names', async () => {
  assert.ok(fieldNames.length >= 7 && reservedNames.includes('__proto__'));
  const scenarios: Scenario[] = [];
  for (const name of fieldNames) {
    const field = { [name]: 1 };
    scenarios.push(
      { name: 'class name', method: 'POST', path: `/1.1/classes/${name}`, send: { n: 1 }, status: 201, body: (b: any) => assert.match(b.objectId, /^[0-9a-z]{24}$/) },
      {
        name: 'class query',
        method: 'GET',
        path: `/1.1/classes/${name}`,
        status: 200,
        body: (b: any) => assert.deepEqual(b.results.map((r: any) => r.n), [1]),
      },
      { name: 'batch path', method: 'POST', path: '/1.1/batch', send: { requests: [{ method: 'GET', path: `/1.1/classes/${name}` }] }, status: 200, body: (b: any) => assert.equal(b[0].success.results[0].n, 1) },
      { name: 'batch method', method: 'POST', path: '/1.1/batch', send: { requests: [{ method: name, path: '/1.1/classes/Hostile' }] }, status: 400, body: { code: 107, error: 'requests[0]: method must be GET, POST, PUT or DELETE.' } },
      { name: 'batch write to the class', method: 'POST', path: '/1.1/batch', send: { requests: [{ method: 'PUT', path: `/1.1/classes/${name}/nothing`, body: { [name]: 2 } }] }, status: 200, body: [{ error: { code: 1, error: `Could not find object by id 'nothing' for class '${name}'.` } }] },
      { name: 'Increment of an absent key', method: 'PUT', path: objectPath, send: { [name]: { __op: 'Increment' } }, status: 200 },
      { name: 'Add to an absent nested key', method: 'PUT', path: objectPath, send: { [`nested.${name}`]: { __op: 'Add', objects: [name] } }, status: 200 },
      { name: 'keys= projection', method: 'GET', path: objectPath, query: { keys: name }, status: 200, body: (b: any) => assert.deepEqual(Object.keys(b).sort(), [name, 'createdAt', 'objectId', 'updatedAt'].sort()) },
      { name: 'where key', method: 'GET', path: '/1.1/classes/Hostile', query: { where: JSON.stringify(field) }, status: 200, body: (b: any) => assert.deepEqual(b.results.map((r: any) => r.objectId), [target]) },
      { name: 'order key', method: 'GET', path: '/1.1/classes/Hostile', query: { order: name }, status: 200, body: (b: any) => assert.equal(b.results.length, 1) },
      { name: 'order key, descending', method: 'GET', path: '/1.1/classes/Hostile', query: { order: `-${name}` }, status: 200, body: (b: any) => assert.equal(b.results.length, 1) },
      { name: 'where key on _User', as: 'master', method: 'GET', path: '/1.1/users', query: { where: JSON.stringify(field) }, status: 200, body: { results: [] } },
      { name: 'where key on _Installation', as: 'master', method: 'GET', path: '/1.1/installations', query: { where: JSON.stringify(field), order: name }, status: 200, body: { results: [] } },
      { name: 'objectId (read)', method: 'GET', path: `/1.1/classes/Hostile/${name}`, status: 200, body: {} },
      { name: 'objectId (delete)', method: 'DELETE', path: `/1.1/classes/Hostile/${name}`, send: {}, status: 200, body: {} },
      { name: 'user id', method: 'GET', path: `/1.1/users/${name}`, status: 400, body: { code: 211, error: 'Could not find user.' } },
      { name: 'installation field', method: 'POST', path: '/1.1/installations', send: { installationId: `hostile-${name}`, deviceType: 'android', [name]: 1 }, status: 201, body: (b: any) => assert.ok(b.objectId) },
      { name: 'ACL principal', method: 'POST', path: '/1.1/classes/HostileAcl', send: { ACL: { [name]: { read: true } } }, status: 201, body: (b: any) => assert.ok(b.objectId) },
      { name: 'authData platform', method: 'POST', path: '/1.1/users', send: { authData: { [name]: { uid: `uid-${name}` } } }, status: 201, body: (b: any) => assert.deepEqual(b.authData, { [name]: { uid: `uid-${name}` } }) },
      { name: 'setting', as: 'master', method: 'PUT', path: '/1.1/settings', send: { [name]: 'x' }, status: 400, body: { code: 105, error: `Unknown setting "${name}".` } },
      { name: 'sms setting', as: 'master', method: 'PUT', path: '/1.1/settings', send: { sms: { [name]: 'x' } }, status: 400, body: { code: 105, error: `Unknown setting "sms.${name}".` } },
      { name: 'vendors profile', as: 'master', method: 'PUT', path: '/1.1/settings', send: { vendors: { [name]: { HMS: { appId: `id-${name}` } } } }, status: 200, body: (b: any) => assert.deepEqual(b.vendors[name], { HMS: { appId: `id-${name}` } }) },
      { name: 'vendors field', as: 'master', method: 'PUT', path: '/1.1/settings', send: { vendors: { _default: { mi: { [name]: 'v' } } } }, status: 200, body: (b: any) => assert.equal(b.vendors._default.mi[name], 'v') },
      { name: 'authProviders key', as: 'master', method: 'PUT', path: '/1.1/settings', send: { authProviders: { [name]: { validate: false } } }, status: 200, body: (b: any) => assert.deepEqual(b.authProviders[name], { validate: false }) },
    );
  }
  for (const name of reservedNames) {
    scenarios.push(
      { name: 'reserved class name', method: 'POST', path: `/1.1/classes/${name}`, send: { n: 1 }, status: 400, body: badClass },
      { name: 'reserved class query', method: 'GET', path: `/1.1/classes/${name}`, status: 400, body: badClass },
      { name: 'reserved class in a batch', method: 'POST', path: '/1.1/batch', send: { requests: [{ method: 'GET', path: `/1.1/classes/${name}/x` }] }, status: 200, body: [{ error: badClass }] },
      { name: 'reserved where key', method: 'GET', path: '/1.1/classes/Hostile', query: { where: JSON.stringify({ [`a.${name}`]: 1 }) }, status: 400, body: badKey(`a.${name}`) },
      { name: 'reserved order key', method: 'GET', path: '/1.1/classes/Hostile', query: { order: name }, status: 400, body: badKey(name) },
      { name: 'reserved objectId', method: 'GET', path: `/1.1/classes/Hostile/${name}`, status: 200, body: {} },
    );
    if (name !== '__proto__') {
      // (A body holding "__proto__" never gets this far: the JSON body parser refuses it.)
      scenarios.push({ name: 'reserved setting', as: 'master', method: 'PUT', path: '/1.1/settings', send: { [name]: 'x' }, status: 400, body: { code: 105, error: `Unknown setting "${name}".` } });
    }
  }
  // A query string is parsed by Roost itself, where "__proto__" would have replaced a value's prototype.
  scenarios.push({
    name: '__proto__ inside a where value',
    method: 'GET',
    path: '/1.1/classes/Hostile',
    query: { where: '{"title":{"__proto__":{"a":1}}}' },
    status: 400,
    body: { code: 121, error: "Invalid nested key '__proto__'." },
  });
  await run(scenarios);

  const stored = await server.client.get(objectPath());
  for (const name of fieldNames) {
    assert.equal(stored.body[name], 1, `${name} was incremented from nothing`);
    assert.deepEqual(stored.body.nested[name], [name], `nested.${name} was added to from nothing`);
  }
  // Nothing reached Object.prototype or the functions on it.
  assert.equal(({} as Record<string, unknown>).HMS, undefined);
  for (const name of fieldNames) assert.equal((Object.prototype as any)[name].HMS, undefined, `Object.prototype.${name}.HMS`);
});

// Review of e2b2d15: on PostgreSQL a login, password-reset or settings string with U+0000 answered 500
// (text and jsonb cannot hold it) while SQLite answered 211/205/200; a lone surrogate reached jsonb the same way.
test('NUL and lone surrogates get 111 on every store, wherever the text goes', async () => {
  const nulError = { code: 111, error: nul };
  const surrogateError = { code: 111, error: surrogate };
  await run([
    // Newly refused (they reached SQL before).
    { name: 'login username', method: 'POST', path: '/1.1/login', raw: '{"username":"a\\u0000b","password":"pw-hostile-1"}', status: 400, body: nulError },
    { name: 'login email', method: 'POST', path: '/1.1/login', raw: '{"email":"a\\ud800@example.com","password":"pw-hostile-1"}', status: 400, body: surrogateError },
    { name: 'login phone', method: 'POST', path: '/1.1/login', raw: '{"mobilePhoneNumber":"+86138\\u000000138000","password":"pw-hostile-1"}', status: 400, body: nulError },
    { name: 'password reset email', method: 'POST', path: '/1.1/requestPasswordReset', raw: '{"email":"a\\u0000@example.com"}', status: 400, body: nulError },
    { name: 'verification email', method: 'POST', path: '/1.1/requestEmailVerify', raw: '{"email":"a\\udc00@example.com"}', status: 400, body: surrogateError },
    { name: 'mail template', as: 'master', method: 'PUT', path: '/1.1/settings', raw: '{"verifyEmailText":"hi\\u0000 {{link}}"}', status: 400, body: nulError },
    { name: 'vendor credential', as: 'master', method: 'PUT', path: '/1.1/settings', raw: '{"vendors":{"_default":{"HMS":{"appId":"\\ud800"}}}}', status: 400, body: surrogateError },
    { name: 'setting name', as: 'master', method: 'PUT', path: '/1.1/settings', raw: '{"a\\u0000":1}', status: 400, body: nulError },
    // Already refused alike (4eb2f58 and before); pinned so both stores keep the same answer.
    { name: 'value', method: 'POST', path: '/1.1/classes/Hostile', raw: '{"v":"a\\u0000"}', status: 400, body: nulError },
    { name: 'sign-up username', method: 'POST', path: '/1.1/users', raw: '{"username":"a\\u0000","password":"pw-hostile-1"}', status: 400, body: nulError },
    { name: 'key', method: 'POST', path: '/1.1/classes/Hostile', raw: '{"a\\u0000":1}', status: 400, body: badKey('a\u0000') },
    { name: 'key, lone surrogate', method: 'POST', path: '/1.1/classes/Hostile', raw: '{"a\\ud800":1}', status: 400, body: badKey('a\ud800') },
    { name: 'nested key', method: 'POST', path: '/1.1/classes/Hostile', raw: '{"o":{"a\\u0000":1}}', status: 400, body: { code: 121, error: "Invalid nested key 'a\u0000'." } },
    { name: 'nested key, lone surrogate', method: 'POST', path: '/1.1/classes/Hostile', raw: '{"o":{"\\udc00":1}}', status: 400, body: { code: 121, error: "Invalid nested key '\udc00'." } },
    { name: 'where key', method: 'GET', path: '/1.1/classes/Hostile', query: { where: '{"a\\ud800":1}' }, status: 400, body: badKey('a\ud800') },
    // SQLite answered 500 (a malformed literal in the page statement) when a Pointer's objectId held NUL.
    { name: 'where Pointer objectId', method: 'GET', path: '/1.1/classes/Hostile', query: { where: '{"p":{"__type":"Pointer","className":"_User","objectId":"a\\u0000b"}}' }, status: 400, body: nulError },
    { name: "a user's followers", method: 'GET', path: '/1.1/users/a%00b/followers', status: 400, body: nulError },
    { name: 'class name', method: 'POST', path: '/1.1/classes/A%00B', send: {}, status: 400, body: badClass },
    { name: 'objectId', method: 'GET', path: '/1.1/classes/Hostile/a%00b', status: 200, body: {} },
    { name: 'objectId of a user', method: 'GET', path: '/1.1/users/a%00b', status: 400, body: { code: 211, error: 'Could not find user.' } },
    // fuzz-findings #5: PostgreSQL answered 500 once the path's user id reached the account store.
    { name: 'user id of updatePassword', as: 'master', method: 'PUT', path: '/1.1/users/a%00b/updatePassword', send: { old_password: 'x', new_password: 'pw-hostile-2' }, status: 400, body: { code: 211, error: 'Could not find user.' } },
    { name: 'user id of refreshSessionToken', as: 'master', method: 'PUT', path: '/1.1/users/a%00b/refreshSessionToken', status: 400, body: { code: 211, error: 'Could not find user.' } },
    // A lone surrogate cannot be written in UTF-8: its percent-encoding is a malformed URL.
    { name: 'class name, lone surrogate', method: 'GET', path: '/1.1/classes/A%ED%A0%80', status: 400, body: (b: any) => assert.equal(typeof b.code, 'number') },
  ]);
});

// Review of e2b2d15: PostgreSQL answered 500 to a username or email whose index row passed 2,704 bytes;
// SQLite stored it. Both now refuse past the documented lengths (README "Limits") and store up to them.
test('usernames and emails longer than the documented limits are refused alike; at the limit they are stored', async () => {
  const longName = cjk(257);
  const atLimit = cjk(256);
  const usernameError = { code: 217, error: 'Invalid username, it must be a non-blank string of at most 256 characters.' };
  const emailError = { code: 125, error: 'The email address is invalid: it may be at most 320 characters.' };
  await run([
    { name: 'sign-up, 257 characters', method: 'POST', path: '/1.1/users', send: { username: longName, password: 'pw-hostile-1' }, status: 400, body: usernameError },
    { name: 'sign-up, 3000 characters', method: 'POST', path: '/1.1/users', send: { username: cjk(3000), password: 'pw-hostile-1' }, status: 400, body: usernameError },
    { name: 'sign-up, 256 characters (768 bytes)', method: 'POST', path: '/1.1/users', send: { username: atLimit, password: 'pw-hostile-1' }, status: 201, body: (b: any) => assert.equal(b.username, atLimit) },
    { name: 'login at the limit', method: 'POST', path: '/1.1/login', send: { username: atLimit, password: 'pw-hostile-1' }, status: 200, body: (b: any) => assert.equal(b.username, atLimit) },
    { name: 'rename past the limit', as: 'user', method: 'PUT', path: userPath, send: { username: longName }, status: 400, body: usernameError },
    { name: 'sign-up email of 321 characters', method: 'POST', path: '/1.1/users', send: { username: uniqueName(), password: 'pw-hostile-1', email: `${cjk(309)}@example.com` }, status: 400, body: emailError },
    { name: 'email set past the limit', as: 'user', method: 'PUT', path: userPath, send: { email: `${cjk(3000)}@example.com` }, status: 400, body: emailError },
    { name: 'email of 320 characters', as: 'user', method: 'PUT', path: userPath, send: { email: `${cjk(308)}@example.com` }, status: 200 },
    { name: 'password reset past the limit', method: 'POST', path: '/1.1/requestPasswordReset', send: { email: `${cjk(400)}@example.com` }, status: 400, body: { code: 125, error: 'The email address is invalid.' } },
  ]);
});

// Review of e2b2d15: `ACL.x.read` and other dotted keys into server-owned fields were stored as ordinary
// fields (a data field named ACL or objectId, a hidden password object on a user) instead of refused.
test('dotted writes into ACL, objectId, createdAt, updatedAt, password and sessionToken are refused with 105', async () => {
  const refused = (key: string) => ({ code: 105, error: `Invalid key name '${key}': ${key.split('.')[0]} cannot be written through a dotted key.` });
  const scenarios: Scenario[] = [];
  for (const key of ['ACL.x.read', 'ACL.*', 'objectId.x', 'createdAt.x', 'updatedAt.y.z']) {
    const body = key === 'ACL.*' ? badKey('ACL.*') : refused(key);
    scenarios.push(
      { name: `update ${key}`, method: 'PUT', path: objectPath, send: { [key]: true }, status: 400, body },
      { name: `create ${key}`, method: 'POST', path: '/1.1/classes/Hostile', send: { [key]: true }, status: 400, body },
    );
  }
  scenarios.push(
    { name: 'Increment of ACL.x', method: 'PUT', path: objectPath, send: { 'ACL.x': { __op: 'Increment' } }, status: 400, body: refused('ACL.x') },
    { name: 'user password.x', as: 'user', method: 'PUT', path: userPath, send: { 'password.x': 'y' }, status: 400, body: refused('password.x') },
    { name: 'user sessionToken.x', as: 'user', method: 'PUT', path: userPath, send: { 'sessionToken.x': 'y' }, status: 400, body: refused('sessionToken.x') },
    { name: 'sign-up with password.x', method: 'POST', path: '/1.1/users', send: { username: uniqueName(), password: 'pw-hostile-1', 'password.x': 1 }, status: 400, body: refused('password.x') },
    // The whole ACL is still written as `ACL`.
    { name: 'ACL written whole', method: 'PUT', path: objectPath, send: { ACL: { '*': { read: true, write: true } } }, status: 200 },
  );
  await run(scenarios);
  const stored = await server.master.get(objectPath(), { query: { returnACL: 'true' } });
  assert.deepEqual(stored.body.ACL, { '*': { read: true, write: true } });
  assert.equal(stored.body.objectId, target);
  assert.equal(typeof stored.body.createdAt, 'string');
});

// Review of e2b2d15: an Increment past what a double holds stored null (JSON has no Infinity); one past
// 2^53 - 1 stored a number that no longer counts exactly. Both are refused and the stored value kept.
test('Increment, Decrement and bit operations whose result JSON cannot carry exactly answer 111 and change nothing', async () => {
  const failed = (op: string, key: string) => ({ code: 111, error: `Cannot ${op} '${key}': the result ${outOfRange}.` });
  const path = () => `/1.1/classes/Hostile/${target}`;
  await run([
    { name: 'set', method: 'PUT', path, send: { huge: 1e308, max: Number.MAX_SAFE_INTEGER, min: -Number.MAX_SAFE_INTEGER, bits: -Number.MAX_SAFE_INTEGER }, status: 200 },
    { name: 'Increment to Infinity', method: 'PUT', path, send: { huge: { __op: 'Increment', amount: 1e308 } }, status: 400, body: failed('increment', 'huge') },
    { name: 'Decrement to -Infinity', method: 'PUT', path, send: { huge: { __op: 'Decrement', amount: -1e308 } }, status: 400, body: failed('increment', 'huge') },
    { name: 'Increment past 2^53 - 1', method: 'PUT', path, send: { max: { __op: 'Increment', amount: 1 } }, status: 400, body: failed('increment', 'max') },
    { name: 'Decrement past -(2^53 - 1)', method: 'PUT', path, send: { min: { __op: 'Decrement' } }, status: 400, body: failed('increment', 'min') },
    { name: 'nested Increment past 2^53 - 1', method: 'PUT', path, send: { 'deep.n': { __op: 'Increment', amount: Number.MAX_SAFE_INTEGER } }, status: 200 },
    { name: 'nested, again', method: 'PUT', path, send: { 'deep.n': { __op: 'Increment', amount: Number.MAX_SAFE_INTEGER } }, status: 400, body: failed('increment', 'deep.n') },
    { name: 'BitAnd to -2^53', method: 'PUT', path, send: { bits: { __op: 'BitAnd', value: -2 } }, status: 400, body: failed('apply bitAnd to', 'bits') },
    // What JSON cannot carry is refused as it arrives (1e309 parses as Infinity).
    { name: 'amount 1e309', method: 'PUT', path, raw: '{"max":{"__op":"Increment","amount":1e309}}', status: 400, body: { code: 111, error: 'Increment amount must be a number.' } },
    { name: 'value 1e309', method: 'PUT', path, raw: '{"max":1e309}', status: 400, body: { code: 111, error: 'Numbers must be finite.' } },
    // Within range the counters keep counting.
    { name: 'Increment within range', method: 'PUT', path, send: { max: { __op: 'Decrement' }, huge: { __op: 'Increment', amount: -1e308 } }, status: 200 },
  ]);
  const stored = await server.client.get(path());
  assert.equal(stored.body.max, Number.MAX_SAFE_INTEGER - 1);
  assert.equal(stored.body.min, -Number.MAX_SAFE_INTEGER);
  assert.equal(stored.body.huge, 0);
  assert.equal(stored.body.bits, -Number.MAX_SAFE_INTEGER);
  assert.deepEqual(stored.body.deep, { n: Number.MAX_SAFE_INTEGER });
});
