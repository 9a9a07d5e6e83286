// Conformance of LeaderboardStore (src/storage/leaderboard-store.ts) through its verbs, on the database
// this run selects: boards, versions rolled over once, the strategies as one statement each (so
// concurrent sums all count), ranks with their tie-break, and the archives kept.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Leaderboard, UpdateStrategy } from '../../src/storage/leaderboard-store.ts';
import { unique, useStore } from './stores.ts';

const store = useStore();
const t0 = Date.parse('2026-01-05T00:00:00.000Z');

function board(appId: string, fields: Partial<Leaderboard> = {}): Leaderboard {
  return {
    appId,
    statisticName: unique('board'),
    objectId: unique('id'),
    memberType: '_User',
    order: 'descending',
    updateStrategy: 'better',
    versionChangeInterval: 'week',
    version: 0,
    activatedAt: t0,
    expiredAt: t0 + 7 * 86_400_000,
    createdAt: t0,
    updatedAt: t0,
    ...fields,
  };
}

describe('LeaderboardStore', () => {
  test('create once per name; get, getMany and update', async () => {
    const leaderboards = store().leaderboards;
    const appId = unique('app');
    const a = board(appId);
    assert.equal(await leaderboards.create(a), true);
    assert.equal(await leaderboards.create({ ...a, objectId: 'other' }), false);
    assert.deepEqual(await leaderboards.get(appId, a.statisticName), a);
    assert.equal(await leaderboards.get(unique('app'), a.statisticName), null);
    const b = board(appId, { expiredAt: null, versionChangeInterval: 'never', order: 'ascending' });
    await leaderboards.create(b);
    const many = await leaderboards.getMany(appId, [b.statisticName, 'missing', a.statisticName]);
    assert.deepEqual(many.sort((x, y) => x.statisticName.localeCompare(y.statisticName)), [a, b].sort((x, y) => x.statisticName.localeCompare(y.statisticName)));
    const updated = await leaderboards.update(appId, a.statisticName, { updateStrategy: 'sum', versionChangeInterval: 'never', expiredAt: null, updatedAt: t0 + 5 });
    assert.deepEqual(updated, { ...a, updateStrategy: 'sum', versionChangeInterval: 'never', expiredAt: null, updatedAt: t0 + 5 });
    assert.equal(await leaderboards.update(appId, 'missing', { updatedAt: t0 }), null);
  });

  test('submit applies each strategy; the values kept come back in order', async () => {
    const leaderboards = store().leaderboards;
    const appId = unique('app');
    const boards = {
      high: board(appId, { order: 'descending' }),
      low: board(appId, { order: 'ascending' }),
    };
    for (const b of Object.values(boards)) await leaderboards.create(b);
    const round = (value: number, strategy: UpdateStrategy) =>
      leaderboards.submit(appId, 'm1', [{ board: boards.high, value, strategy }, { board: boards.low, value, strategy }], t0);
    assert.deepEqual((await round(5, 'better')).map((s) => s.value), [5, 5]);
    assert.deepEqual((await round(3, 'better')).map((s) => s.value), [5, 3]);
    assert.deepEqual((await round(9, 'better')).map((s) => s.value), [9, 3]);
    assert.deepEqual((await round(4, 'last')).map((s) => s.value), [4, 4]);
    assert.deepEqual(await round(0.5, 'sum'), [
      { statisticName: boards.high.statisticName, member: 'm1', value: 4.5, version: 0 },
      { statisticName: boards.low.statisticName, member: 'm1', value: 4.5, version: 0 },
    ]);
  });

  test('concurrent sums all count', async () => {
    const leaderboards = store().leaderboards;
    const appId = unique('app');
    const b = board(appId, { updateStrategy: 'sum' });
    await leaderboards.create(b);
    const other = (await store.another())?.leaderboards ?? leaderboards;
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? other : leaderboards).submit(appId, 'm', [{ board: b, value: 1, strategy: 'sum' }], t0 + i)));
    assert.deepEqual((await leaderboards.ranks(appId, b.statisticName, 0, 0, 10)).map((r) => r.value), [20]);
  });

  test('ranks: by value in the board order, then by who reached it first, then by member; rankOf and count agree', async () => {
    const leaderboards = store().leaderboards;
    const appId = unique('app');
    const b = board(appId, { order: 'descending', updateStrategy: 'last' });
    await leaderboards.create(b);
    const submissions: Array<[string, number, number]> = [['d', 10, 3], ['b', 10, 1], ['a', 7, 0], ['c', 10, 1], ['e', 12, 9]];
    for (const [member, value, at] of submissions) await leaderboards.submit(appId, member, [{ board: b, value, strategy: 'last' }], t0 + at);
    const ranks = await leaderboards.ranks(appId, b.statisticName, 0, 0, 10);
    assert.deepEqual(ranks, [
      { member: 'e', value: 12, rank: 0 },
      { member: 'b', value: 10, rank: 1 },
      { member: 'c', value: 10, rank: 2 },
      { member: 'd', value: 10, rank: 3 },
      { member: 'a', value: 7, rank: 4 },
    ]);
    assert.deepEqual(await leaderboards.ranks(appId, b.statisticName, 0, 2, 2), ranks.slice(2, 4));
    for (const ranking of ranks) assert.equal(await leaderboards.rankOf(appId, b.statisticName, 0, ranking.member), ranking.rank);
    assert.equal(await leaderboards.rankOf(appId, b.statisticName, 0, 'nobody'), null);
    assert.equal(await leaderboards.count(appId, b.statisticName, 0), 5);
    assert.equal(await leaderboards.count(appId, b.statisticName, 1), 0);
  });

  test("a member's statistics: by board and version, several members, removal", async () => {
    const leaderboards = store().leaderboards;
    const appId = unique('app');
    const a = board(appId);
    const b = board(appId);
    await leaderboards.create(a);
    await leaderboards.create(b);
    await leaderboards.submit(appId, 'm1', [{ board: a, value: 1, strategy: 'last' }, { board: b, value: 2, strategy: 'last' }], t0);
    await leaderboards.submit(appId, 'm2', [{ board: a, value: 3, strategy: 'last' }], t0);
    assert.deepEqual(await leaderboards.boardsOf(appId, 'm1'), [a.statisticName, b.statisticName].sort());
    const versions = new Map([[a.statisticName, 0], [b.statisticName, 0]]);
    assert.deepEqual((await leaderboards.statisticsOf(appId, 'm1', versions)).map((s) => s.value).sort(), [1, 2]);
    assert.deepEqual(await leaderboards.statisticsOf(appId, 'm1', new Map([[a.statisticName, 1]])), []);
    const several = await leaderboards.statisticsOfMembers(appId, a.statisticName, 0, ['m2', 'm1', 'm3']);
    assert.deepEqual(several.map((s) => [s.member, s.value]).sort(), [['m1', 1], ['m2', 3]]);
    await leaderboards.removeStatistics(appId, 'm1', new Map([[a.statisticName, 0]]));
    assert.deepEqual(await leaderboards.boardsOf(appId, 'm1'), [b.statisticName]);
    assert.equal(await leaderboards.count(appId, a.statisticName, 0), 1);
  });

  test('nextVersion starts one version however many ask, archives the old one and keeps only the newest archives', async () => {
    const leaderboards = store().leaderboards;
    const appId = unique('app');
    const b = board(appId);
    await leaderboards.create(b);
    await leaderboards.submit(appId, 'm', [{ board: b, value: 1, strategy: 'last' }], t0);
    const other = (await store.another())?.leaderboards ?? leaderboards;
    const next = { fromVersion: 0, activatedAt: t0 + 100, expiredAt: t0 + 200, archiveId: 'arch0', keepArchives: 2 };
    const [x, y] = await Promise.all([leaderboards.nextVersion(appId, b.statisticName, next), other.nextVersion(appId, b.statisticName, next)]);
    assert.deepEqual([x?.version, y?.version, x?.activatedAt, x?.expiredAt], [1, 1, t0 + 100, t0 + 200]);
    assert.deepEqual(await leaderboards.archives(appId, b.statisticName, 0, 10), [
      { statisticName: b.statisticName, objectId: 'arch0', version: 0, activatedAt: t0, deactivatedAt: t0 + 100 },
    ]);
    for (const version of [1, 2, 3]) {
      await leaderboards.submit(appId, 'm', [{ board: { ...b, version }, value: version, strategy: 'last' }], t0);
      await leaderboards.nextVersion(appId, b.statisticName, { ...next, fromVersion: version, archiveId: `arch${version}` });
    }
    assert.deepEqual((await leaderboards.archives(appId, b.statisticName, 0, 10)).map((a) => a.version), [3, 2]);
    assert.deepEqual((await leaderboards.archives(appId, b.statisticName, 1, 10)).map((a) => a.version), [2]);
    // Values of pruned versions go with their archives; kept ones stay readable.
    assert.equal(await leaderboards.count(appId, b.statisticName, 1), 0);
    assert.equal(await leaderboards.count(appId, b.statisticName, 2), 1);
    assert.equal(await leaderboards.nextVersion(appId, 'missing', next), null);
  });

  test('remove takes the board, its archives and its values', async () => {
    const leaderboards = store().leaderboards;
    const appId = unique('app');
    const b = board(appId);
    await leaderboards.create(b);
    await leaderboards.submit(appId, 'm', [{ board: b, value: 1, strategy: 'last' }], t0);
    await leaderboards.nextVersion(appId, b.statisticName, { fromVersion: 0, activatedAt: t0 + 1, expiredAt: null, archiveId: 'x', keepArchives: 60 });
    assert.equal(await leaderboards.remove(appId, b.statisticName), true);
    assert.equal(await leaderboards.remove(appId, b.statisticName), false);
    assert.equal(await leaderboards.get(appId, b.statisticName), null);
    assert.deepEqual(await leaderboards.archives(appId, b.statisticName, 0, 10), []);
    assert.deepEqual(await leaderboards.boardsOf(appId, 'm'), []);
  });
});
