// Status messages over HTTP (README "Status messages"): sending to followers or to users a query finds,
// inboxes numbered per owner, counts, paging by sinceId/maxId, who may read and change an inbox, and the
// _Status objects behind them; on the store this run selects.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import Database from 'better-sqlite3';
import { startServer, testDatabase, type TestDatabase, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';

describe('status messages', () => {
  let server: TestServer;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let carol: SignedUpUser;
  before(async () => {
    server = await startServer();
    alice = await signUp(server.client);
    bob = await signUp(server.client, { gender: 'female' });
    carol = await signUp(server.client, { gender: 'female' });
    await bob.client.post(`/1.1/users/${bob.objectId}/friendship/${alice.objectId}`, {});
    await carol.client.post(`/1.1/users/${carol.objectId}/friendship/${alice.objectId}`, {});
  });
  after(async () => server.close());

  const pointer = (user: SignedUpUser) => ({ __type: 'Pointer', className: '_User', objectId: user.objectId });
  const owner = (user: SignedUpUser) => encodeURIComponent(JSON.stringify(pointer(user)));
  const toFollowers = (from: SignedUpUser) => ({ className: '_Follower', keys: 'follower', where: { user: pointer(from) } });
  const inbox = (as: SignedUpUser, of: SignedUpUser, extra = '') => as.client.get(`/1.1/subscribe/statuses?owner=${owner(of)}&inboxType=default${extra}`);
  const count = (as: SignedUpUser, of: SignedUpUser, type = 'default') => as.client.get(`/1.1/subscribe/statuses/count?owner=${owner(of)}&inboxType=${type}`);

  test("a status to one's followers lands in each follower's inbox, numbered, newest first", async () => {
    const first = await alice.client.post('/1.1/statuses', { query: toFollowers(alice), data: { image: 'a.png', message: 'one', source: pointer(alice) }, inboxType: 'default' });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.text, JSON.stringify({ objectId: first.body.objectId, createdAt: first.body.createdAt }));
    // AV.Status/Send status recordings: Location /1.1/classes/_Status/<id>.
    assert.equal(first.headers.get('location'), `/1.1/classes/_Status/${first.body.objectId}`);
    await alice.client.post('/1.1/statuses', { query: toFollowers(alice), data: { message: 'two' } });
    assert.deepEqual((await count(bob, bob)).body, { total: 2, unread: 2 });

    const page = await inbox(bob, bob);
    assert.equal(page.status, 200, page.text);
    assert.deepEqual(page.body.results.map((s: { message: string; messageId: number }) => [s.message, s.messageId]), [['two', 2], ['one', 1]]);
    const [, one] = page.body.results;
    assert.deepEqual([one.objectId, one.image, one.source, one.inboxType], [first.body.objectId, 'a.png', pointer(alice), 'default']);
    assert.equal(page.body.end, true);
    // Reading one's inbox reads what it shows.
    assert.deepEqual((await count(bob, bob)).body, { total: 2, unread: 0 });

    const since = await inbox(bob, bob, '&sinceId=1');
    assert.deepEqual(since.body.results.map((s: { messageId: number }) => s.messageId), [2]);
    const upTo = await inbox(bob, bob, '&maxId=1');
    assert.deepEqual(upTo.body.results.map((s: { messageId: number }) => s.messageId), [1]);
    const limited = await inbox(carol, carol, '&limit=1');
    assert.deepEqual([limited.body.results.map((s: { messageId: number }) => s.messageId), limited.body.end], [[2], false]);
    const filtered = await inbox(carol, carol, `&where=${encodeURIComponent(JSON.stringify({ message: 'one' }))}`);
    assert.deepEqual(filtered.body.results.map((s: { message: string }) => s.message), ['one']);
    // The sender's own inbox holds nothing: it does not follow itself.
    assert.deepEqual((await count(alice, alice)).body, { total: 0, unread: 0 });
  });

  test('a status to the users a query finds; a private one is read by its recipient only', async () => {
    const toWomen = await alice.client.post('/1.1/statuses', { query: { className: '_User', where: { gender: 'female' } }, data: { message: 'hello women' }, inboxType: 'news' });
    assert.equal(toWomen.status, 201, toWomen.text);
    assert.deepEqual((await count(bob, bob, 'news')).body, { total: 1, unread: 1 });
    assert.deepEqual((await count(carol, carol, 'news')).body, { total: 1, unread: 1 });

    const secret = await alice.client.post('/1.1/statuses', { query: { className: '_User', where: { objectId: bob.objectId } }, data: { message: 'secret' }, inboxType: 'private' });
    assert.equal(secret.status, 201);
    const mine = await bob.client.get(`/1.1/subscribe/statuses?owner=${owner(bob)}&inboxType=private`);
    assert.deepEqual(mine.body.results.map((s: { message: string }) => s.message), ['secret']);
    // Another user's inbox reads as empty; its counts are numbers only, as the hosted service answered them.
    const other = await carol.client.get(`/1.1/subscribe/statuses?owner=${owner(bob)}&inboxType=private`);
    assert.deepEqual([other.status, other.body.results], [200, []]);
    assert.equal((await count(carol, bob, 'private')).body.total, 1);
    // A private status is not public through /1.1/classes; a default one is.
    assert.deepEqual((await carol.client.get(`/1.1/classes/_Status/${secret.body.objectId}`)).body, {});
    assert.equal((await alice.client.get(`/1.1/classes/_Status/${secret.body.objectId}`)).body.message, 'secret');
    const published = await carol.client.get(`/1.1/classes/_Status?where=${encodeURIComponent(JSON.stringify({ source: pointer(alice), inboxType: 'default' }))}`);
    assert.deepEqual(published.body.results.map((s: { message: string }) => s.message).sort(), ['one', 'two']);
  });

  test("only the owner's session or the master key resets or edits an inbox", async () => {
    await alice.client.post('/1.1/statuses', { query: toFollowers(alice), data: { message: 'three' } });
    const stranger = await carol.client.post('/1.1/subscribe/statuses/resetUnreadCount', { owner: pointer(bob), inboxType: 'default' });
    assert.deepEqual([stranger.status, stranger.body], [403, { code: 206, error: "An inbox is changed by its owner's session or the master key." }]);
    assert.equal((await count(bob, bob)).body.unread, 1);
    const reset = await bob.client.post('/1.1/subscribe/statuses/resetUnreadCount', { owner: pointer(bob), inboxType: 'default' });
    assert.deepEqual([reset.status, reset.body], [200, {}]);
    assert.deepEqual((await count(bob, bob)).body, { total: 3, unread: 0 });

    const removeOther = await carol.client.delete(`/1.1/subscribe/statuses/inbox?owner=${owner(bob)}&inboxType=default&messageId=3`);
    assert.equal(removeOther.status, 403);
    const removed = await bob.client.delete(`/1.1/subscribe/statuses/inbox?owner=${owner(bob)}&inboxType=default&messageId=3`);
    assert.deepEqual([removed.status, removed.body], [200, {}]);
    assert.equal((await count(bob, bob)).body.total, 2);
  });

  test('sending needs a session; the source is the sender; _Status is written through /1.1/statuses only', async () => {
    const anonymous = await server.client.post('/1.1/statuses', { query: toFollowers(alice), data: { message: 'x' } });
    assert.deepEqual([anonymous.status, anonymous.body.code], [403, 206]);
    const forged = await carol.client.post('/1.1/statuses', { query: toFollowers(alice), data: { message: 'as alice', source: pointer(alice) } });
    assert.equal(forged.status, 201);
    const saved = await carol.client.get(`/1.1/statuses/${forged.body.objectId}`);
    assert.deepEqual(saved.body.source, pointer(carol));
    const direct = await carol.client.post('/1.1/classes/_Status', { message: 'x' });
    assert.deepEqual([direct.status, direct.body], [403, { code: 119, error: 'Statuses are sent through /1.1/statuses.' }]);
    const badQuery = await carol.client.post('/1.1/statuses', { query: { className: '_Follower', where: {} }, data: {} });
    assert.deepEqual([badQuery.status, badQuery.body.code], [400, 107]);

    // Deleting a status (its sender) takes it out of every inbox.
    const before = (await count(bob, bob)).body.total;
    assert.equal((await alice.client.delete(`/1.1/statuses/${forged.body.objectId}`)).status, 403);
    assert.deepEqual((await carol.client.delete(`/1.1/statuses/${forged.body.objectId}`)).body, {});
    assert.equal((await count(bob, bob)).body.total, before - 1);
  });

  test('an inbox page inside a batch, as the SDK sends a long one', async () => {
    const batch = await bob.client.post('/1.1/batch', {
      requests: [{ method: 'GET', path: '/1.1/subscribe/statuses', params: { owner: JSON.stringify(pointer(bob)), inboxType: 'default', where: { message: { $in: ['one', 'two'] } } } }],
    });
    assert.equal(batch.status, 200, batch.text);
    assert.deepEqual(batch.body[0].success.results.map((s: { message: string }) => s.message), ['two', 'one']);
  });
});

