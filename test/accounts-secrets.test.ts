// Passwords and their hashes never leave the server: not in any response body (errors included)
// and not in any log line, whatever the flow. Session tokens appear only in login-type responses.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { assertNoSecretsIn, signUp, uniqueName } from './helpers/accounts.ts';
import type { Response } from './helpers/client.ts';

let database: TestDatabase;
let server: TestServer;
const responses: Response[] = [];
const passwords = ['Correct-Horse-1', 'Battery-Staple-2', 'Wrong-Guess-3', 'In-Update-4', 'Batch-Secret-5', 'Malformed-6'];

before(async () => {
  database = await testDatabase();
  server = await startServer({ database, env: { LOG_LEVEL: 'debug' } });
});
after(async () => {
  await server?.close();
  await database?.drop();
});

async function allHashes(): Promise<string[]> {
  if (database.kind === 'sqlite') {
    const db = new Database(database.env.SQLITE_PATH, { readonly: true });
    try {
      return (db.prepare(`SELECT password_hash FROM objects WHERE password_hash IS NOT NULL`).all() as Array<{ password_hash: string }>).map(
        (row) => row.password_hash,
      );
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT password_hash FROM objects WHERE password_hash IS NOT NULL`);
    return rows.map((row) => row.password_hash as string);
  } finally {
    await client.end();
  }
}

test('every account flow, errors included, keeps passwords and hashes to itself', async () => {
  const record = (response: Response) => {
    responses.push(response);
    return response;
  };
  const { client, master } = server;
  const username = uniqueName('secret');
  const signup = record(await client.post('/1.1/users', { username, password: passwords[0], email: `${username}@example.com` }));
  const { objectId, sessionToken } = signup.body;
  const session = client.withSession(sessionToken);
  record(await client.post('/1.1/users', { username, password: passwords[0] })); // 202
  record(await client.post('/1.1/users', { username: '', password: passwords[0] })); // 217
  record(await client.post('/1.1/users', { username: uniqueName(), password: passwords[0], email: 'bad' })); // 125
  record(await client.post('/1.1/users', { username: uniqueName(), password: passwords[0], emailVerified: true })); // 119
  record(await client.post('/1.1/login', { username, password: passwords[2] })); // 210
  record(await client.post('/1.1/login', { username: uniqueName(), password: passwords[2] })); // 211
  record(await client.post('/1.1/login', { email: `${username}@example.com`, password: passwords[0] }));
  record(await client.post('/1.1/login', { username, email: 'x@example.com', password: passwords[0] })); // exactly one
  record(await client.request('POST', '/1.1/login', { raw: `{"username":"${username}","password":"${passwords[5]}"` })); // malformed
  record(await client.request('POST', '/1.1/login', { raw: `password=${passwords[5]}`, headers: { 'Content-Type': 'text/plain' } }));
  record(await session.get('/1.1/users/me'));
  record(await session.get(`/1.1/users/${objectId}`));
  record(await session.get(`/1.1/classes/_User/${objectId}`, { query: { keys: 'password' } }));
  record(await session.put(`/1.1/users/${objectId}`, { password: passwords[3] })); // 119
  record(await session.put(`/1.1/classes/_User/${objectId}?new=true`, { city: 'x' }));
  record(await session.put(`/1.1/users/${objectId}/updatePassword`, { old_password: passwords[2], new_password: passwords[1] })); // 210
  const changed = record(
    await session.put(`/1.1/users/${objectId}/updatePassword`, { old_password: passwords[0], new_password: passwords[1] }),
  );
  assert.equal(changed.status, 200, changed.text);
  const fresh = client.withSession(changed.body.sessionToken);
  record(await fresh.put(`/1.1/users/${objectId}/refreshSessionToken`));
  record(
    await client.post('/1.1/batch', {
      requests: [
        { method: 'POST', path: '/1.1/users', body: { username: uniqueName(), password: passwords[4] } },
        { method: 'POST', path: '/1.1/users', body: { username, password: passwords[4] } },
        { method: 'PUT', path: `/1.1/users/${objectId}`, body: { password: passwords[4] } },
        { method: 'GET', path: `/1.1/classes/_User/${objectId}` },
      ],
    }),
  );
  record(await master.get('/1.1/users', { query: { keys: 'password,username', where: { password: passwords[1] } } }));
  record(await master.get('/1.1/classes/_User'));
  record(await master.get('/1.1/users', { query: { order: 'password', count: 1 } }));
  const other = await signUp(client);
  record(await other.client.get(`/1.1/users/${objectId}`));
  record(await other.client.put(`/1.1/users/${objectId}`, { password: passwords[3] }));

  const hashes = await allHashes();
  assert.ok(hashes.length >= 3, 'the flows above created users with passwords');
  const secrets = [...passwords, ...hashes];
  for (const response of responses) {
    for (const secret of secrets) assert.equal(response.text.includes(secret), false, `${secret} in ${response.text}`);
    assert.equal(response.text.includes('$argon2'), false, response.text);
    assert.equal(/"password"\s*:/.test(response.text), false, response.text);
  }
  assertNoSecretsIn(server.logs, [...secrets, sessionToken, changed.body.sessionToken]);
  assert.ok(server.logs.length >= responses.length, 'the server logged its requests');
});

test('session tokens appear only in login-type responses', async () => {
  const user = await signUp(server.client);
  const readers = [
    await server.master.get(`/1.1/users/${user.objectId}`),
    await user.client.get(`/1.1/users/${user.objectId}`),
    await user.client.get(`/1.1/classes/_User/${user.objectId}`),
    await user.client.put(`/1.1/users/${user.objectId}?new=true`, { a: 1 }),
    await user.client.put(`/1.1/users/${user.objectId}`, { a: 2 }),
    await server.master.get('/1.1/users', { query: { where: { objectId: user.objectId } } }),
  ];
  for (const response of readers) {
    assert.equal(response.status, 200, response.text);
    assert.equal(response.text.includes(user.sessionToken), false, response.text);
    assert.equal(response.text.includes('sessionToken'), false, response.text);
  }
  const login = await server.client.post('/1.1/login', { username: user.username, password: user.password });
  assert.equal(login.body.sessionToken, user.sessionToken);
  assertNoSecretsIn(server.logs, [user.sessionToken]);
});
