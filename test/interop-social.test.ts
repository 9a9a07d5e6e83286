// Leaderboards, follows and status messages through the official JavaScript SDK (npm leancloud-storage), as
// apps call them: AV.Leaderboard, AV.User#follow and followeeQuery, AV.Status and AV.Status.inboxQuery.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { rejection, sdkServer } from './helpers/sdk.ts';
import { uniqueName } from './helpers/accounts.ts';

sdkServer();

async function signUp(): Promise<AV.User> {
  const user = new AV.User();
  user.setUsername(uniqueName('sdk'));
  user.setPassword('sdk-password-1');
  return user.signUp();
}

test('AV.Leaderboard: create, submit, ranks with user keys, around the user, version reset', async () => {
  const name = uniqueName('board');
  const board = await AV.Leaderboard.createLeaderboard(
    { statisticName: name, order: AV.LeaderboardOrder.DESCENDING, updateStrategy: AV.LeaderboardUpdateStrategy.BETTER, versionChangeInterval: AV.LeaderboardVersionChangeInterval.WEEK },
    { useMasterKey: true },
  );
  assert.deepEqual([board.statisticName, board.version, board.nextResetAt instanceof Date], [name, 0, true]);
  const users: AV.User[] = [];
  for (const score of [10, 30, 20]) {
    const user = await signUp();
    const [kept] = await AV.Leaderboard.updateStatistics(user, { [name]: score }, { user } as AV.AuthOptions);
    assert.deepEqual([kept.name, kept.value, kept.version], [name, score, 0]);
    users.push(user);
  }
  const rankings = await board.getResults({ selectUserKeys: ['username'] }, { user: users[2] } as AV.AuthOptions);
  assert.deepEqual(rankings.map((r) => [r.rank, r.value, r.user.id]), [[0, 30, users[1].id], [1, 20, users[2].id], [2, 10, users[0].id]]);
  assert.equal(rankings[0].user.get('username'), users[1].getUsername());
  assert.equal(await board.count(), 3);
  const around = await board.getResultsAroundUser(users[0], { limit: 3 }, { user: users[2] } as AV.AuthOptions);
  assert.deepEqual(around.map((r) => r.rank), [1, 2]);
  const refused = await rejection(board.updateVersionChangeInterval(AV.LeaderboardVersionChangeInterval.DAY));
  assert.deepEqual([refused.code, refused.message], [1, 'The request must be signed by master key.']);
  await board.reset({ useMasterKey: true });
  assert.equal(board.version, 1);
  assert.equal(await board.count(), 0);
  await board.destroy({ useMasterKey: true });
  const gone = await rejection(AV.Leaderboard.getLeaderboard(name));
  assert.deepEqual([gone.code, gone.message], [2100, `statisticName '${name}' not found.`]);
});

test('AV.User#follow and followeeQuery; AV.Status to followers and the inbox', async () => {
  const star = await signUp();
  const fan = await signUp();
  await fan.follow({ user: star.id as string, attributes: { group: 1 } } as never);
  const followees = await fan.followeeQuery().include('followee').find();
  assert.deepEqual(followees.map((f) => [f.id, f.get('username')]), [[star.id, star.getUsername()]]);

  await AV.User.logIn(star.getUsername(), 'sdk-password-1');
  const status = new AV.Status('image.png', 'hello fans');
  await AV.Status.sendStatusToFollowers(status);
  assert.match(status.id as string, /^[0-9a-f]{24}$/);

  await AV.User.logIn(fan.getUsername(), 'sdk-password-1');
  const before = await AV.Status.countUnreadStatuses(AV.User.current());
  assert.deepEqual([before.total, before.unread], [1, 1]);
  const inbox = await AV.Status.inboxQuery(AV.User.current()).find();
  assert.deepEqual(inbox.map((s) => [s.id, s.get('message'), (s as unknown as { messageId: number }).messageId]), [[status.id, 'hello fans', 1]]);
  const after = await AV.Status.countUnreadStatuses(AV.User.current());
  assert.equal(after.unread, 0);
  await fan.unfollow(star.id as string);
  assert.deepEqual(await fan.followeeQuery().find(), []);
});
