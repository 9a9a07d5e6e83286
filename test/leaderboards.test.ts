// Leaderboards over HTTP (docs/leaderboards.md), on the store this run selects: the hosted wire as the
// JavaScript SDK's recordings show it (Leaderboard/*), the update strategies, versions and their schedule,
// who may write, and the member types.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';
import { Client } from './helpers/client.ts';

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const masterOnly = { code: 1, error: 'The request must be signed by master key.' };
let seq = 0;
const boardName = (prefix = 'score') => `${prefix}_${process.pid}_${++seq}`;

describe('leaderboards', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => server.close());

  async function createBoard(body: Record<string, unknown>) {
    const res = await server.master.post('/1.1/leaderboard/leaderboards', body);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  async function submit(user: SignedUpUser, values: Record<string, number>) {
    const body = Object.entries(values).map(([statisticName, statisticValue]) => ({ statisticName, statisticValue }));
    const res = await user.client.post(`/1.1/leaderboard/users/${user.objectId}/statistics`, body);
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  const pointer = (user: SignedUpUser) => ({ __type: 'Pointer', className: '_User', objectId: user.objectId });

  test('create: the board as the hosted service answered it; the master key only', async () => {
    const name = boardName();
    const board = await createBoard({ statisticName: name, order: 'ascending', versionChangeInterval: 'week', updateStrategy: 'better' });
    // The recorded order (R:Leaderboard/shoud have properties), memberType where the same hash puts it.
    assert.deepEqual(Object.keys(board), [
      'updateStrategy', 'activatedAt', 'updatedAt', 'objectId', 'createdAt', 'memberType', 'statisticName', 'versionChangeInterval', 'order', 'expiredAt', 'version',
    ]);
    assert.match(board.objectId, /^[0-9a-f]{24}$/);
    assert.deepEqual(
      { ...board, objectId: 0, createdAt: 0, updatedAt: 0, activatedAt: 0, expiredAt: 0 },
      { objectId: 0, statisticName: name, memberType: '_User', order: 'ascending', updateStrategy: 'better', version: 0, versionChangeInterval: 'week', expiredAt: 0, activatedAt: 0, createdAt: 0, updatedAt: 0 },
    );
    assert.match(board.createdAt, iso);
    assert.equal(board.activatedAt.__type, 'Date');
    // Weekly versions end on Monday 00:00 Beijing time (Sunday 16:00 UTC).
    const expiredAt = new Date(board.expiredAt.iso);
    assert.deepEqual([board.expiredAt.__type, expiredAt.getUTCDay(), expiredAt.getUTCHours(), expiredAt.getUTCMinutes()], ['Date', 0, 16, 0]);
    assert.ok(expiredAt.getTime() > Date.now() && expiredAt.getTime() <= Date.now() + 7 * 86_400_000);

    const never = await createBoard({ statisticName: boardName(), versionChangeInterval: 'never' });
    assert.deepEqual([never.expiredAt, never.order, never.updateStrategy], [null, 'descending', 'better']);

    const fetched = await server.client.get(`/1.1/leaderboard/leaderboards/${name}`);
    assert.deepEqual([fetched.status, fetched.body], [200, board]);

    const byClient = await server.client.post('/1.1/leaderboard/leaderboards', { statisticName: boardName() });
    assert.deepEqual([byClient.status, byClient.body], [400, masterOnly]);
    const again = await server.master.post('/1.1/leaderboard/leaderboards', { statisticName: name });
    assert.deepEqual([again.status, again.body], [400, { code: 2101, error: `A leaderboard named '${name}' already exists.` }]);
    const badOrder = await server.master.post('/1.1/leaderboard/leaderboards', { statisticName: boardName(), order: 'up' });
    assert.deepEqual([badOrder.status, badOrder.body], [400, { code: 1, error: 'order must be one of ascending, descending.' }]);
    const badName = await server.master.post('/1.1/leaderboard/leaderboards', { statisticName: 'a,b' });
    assert.deepEqual([badName.status, badName.body.code], [400, 1]);
    // A name or id with NUL is refused before the database sees it (PostgreSQL's text cannot hold one).
    const nul = await server.client.get('/1.1/leaderboard/leaderboards/a%00b/ranks');
    assert.deepEqual([nul.status, nul.body], [400, { code: 2100, error: "statisticName 'a\u0000b' not found." }]);
    const nulMember = await server.master.get(`/1.1/leaderboard/objects/a%00b/statistics`);
    assert.deepEqual([nulMember.status, nulMember.body], [400, { code: 1, error: 'A member id is a string of 1 to 256 characters.' }]);
    const missing = await server.client.get('/1.1/leaderboard/leaderboards/nothing_here');
    assert.deepEqual([missing.status, missing.body], [400, { code: 2100, error: "statisticName 'nothing_here' not found." }]);
  });

  test('update and delete: the master key only; the answer names what changed', async () => {
    const name = boardName();
    const board = await createBoard({ statisticName: name, versionChangeInterval: 'week' });
    const byClient = await server.client.put(`/1.1/leaderboard/leaderboards/${name}`, { versionChangeInterval: 'never' });
    assert.deepEqual([byClient.status, byClient.body], [400, masterOnly]);
    const strategy = await server.master.put(`/1.1/leaderboard/leaderboards/${name}`, { updateStrategy: 'last' });
    assert.equal(strategy.status, 200);
    assert.deepEqual(Object.keys(strategy.body), ['updatedAt', 'updateStrategy', 'objectId']);
    assert.deepEqual([strategy.body.updateStrategy, strategy.body.objectId], ['last', board.objectId]);
    const daily = await server.master.put(`/1.1/leaderboard/leaderboards/${name}`, { versionChangeInterval: 'day' });
    assert.deepEqual(Object.keys(daily.body), ['updatedAt', 'versionChangeInterval', 'objectId']);
    const rescheduled = (await server.client.get(`/1.1/leaderboard/leaderboards/${name}`)).body;
    assert.equal(new Date(rescheduled.expiredAt.iso).getUTCHours(), 16);
    assert.ok(new Date(rescheduled.expiredAt.iso).getTime() - Date.now() <= 86_400_000);
    const order = await server.master.put(`/1.1/leaderboard/leaderboards/${name}`, { order: 'ascending' });
    assert.deepEqual([order.status, order.body], [400, { code: 1, error: 'Only updateStrategy and versionChangeInterval can be changed.' }]);

    assert.deepEqual((await server.client.delete(`/1.1/leaderboard/leaderboards/${name}`)).body, masterOnly);
    const removed = await server.master.delete(`/1.1/leaderboard/leaderboards/${name}`);
    assert.deepEqual([removed.status, removed.body], [200, {}]);
    assert.equal((await server.client.get(`/1.1/leaderboard/leaderboards/${name}`)).body.code, 2100);
    assert.equal((await server.master.delete(`/1.1/leaderboard/leaderboards/${name}`)).body.code, 2100);
  });

  describe('users on a board', () => {
    let name: string;
    let other: string;
    let users: SignedUpUser[];
    let company: { objectId: string; createdAt: string };
    before(async () => {
      name = boardName();
      other = boardName('other');
      await createBoard({ statisticName: name, order: 'ascending', versionChangeInterval: 'week', updateStrategy: 'better' });
      await createBoard({ statisticName: other, order: 'ascending', versionChangeInterval: 'never', updateStrategy: 'better' });
      company = (await server.client.post('/1.1/classes/Company', { name: 'LeanCloud' })).body;
      const companyPointer = { __type: 'Pointer', className: 'Company', objectId: company.objectId };
      users = [];
      for (let i = 0; i < 4; i++) users.push(await signUp(server.client, { company: companyPointer }));
      for (const [i, user] of users.entries()) {
        const kept = await submit(user, { [name]: i, [other]: 0 - i || 0 });
        assert.deepEqual(kept, { results: [{ statisticName: name, version: 0, statisticValue: i }, { statisticName: other, version: 0, statisticValue: 0 - i || 0 }] });
      }
    });

    test('ranks: best first, each user a pointer; count=1&limit=0 counts', async () => {
      const count = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks?count=1&limit=0`);
      assert.deepEqual([count.status, count.body], [200, { results: [], count: 4 }]);
      // R:Leaderboard/Statistics/count: {"count":4,"results":[]}, count first.
      assert.deepEqual(Object.keys(count.body), ['count', 'results']);
      const ranks = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks`);
      assert.deepEqual(ranks.body, {
        results: users.map((user, i) => ({ statisticName: name, statisticValue: i, rank: i, user: pointer(user) })),
      });
      const typed = await server.client.get(`/1.1/leaderboard/leaderboards/user/${name}/ranks?startPosition=1&maxResultsCount=2&count=1`);
      assert.deepEqual(typed.body, {
        results: [1, 2].map((i) => ({ statisticName: name, statisticValue: i, rank: i, user: pointer(users[i]) })),
        count: 4,
      });
    });

    test('ranks with user keys, included pointers and other statistics, for a signed-in caller', async () => {
      const res = await users[2].client.get(`/1.1/leaderboard/leaderboards/${name}/ranks?selectUserKeys=username%2Ccompany&includeUser=company&includeStatistics=${other}`);
      assert.equal(res.status, 200, res.text);
      const third = res.body.results[2];
      assert.deepEqual([third.rank, third.statisticValue, third.user.__type, third.user.className, third.user.objectId, third.user.username], [2, 2, 'Pointer', '_User', users[2].objectId, users[2].username]);
      // The member carries its ACL; the company included into it does not (Leaderboard/Statistics/getResults),
      // and both list their keys as the recording did (docs/compatibility.md, Key order).
      const user = users[2];
      assert.equal(JSON.stringify(third.user), JSON.stringify({
        __type: 'Pointer', className: '_User', updatedAt: user.body.updatedAt,
        ACL: { '*': { read: true }, [user.objectId]: { read: true, write: true } },
        username: user.username, createdAt: user.body.createdAt,
        company: { name: 'LeanCloud', createdAt: company.createdAt, updatedAt: company.createdAt, objectId: company.objectId, __type: 'Pointer', className: 'Company' },
        objectId: user.objectId,
      }));
      assert.deepEqual(third.statistics, [{ statisticName: other, statisticValue: -2, version: 0 }]);
      // Without a session or the master key the user keys are not read: bare pointers.
      const anonymous = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks?selectUserKeys=username`);
      assert.deepEqual(anonymous.body.results[0].user, pointer(users[0]));
      const fake = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks?includeStatistics=fake`);
      assert.deepEqual([fake.status, fake.body], [400, { code: 2100, error: "statisticName 'fake' not found." }]);
    });

    test('around a user: the page is centred on its rank; self is the session user', async () => {
      const self = await users[2].client.get(`/1.1/leaderboard/leaderboards/${name}/ranks/self?limit=3`);
      assert.deepEqual(self.body.results.map((r: { rank: number }) => r.rank), [1, 2, 3]);
      assert.deepEqual(self.body.results[1].user, pointer(users[2]));
      const first = await users[2].client.get(`/1.1/leaderboard/leaderboards/${name}/ranks/${users[1].objectId}?limit=3`);
      assert.deepEqual(first.body.results.map((r: { rank: number }) => r.rank), [0, 1, 2]);
      const nobody = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks/nobody?limit=3`);
      assert.deepEqual(nobody.body, { results: [] });
      const noSession = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks/self`);
      assert.equal(noSession.status, 403);
    });

    test("a user's statistics: every board it is on, or those named", async () => {
      const all = await server.client.get(`/1.1/leaderboard/users/${users[3].objectId}/statistics`);
      assert.deepEqual(
        [...all.body.results].sort((a, b) => a.statisticName.localeCompare(b.statisticName)),
        [
          { statisticName: name, statisticValue: 3, version: 0, user: pointer(users[3]) },
          { statisticName: other, statisticValue: -3, version: 0, user: pointer(users[3]) },
        ].sort((a, b) => a.statisticName.localeCompare(b.statisticName)),
      );
      const named = await server.client.get(`/1.1/leaderboard/users/${users[3].objectId}/statistics?statistics=${other}`);
      assert.deepEqual(named.body, { results: [{ statisticName: other, statisticValue: -3, version: 0, user: pointer(users[3]) }] });
      const several = await server.client.post(`/1.1/leaderboard/users/statistics/${name}`, [users[1].objectId, 'nobody', users[0].objectId]);
      assert.deepEqual(several.body, { results: [1, 0].map((i) => ({ statisticName: name, statisticValue: i, version: 0, user: pointer(users[i]) })) });
    });

    test("only the user's own session or the master key writes its statistics", async () => {
      const body = [{ statisticName: name, statisticValue: -100 }];
      const stranger = await users[0].client.post(`/1.1/leaderboard/users/${users[1].objectId}/statistics`, body);
      assert.deepEqual([stranger.status, stranger.body], [403, { code: 403, error: "A user's statistics are changed with that user's session or the master key." }]);
      const anonymous = await server.client.post(`/1.1/leaderboard/users/${users[1].objectId}/statistics`, body);
      assert.equal(anonymous.status, 403);
      const overwrite = await users[1].client.post(`/1.1/leaderboard/users/${users[1].objectId}/statistics?overwrite=1`, body);
      assert.deepEqual([overwrite.status, overwrite.body], [400, masterOnly]);
      const deleteOther = await users[0].client.delete(`/1.1/leaderboard/users/${users[1].objectId}/statistics?statistics=${name}`);
      assert.equal(deleteOther.status, 403);
      const ranks = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks`);
      assert.deepEqual(ranks.body.results.map((r: { statisticValue: number }) => r.statisticValue), [0, 1, 2, 3]);
    });

    test('deleting statistics takes the user off the board', async () => {
      const user = await signUp(server.client);
      await submit(user, { [name]: 10 });
      assert.equal((await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks?count=1&limit=0`)).body.count, 5);
      const removed = await user.client.delete(`/1.1/leaderboard/users/self/statistics?statistics=${name}`);
      assert.deepEqual([removed.status, removed.body], [200, {}]);
      assert.equal((await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks?count=1&limit=0`)).body.count, 4);
    });
  });

  test('update strategies: better by the order, last, sum; overwrite with the master key', async () => {
    const user = await signUp(server.client);
    const boards = {
      high: await createBoard({ statisticName: boardName(), order: 'descending', updateStrategy: 'better' }),
      low: await createBoard({ statisticName: boardName(), order: 'ascending', updateStrategy: 'better' }),
      last: await createBoard({ statisticName: boardName(), updateStrategy: 'last' }),
      sum: await createBoard({ statisticName: boardName(), updateStrategy: 'sum' }),
    };
    const values = (body: { results: Array<{ statisticValue: number }> }) => body.results.map((r) => r.statisticValue);
    const all = (value: number) => Object.fromEntries(Object.values(boards).map((board) => [board.statisticName, value]));
    assert.deepEqual(values(await submit(user, all(5))), [5, 5, 5, 5]);
    assert.deepEqual(values(await submit(user, all(3))), [5, 3, 3, 8]);
    assert.deepEqual(values(await submit(user, all(7.5))), [7.5, 3, 7.5, 15.5]);
    const forced = await server.master.post(`/1.1/leaderboard/users/${user.objectId}/statistics?overwrite=1`, [{ statisticName: boards.sum.statisticName, statisticValue: 1 }]);
    assert.deepEqual(forced.body, { results: [{ statisticName: boards.sum.statisticName, version: 0, statisticValue: 1 }] });

    const bad = await user.client.post(`/1.1/leaderboard/users/${user.objectId}/statistics`, [{ statisticName: boards.sum.statisticName, statisticValue: '3' }]);
    assert.deepEqual([bad.status, bad.body.code], [400, 1]);
    const unknown = await user.client.post(`/1.1/leaderboard/users/${user.objectId}/statistics`, [{ statisticName: boards.sum.statisticName, statisticValue: 1 }, { statisticName: 'nope', statisticValue: 1 }]);
    assert.deepEqual([unknown.status, unknown.body], [400, { code: 2100, error: "statisticName 'nope' not found." }]);
    // All or nothing: the known board's value did not change.
    const kept = await server.client.get(`/1.1/leaderboard/users/${user.objectId}/statistics?statistics=${boards.sum.statisticName}`);
    assert.equal(kept.body.results[0].statisticValue, 1);
    const notArray = await user.client.post(`/1.1/leaderboard/users/${user.objectId}/statistics`, { statisticName: 'x' });
    assert.deepEqual([notArray.status, notArray.body], [400, { code: 1, error: 'The body must be a JSON array.' }]);
  });

  test('ties keep the order in which the value was reached', async () => {
    const name = boardName();
    await createBoard({ statisticName: name, updateStrategy: 'last' });
    const users = [await signUp(server.client), await signUp(server.client), await signUp(server.client)];
    for (const user of users) await submit(user, { [name]: 10 });
    const ranks = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks`);
    assert.deepEqual(ranks.body.results.map((r: { user: { objectId: string } }) => r.user.objectId), users.map((u) => u.objectId));
  });

  test('entities and objects: written with the master key only; objects read under their ACL', async () => {
    const entityBoard = boardName();
    await createBoard({ statisticName: entityBoard, memberType: '_Entity', order: 'descending' });
    const byClient = await server.client.post('/1.1/leaderboard/entities/team-a/statistics', [{ statisticName: entityBoard, statisticValue: 1 }]);
    assert.deepEqual([byClient.status, byClient.body], [400, masterOnly]);
    for (const [entity, value] of [['team-a', 3], ['team-b', 9]] as const) {
      await server.master.post(`/1.1/leaderboard/entities/${entity}/statistics`, [{ statisticName: entityBoard, statisticValue: value }]);
    }
    const entityRanks = await server.client.get(`/1.1/leaderboard/leaderboards/entity/${entityBoard}/ranks`);
    assert.deepEqual(entityRanks.body, {
      results: [
        { statisticName: entityBoard, statisticValue: 9, rank: 0, entity: 'team-b' },
        { statisticName: entityBoard, statisticValue: 3, rank: 1, entity: 'team-a' },
      ],
    });
    const asUsers = await server.client.get(`/1.1/leaderboard/leaderboards/user/${entityBoard}/ranks`);
    assert.deepEqual([asUsers.status, asUsers.body.code], [400, 2102]);

    const weaponBoard = boardName();
    await createBoard({ statisticName: weaponBoard, memberType: 'Weapon' });
    const open = await server.client.post('/1.1/classes/Weapon', { name: 'sword', level: 10 });
    const hidden = await server.client.post('/1.1/classes/Weapon', { name: 'secret', ACL: { 'role:admin': { read: true } } });
    await server.master.post(`/1.1/leaderboard/objects/${open.body.objectId}/statistics`, [{ statisticName: weaponBoard, statisticValue: 5 }]);
    await server.master.post(`/1.1/leaderboard/objects/${hidden.body.objectId}/statistics`, [{ statisticName: weaponBoard, statisticValue: 4 }]);
    const weapons = await server.client.get(`/1.1/leaderboard/leaderboards/object/${weaponBoard}/ranks?selectObjectKeys=name`);
    assert.equal(weapons.status, 200, weapons.text);
    const [first, second] = weapons.body.results;
    assert.deepEqual([first.object.__type, first.object.className, first.object.objectId, first.object.name, first.object.level], ['Pointer', 'Weapon', open.body.objectId, 'sword', undefined]);
    assert.deepEqual(second.object, { __type: 'Pointer', className: 'Weapon', objectId: hidden.body.objectId });
  });

  test('a new version: ranks start empty, the old version stays readable and archived', async () => {
    const name = boardName();
    await createBoard({ statisticName: name, versionChangeInterval: 'month' });
    const user = await signUp(server.client);
    await submit(user, { [name]: 42 });
    const reset = await server.client.put(`/1.1/leaderboard/leaderboards/${name}/incrementVersion`);
    assert.deepEqual(reset.body, masterOnly);
    const next = await server.master.put(`/1.1/leaderboard/leaderboards/${name}/incrementVersion`);
    assert.deepEqual(Object.keys(next.body), ['objectId', 'version', 'expiredAt', 'activatedAt', 'updatedAt']);
    assert.equal(next.body.version, 1);
    assert.equal(new Date(next.body.expiredAt.iso).getUTCDate() >= 28 || new Date(next.body.expiredAt.iso).getUTCDate() <= 1, true);
    assert.deepEqual((await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks`)).body, { results: [] });
    const old = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks?version=0`);
    assert.deepEqual(old.body.results.map((r: { statisticValue: number }) => r.statisticValue), [42]);
    const future = await server.client.get(`/1.1/leaderboard/leaderboards/${name}/ranks?version=5`);
    assert.deepEqual([future.status, future.body.code], [400, 1]);
    const kept = await submit(user, { [name]: 1 });
    assert.deepEqual(kept.results, [{ statisticName: name, version: 1, statisticValue: 1 }]);
    const archives = await server.master.get(`/1.1/leaderboard/leaderboards/${name}/archives`);
    assert.equal(archives.status, 200);
    assert.equal(archives.body.results.length, 1);
    const [archive] = archives.body.results;
    assert.deepEqual([archive.statisticName, archive.version, archive.status, archive.url, archive.activatedAt.__type, archive.deactivatedAt.iso], [name, 0, 'completed', null, 'Date', next.body.activatedAt.iso]);
    assert.deepEqual((await server.client.get(`/1.1/leaderboard/leaderboards/${name}/archives`)).body, masterOnly);
  });
});

