// Lockout (SPEC §3.2) across two real Roost processes on one database: the attempts of a burst
// are counted in the shared store before any hash is checked, so the processes share one count.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { testDatabase, type TestDatabase } from './helpers/harness.ts';
import { spawnRoost, type RoostProcess } from './helpers/processes.ts';
import { Client } from './helpers/client.ts';
import { signUp } from './helpers/accounts.ts';
import { codes, evaluated } from './accounts-lockout-helpers.ts';

let database: TestDatabase;
let first: RoostProcess;
let second: RoostProcess;

/** The "default" application's app-key clients on each process. */
function clients(): [Client, Client] {
  const keys = first.defaultKeys!;
  return [first, second].map((node) => new Client({ url: node.url, appId: keys.appId, appKey: keys.appKey })) as [Client, Client];
}

before(async () => {
  database = await testDatabase();
  // The second starts after the first has created the "default" application and printed its keys.
  first = await spawnRoost(database.env);
  second = await spawnRoost(database.env);
});
after(async () => {
  await first?.stop();
  await second?.stop();
  await database?.drop();
});

// Review of e2b2d15 (#13 point 2): each process read the lock before checking the hash and
// recorded failures after it, so 100 guesses spread over two nodes were all evaluated.
test('100 concurrent wrong passwords over two processes: 7 are evaluated (210), the rest refused (219)', async () => {
  const [a, b] = clients();
  const user = await signUp(a);
  const attempts = await Promise.all(
    Array.from({ length: 100 }, (_, i) => (i % 2 ? b : a).post('/1.1/login', { username: user.username, password: `storm-${i}` })),
  );
  assert.deepEqual(codes(attempts), { 210: evaluated, 219: 100 - evaluated });
  for (const client of [a, b]) {
    const locked = await client.post('/1.1/login', { username: user.username, password: user.password });
    assert.equal(locked.body.code, 219, locked.text);
  }
});
