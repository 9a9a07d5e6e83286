import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { holdWriteLock } from './helpers/locks.ts';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { loadConfig } from '../src/config.ts';

/**
 * Regression: a write that found the database locked past SQLite's busy_timeout answered
 * 500 (5 s by default; 300 ms here, SQLITE_BUSY_TIMEOUT_MS, so the three writes below wait 1 s, not 15). PostgreSQL has no busy timeout; its database here gets a 1 s lock_timeout, and another
 * session holds the objects table, to reach the same situation.
 */
let database: TestDatabase;
let server: TestServer;

before(async () => {
  database = await testDatabase({ sqliteBusyTimeoutMs: 300 });
  if (database.kind === 'postgres') {
    const name = new URL(database.env.DATABASE_URL).pathname.slice(1);
    const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await client.connect();
    await client.query(`ALTER DATABASE ${name} SET lock_timeout = '1s'`);
    await client.end();
  }
  server = await startServer({ database });
});
after(async () => {
  await server?.close();
  await database?.drop();
});

const busy = { code: 503, error: 'The database is busy. Try again in a moment.' };

test('a write that cannot get the lock answers 503 with a retryable message and leaves nothing behind', async () => {
  const release = await holdWriteLock(database, 'objects');
  let created, signup, batch;
  const started = performance.now();
  try {
    created = await server.client.post('/1.1/classes/Busy', { n: 1 });
    // The configured wait, not the default 5 s (PostgreSQL's is lock_timeout, 1 s).
    assert.ok(performance.now() - started < 4000, `the first write waited ${(performance.now() - started).toFixed(0)} ms`);
    signup = await server.client.post('/1.1/users', { username: 'busy-user', password: 'secret-pass' });
    batch = await server.client.post('/1.1/batch', {
      requests: [{ method: 'POST', path: '/1.1/classes/Busy', body: { n: 2 } }],
    });
  } finally {
    await release();
  }
  assert.deepEqual([created.status, created.body], [503, busy]);
  assert.equal(created.headers.get('retry-after'), '1');
  assert.deepEqual([signup.status, signup.body], [503, busy]);
  assert.deepEqual([batch.status, batch.body], [200, [{ error: busy }]]);
  assert.ok(!server.logs.join('').includes('"level":50'), 'a busy database is not logged as an unexpected error');

  const nothing = await server.master.get('/1.1/classes/Busy');
  assert.deepEqual([nothing.status, nothing.body], [200, { results: [] }]);
  const login = await server.client.post('/1.1/login', { username: 'busy-user', password: 'secret-pass' });
  assert.deepEqual([login.status, login.body.code], [400, 211]);

  const retried = await server.client.post('/1.1/classes/Busy', { n: 1 });
  assert.equal(retried.status, 201);
});

test('SQLITE_BUSY_TIMEOUT_MS is read and checked', () => {
  assert.equal(loadConfig({}).sqliteBusyTimeoutMs, 5000);
  assert.equal(loadConfig({ SQLITE_BUSY_TIMEOUT_MS: '300' }).sqliteBusyTimeoutMs, 300);
  assert.throws(() => loadConfig({ SQLITE_BUSY_TIMEOUT_MS: '-1' }), /SQLITE_BUSY_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ SQLITE_BUSY_TIMEOUT_MS: '60001' }), /SQLITE_BUSY_TIMEOUT_MS/);
});
