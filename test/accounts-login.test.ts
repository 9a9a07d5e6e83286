// Login (row 4), users/me (row 6), and what the database holds of passwords and tokens.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { assertNoSecretsIn, signUp, uniqueName, type SignedUpUser } from './helpers/accounts.ts';
import { PasswordHasher, hashParallelism, passwordParams } from '../src/accounts/passwords.ts';
import { Turns } from '../src/lib/turns.ts';
import { availableParallelism } from 'node:os';

let database: TestDatabase;
let server: TestServer;
let ann: SignedUpUser;
const annEmail = `${uniqueName('ann')}@example.com`;
const annPhone = `+86${Math.floor(1e10 + Math.random() * 8e10)}`;

before(async () => {
  database = await testDatabase();
  server = await startServer({ database });
  ann = await signUp(server.client, { email: annEmail, mobilePhoneNumber: annPhone, city: 'Oslo' });
});
after(async () => {
  // No password, hash or token of this file's flows reached a log line.
  if (server) assertNoSecretsIn(server.logs);
  await server?.close();
  await database?.drop();
});

/** Every column of the user's row, read straight from the database. */
async function rawUserRow(objectId: string): Promise<Record<string, unknown>> {
  if (database.kind === 'sqlite') {
    const db = new Database(database.env.SQLITE_PATH, { readonly: true });
    try {
      return db.prepare(`SELECT * FROM objects WHERE class_name = '_User' AND id = ?`).get(objectId) as Record<string, unknown>;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT * FROM objects WHERE class_name = '_User' AND id = $1`, [objectId]);
    return rows[0];
  } finally {
    await client.end();
  }
}

test('login by username, email or phone returns the whole user and the same token each time', async () => {
  for (const identifier of [{ username: ann.username }, { email: annEmail }, { mobilePhoneNumber: annPhone }]) {
    const response = await server.client.post('/1.1/login', { ...identifier, password: ann.password });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.objectId, ann.objectId);
    assert.equal(response.body.sessionToken, ann.sessionToken);
    assert.equal(response.body.username, ann.username);
    assert.equal(response.body.email, annEmail);
    assert.equal(response.body.mobilePhoneNumber, annPhone);
    assert.equal(response.body.city, 'Oslo');
    assert.equal(response.body.emailVerified, null);
    assert.equal(response.body.mobilePhoneVerified, false);
    assert.deepEqual(Object.keys(response.body).sort(), [
      'city',
      'createdAt',
      'email',
      'emailVerified',
      'mobilePhoneNumber',
      'mobilePhoneVerified',
      'objectId',
      'sessionToken',
      'updatedAt',
      'username',
    ]);
  }
});

test('wrong password is 210, unknown identifier is 211', async () => {
  const wrong = await server.client.post('/1.1/login', { username: ann.username, password: 'nope' });
  assert.equal(wrong.status, 400);
  assert.deepEqual(wrong.body, { code: 210, error: 'The username and password mismatch.' });
  for (const identifier of [{ username: uniqueName() }, { email: 'nobody@example.com' }, { mobilePhoneNumber: '+10000000000' }]) {
    const unknown = await server.client.post('/1.1/login', { ...identifier, password: 'whatever' });
    assert.equal(unknown.status, 400, unknown.text);
    assert.deepEqual(unknown.body, { code: 211, error: 'Could not find user.' });
  }
  // Case sensitive, as the usernames are.
  const upper = await server.client.post('/1.1/login', { username: ann.username.toUpperCase(), password: ann.password });
  assert.equal(upper.body.code, 211);
});

test('login needs a password and an identifier; of several, the first counts (username, email, mobilePhoneNumber)', async () => {
  const cases: Array<[unknown, number]> = [
    [{ password: 'x' }, 200],
    [{ username: '', password: 'x' }, 217],
    [{ username: ann.username }, 201],
    [{ username: ann.username, password: '' }, 218],
    [{ username: uniqueName(), email: annEmail, password: ann.password }, 211],
    ['text', 107],
  ];
  for (const [body, code] of cases) {
    const response = await server.client.post('/1.1/login', body);
    assert.equal(response.status, 400, `${JSON.stringify(body)} → ${response.text}`);
    assert.equal(response.body.code, code, `${JSON.stringify(body)} → ${response.text}`);
  }
});

test('an unknown identifier takes as long as a wrong password (dummy hash)', async () => {
  const time = async (body: unknown) => {
    const start = process.hrtime.bigint();
    await server.client.post('/1.1/login', body);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  // Warm up both paths, then alternate so drift affects both alike.
  await time({ username: uniqueName(), password: 'x' });
  const unknown: number[] = [];
  const wrong: number[] = [];
  for (let i = 0; i < 5; i++) {
    unknown.push(await time({ username: uniqueName(), password: 'x' }));
    wrong.push(await time({ username: ann.username, password: `wrong-${i}` }));
  }
  // Without the dummy hash an unknown name answers in well under a millisecond of work;
  // with it, both take one argon2id verification (tens of ms). The fastest of each: a loaded machine
  // only ever adds time, and a median still moved past the margin once under a CI run's load.
  const fastest = (xs: number[]) => Math.min(...xs);
  assert.ok(fastest(unknown) > fastest(wrong) * 0.5, `unknown ${unknown.join(', ')} ms vs wrong ${wrong.join(', ')} ms`);
  // Clear the failures this test recorded, so later tests start unlocked.
  const ok = await server.client.post('/1.1/login', { username: ann.username, password: ann.password });
  assert.equal(ok.status, 200, ok.text);
});

test('users/me answers like login; a missing, unknown or garbage token is 211', async () => {
  const me = await server.client.get('/1.1/users/me', { session: ann.sessionToken });
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.objectId, ann.objectId);
  assert.equal(me.body.sessionToken, ann.sessionToken);
  assert.equal(me.body.city, 'Oslo');
  assert.equal('password' in me.body, false);
  for (const session of [undefined, 'unknown-token', 'x'.repeat(5000)]) {
    const bad = await server.client.get('/1.1/users/me', { session });
    assert.equal(bad.status, 400, bad.text);
    assert.deepEqual(bad.body, { code: 211, error: 'Could not find user.' });
  }
  // The SDK's path for the same thing (X-SVC-Session works too).
  const svc = await server.client.get('/1.1/users/me', { headers: { 'X-SVC-Session': ann.sessionToken } });
  assert.equal(svc.body.objectId, ann.objectId);
});

// #14 (accounts): users/me answers from the request's own session lookup, carried in the request
// context (it replaced a map of resolved users keyed by plaintext token): it is the stored user at
// once after a write, and a replaced token finds no user on the very next request.
test('users/me is the stored user of its own request: after an update, and not after a refresh', async () => {
  const user = await signUp(server.client, { city: 'Oslo' });
  for (const city of ['Bergen', 'Tromsø']) {
    const updated = await user.client.put(`/1.1/users/${user.objectId}`, { city });
    assert.equal(updated.status, 200, updated.text);
    const byId = await user.client.get(`/1.1/users/${user.objectId}`);
    const me = await user.client.get('/1.1/users/me');
    assert.equal(me.status, 200, me.text);
    assert.deepEqual(me.body, { ...byId.body, sessionToken: user.sessionToken });
  }
  const refreshed = await user.client.put(`/1.1/users/${user.objectId}/refreshSessionToken`, {});
  assert.equal(refreshed.status, 200, refreshed.text);
  const stale = await user.client.get('/1.1/users/me');
  assert.deepEqual([stale.status, stale.body], [400, { code: 211, error: 'Could not find user.' }]);
  const fresh = await server.client.get('/1.1/users/me', { session: refreshed.body.sessionToken });
  assert.equal(fresh.body.city, 'Tromsø');
});

test('a stale or unknown token is ignored on calls that need no user', async () => {
  const response = await server.client.post('/1.1/login', { username: ann.username, password: ann.password }, { session: 'stale-token' });
  assert.equal(response.status, 200, response.text);
  const created = await server.client.post('/1.1/classes/Note', { text: 'hi' }, { session: 'stale-token' });
  assert.equal(created.status, 201, created.text);
});

test('the database holds an argon2id hash and no usable token', async () => {
  const row = await rawUserRow(ann.objectId);
  assert.match(String(row.password_hash), /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  const text = JSON.stringify(row);
  assert.equal(text.includes(ann.password), false);
  assert.equal(text.includes(ann.sessionToken), false);
  assert.match(String(row.session_digest), /^[0-9a-f]{64}$/);
  assert.ok(String(row.session_cipher).length > 40);
  assert.equal(JSON.stringify(row.data).includes('password'), false);
});

// #14 Speed: hashes take turns, one per core (PasswordHasher, src/lib/turns.ts); every check still answers
// as it would alone, and no more than the turns' number ever run at once.
test('password hashes take turns, one per core, and each answers as alone', async () => {
  assert.ok(hashParallelism() >= 1 && hashParallelism() <= availableParallelism());
  const turns = new Turns(2);
  let running = 0;
  let most = 0;
  const work = (i: number) => turns.run(async () => {
    most = Math.max(most, ++running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    if (i === 3) throw new Error('third fails');
    return i;
  });
  const settled = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => work(i)));
  assert.equal(most, 2);
  assert.deepEqual(settled.map((s) => (s.status === 'fulfilled' ? s.value : 'failed')), [0, 1, 2, 'failed', 4, 5, 6, 7]);
  const hasher = new PasswordHasher({ params: { ...passwordParams, memoryCost: 1024, timeCost: 1 }, parallel: 1 });
  const stored = await hasher.hash('right-password');
  const answers = await Promise.all(['right-password', 'wrong', 'right-password', ''].map((p) => hasher.verify(stored, p)));
  assert.deepEqual(answers, [true, false, true, false]);
});
