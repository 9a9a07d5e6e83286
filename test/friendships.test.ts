// Follows over HTTP (README "Followers"): /1.1/users/<id>/friendship/<target>, the _Followee and _Follower
// objects it writes and apps query, and who may write them; on the store this run selects.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers/harness.ts';
import { signUp, type SignedUpUser } from './helpers/accounts.ts';

describe('followers', () => {
  let server: TestServer;
  let alice: SignedUpUser;
  let bob: SignedUpUser;
  let carol: SignedUpUser;
  before(async () => {
    server = await startServer();
    alice = await signUp(server.client);
    bob = await signUp(server.client);
    carol = await signUp(server.client);
  });
  after(async () => server.close());

  const pointer = (user: SignedUpUser) => ({ __type: 'Pointer', className: '_User', objectId: user.objectId });
  const followees = (user: SignedUpUser, extra: Record<string, unknown> = {}, query = '') =>
    server.client.get(`/1.1/classes/_Followee?where=${encodeURIComponent(JSON.stringify({ user: pointer(user), ...extra }))}${query}`);

  test('follow writes both sides with the attributes; the SDK queries them with include', async () => {
    const res = await alice.client.post(`/1.1/users/${alice.objectId}/friendship/${bob.objectId}`, { group: 1, position: { __type: 'GeoPoint', latitude: 0, longitude: 0 } });
    assert.deepEqual([res.status, res.body], [200, {}]);
    const found = await followees(alice, { group: 1 }, '&include=followee');
    assert.equal(found.status, 200, found.text);
    assert.equal(found.body.results.length, 1);
    const [row] = found.body.results;
    assert.deepEqual([row.user, row.group, row.position], [pointer(alice), 1, { __type: 'GeoPoint', latitude: 0, longitude: 0 }]);
    assert.deepEqual([row.followee.__type, row.followee.className, row.followee.objectId, row.followee.username], ['Pointer', '_User', bob.objectId, bob.username]);
    assert.equal(row.followee.password, undefined);
    assert.deepEqual((await followees(alice, { group: 0 })).body, { results: [] });

    // The attributes, then user and followee (R:…/_Followee query: group, position, user, followee, createdAt, …).
    // Keys shorter first here, as PostgreSQL's jsonb keeps them.
    const [dave, erin] = [await signUp(server.client), await signUp(server.client)];
    await dave.client.post(`/1.1/users/${dave.objectId}/friendship/${erin.objectId}`, { a: 1, bb: 2 });
    const [ordered] = (await followees(dave)).body.results;
    assert.deepEqual(Object.keys(ordered), ['a', 'bb', 'user', 'followee', 'createdAt', 'updatedAt', 'objectId']);

    const followers = await server.client.get(`/1.1/users/${bob.objectId}/followers?include=follower`);
    assert.deepEqual(followers.body.results.map((r: { follower: { objectId: string; username: string } }) => [r.follower.objectId, r.follower.username]), [[alice.objectId, alice.username]]);
    const both = await server.client.get(`/1.1/users/${alice.objectId}/followersAndFollowees`);
    assert.deepEqual([both.body.followers, both.body.followees.map((r: { followee: unknown }) => r.followee)], [[], [pointer(bob)]]);
  });

  test('following again changes the attributes, never a second row; unfollow removes both sides', async () => {
    const self = await carol.client.post(`/1.1/users/self/friendship/${bob.objectId}`, { group: 2 });
    assert.deepEqual([self.status, self.body], [200, {}]);
    assert.deepEqual((await followees(carol)).body.results.map((r: { group: number }) => r.group), [2]);
    await carol.client.post(`/1.1/users/${carol.objectId}/friendship/${bob.objectId}`, { group: 3 });
    assert.deepEqual((await followees(carol)).body.results.map((r: { group: number }) => r.group), [3]);
    const removed = await carol.client.delete(`/1.1/users/${carol.objectId}/friendship/${bob.objectId}`);
    assert.deepEqual([removed.status, removed.body], [200, {}]);
    assert.deepEqual((await followees(carol)).body, { results: [] });
    const followers = await server.client.get(`/1.1/users/${bob.objectId}/followers`);
    assert.deepEqual(followers.body.results.map((r: { follower: { objectId: string } }) => r.follower.objectId), [alice.objectId]);
    assert.deepEqual((await carol.client.delete(`/1.1/users/${carol.objectId}/friendship/${bob.objectId}`)).body, {});
  });

  test("only the user's session or the master key follows for it; the target must exist", async () => {
    const stranger = await carol.client.post(`/1.1/users/${alice.objectId}/friendship/${carol.objectId}`, {});
    assert.deepEqual([stranger.status, stranger.body], [403, { code: 206, error: 'The user cannot be altered by a client without the session.' }]);
    const anonymous = await server.client.delete(`/1.1/users/${alice.objectId}/friendship/${bob.objectId}`);
    assert.equal(anonymous.status, 403);
    const nobody = await alice.client.post(`/1.1/users/${alice.objectId}/friendship/nobody`, {});
    assert.deepEqual([nobody.status, nobody.body], [400, { code: 211, error: 'Could not find user.' }]);
    const byMaster = await server.master.post(`/1.1/users/${bob.objectId}/friendship/${alice.objectId}`, { note: 'x' });
    assert.equal(byMaster.status, 200);
    assert.equal((await followees(bob)).body.results.length, 1);
    const notObject = await alice.client.post(`/1.1/users/${alice.objectId}/friendship/${bob.objectId}`, [1]);
    assert.deepEqual([notObject.status, notObject.body.code], [400, 107]);
  });

  test('the classes are written through the friendship API only, unless with the master key', async () => {
    const forged = await carol.client.post('/1.1/classes/_Followee', { user: pointer(alice), followee: pointer(carol) });
    assert.deepEqual([forged.status, forged.body], [403, { code: 119, error: 'Follows are written through /1.1/users/<id>/friendship/<target>.' }]);
    const [row] = (await followees(alice)).body.results;
    const edit = await alice.client.put(`/1.1/classes/_Followee/${row.objectId}`, { group: 9 });
    assert.equal(edit.status, 403);
    const drop = await alice.client.delete(`/1.1/classes/_Followee/${row.objectId}`);
    assert.equal(drop.status, 403);
    const cql = await carol.client.get(`/1.1/cloudQuery?cql=${encodeURIComponent("insert into _Follower(note) values('x')")}`);
    assert.equal(cql.status, 403);
    const byMaster = await server.master.put(`/1.1/classes/_Followee/${row.objectId}`, { group: 9 });
    assert.equal(byMaster.status, 200);
  });
});
