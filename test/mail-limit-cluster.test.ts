import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import { spawnRoost, type RoostProcess } from './helpers/processes.ts';
import { Client } from './helpers/client.ts';
import { holdWriteLock } from './helpers/locks.ts';
import { address } from './helpers/mail.ts';
import { SmtpSink } from './fakes/smtp-sink.ts';

/**
 * Regression: the hourly mail limit (5 per user and kind) counted, then inserted, so two nodes
 * could both count 4 and both send. Here a third connection holds the mail_tokens write lock
 * while one request reaches each node, so both have counted before either can insert; released
 * within SQLite's 5 s busy timeout, exactly one of the two may then pass.
 */
let database: TestDatabase;
let sink: SmtpSink;
let a: RoostProcess;
let b: RoostProcess;

before(async () => {
  database = await testDatabase();
  sink = await new SmtpSink().start();
  const env = { ...database.env, SMTP_URL: sink.url };
  a = await spawnRoost(env);
  b = await spawnRoost(env);
});
after(async () => {
  await a?.stop();
  await b?.stop();
  await sink?.close();
  await database?.drop();
});

test('two nodes asked for the fifth mail at the same instant: one sends it, the other answers 429', async () => {
  const keys = a.defaultKeys!;
  const [first, second] = [a, b].map((node) => new Client({ url: node.url, appId: keys.appId, appKey: keys.appKey }));
  const email = address('limit');
  const signedUp = await first.post('/1.1/users', { username: `limit-${Date.now()}`, password: 'limit-pass-1', email });
  assert.equal(signedUp.status, 201, signedUp.text);
  for (let i = 0; i < 4; i++) assert.equal((await first.post('/1.1/requestPasswordReset', { email })).status, 200);

  const release = await holdWriteLock(database, 'mail_tokens');
  const pending = Promise.all([first, second].map((node) => node.post('/1.1/requestPasswordReset', { email })));
  await sleep(1500).finally(release);
  const answers = await pending;
  const statuses = answers.map((answer) => answer.status).sort();
  assert.deepEqual(statuses, [200, 429], JSON.stringify(answers.map((r) => r.body)));
  assert.equal(await sink.countAfterQuiet(email), 5);
});