describe('leaderboards on a schedule', () => {
  // 2019-09-19 (a Thursday) 08:25 UTC, as in the hosted recordings; requests carry their keys, not a
  // signature, since the server's clock is not the client's.
  const clock = new ManualClock(Date.parse('2019-09-19T08:25:07.170Z'));
  let server: TestServer;
  let master: Client;
  before(async () => {
    server = await startServer({ clock });
    master = new Client({ url: server.url, appId: server.appId, appKey: server.appKey });
  });
  after(async () => server.close());
  const headers = () => ({ 'X-LC-Sign': '', 'X-LC-Key': `${server.masterKey},master` });

  test("a board's version changes when its period ends, once, whichever request sees it first", async () => {
    const created = await master.post('/1.1/leaderboard/leaderboards', { statisticName: 'weekly', versionChangeInterval: 'week' }, { headers: headers() });
    assert.deepEqual(created.body.expiredAt, { __type: 'Date', iso: '2019-09-22T16:00:00.000Z' });
    await master.post('/1.1/leaderboard/entities/e1/statistics', [{ statisticName: 'weekly', statisticValue: 1 }], { headers: headers() });
    clock.set(Date.parse('2019-09-22T15:59:59.999Z'));
    assert.equal((await master.get('/1.1/leaderboard/leaderboards/weekly', { headers: headers() })).body.version, 0);
    clock.set(Date.parse('2019-10-01T03:00:00.000Z'));
    const [a, b] = await Promise.all([
      master.get('/1.1/leaderboard/leaderboards/weekly', { headers: headers() }),
      master.get('/1.1/leaderboard/leaderboards/weekly', { headers: headers() }),
    ]);
    for (const res of [a, b]) {
      assert.deepEqual(
        [res.body.version, res.body.activatedAt.iso, res.body.expiredAt.iso],
        [1, '2019-09-29T16:00:00.000Z', '2019-10-06T16:00:00.000Z'],
      );
    }
    const archives = await master.get('/1.1/leaderboard/leaderboards/weekly/archives', { headers: headers() });
    assert.deepEqual(
      archives.body.results.map((r: { version: number; activatedAt: { iso: string }; deactivatedAt: { iso: string } }) => [r.version, r.activatedAt.iso, r.deactivatedAt.iso]),
      [[0, '2019-09-19T08:25:07.170Z', '2019-09-29T16:00:00.000Z']],
    );
    assert.deepEqual((await master.get('/1.1/leaderboard/leaderboards/weekly/ranks?count=1', { headers: headers() })).body, { results: [], count: 0 });
  });
});