/** A statement on the test's database, beside the server: the fault the next test injects. */
async function execute(database: TestDatabase, text: string): Promise<void> {
  if (database.kind === 'sqlite') {
    const db = new Database(database.env.SQLITE_PATH);
    db.exec(text);
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  await client.query(text);
  await client.end();
}

test('a status whose delivery fails is not kept, so sending it again makes one status', async () => {
  const database = await testDatabase();
  const server = await startServer({ database });
  try {
    const [alice, bob] = [await signUp(server.client), await signUp(server.client)];
    await bob.client.post(`/1.1/users/${bob.objectId}/friendship/${alice.objectId}`, {});
    const toFollowers = { className: '_Follower', keys: 'follower', where: { user: { __type: 'Pointer', className: '_User', objectId: alice.objectId } } };
    await execute(database, 'ALTER TABLE status_inboxes RENAME TO status_inboxes_away');
    const failed = await alice.client.post('/1.1/statuses', { query: toFollowers, data: { message: 'lost' } });
    assert.equal(failed.status, 500, failed.text);
    await execute(database, 'ALTER TABLE status_inboxes_away RENAME TO status_inboxes');
    assert.deepEqual((await server.master.get('/1.1/classes/_Status')).body, { results: [] });

    const sent = await alice.client.post('/1.1/statuses', { query: toFollowers, data: { message: 'lost' } });
    assert.equal(sent.status, 201, sent.text);
    assert.deepEqual((await server.master.get('/1.1/classes/_Status')).body.results.map((s: { objectId: string }) => s.objectId), [sent.body.objectId]);
    assert.equal((await bob.client.get('/1.1/subscribe/statuses/count')).body.total, 1);
  } finally {
    await server.close();
    await database.drop();
  }
});
