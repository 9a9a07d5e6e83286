import { ApiError, fail } from '../lib/errors.ts';
import type { Clock } from '../lib/clock.ts';
import { newObjectId } from '../lib/ids.ts';
import { checkClassName } from '../objects/values.ts';
import type {
  Leaderboard, LeaderboardArchive, LeaderboardStore, RankOrder, Ranking, Statistic, UpdateStrategy, VersionInterval,
} from '../storage/leaderboard-store.ts';
import { periodEnd, periodStart } from './schedule.ts';

/** Who a board ranks, as the paths name them: users, objects of one class, or entities (free-form ids). */
export type MemberKind = 'user' | 'object' | 'entity';

const strategies: readonly UpdateStrategy[] = ['better', 'last', 'sum'];
const orders: readonly RankOrder[] = ['ascending', 'descending'];
const intervals: readonly VersionInterval[] = ['day', 'week', 'month', 'never'];

/** Archives kept per board, as the hosted service kept 60 archive files; older versions' values go with them. */
export const keptArchives = 60;

/** Names go into paths and comma-separated lists: no comma, slash, white space or control character (NUL above all). */
const statisticNamePattern = /^[^,/\s\p{Cc}]{1,128}$/u;

export function kindOfMemberType(memberType: string): MemberKind {
  return memberType === '_User' ? 'user' : memberType === '_Entity' ? 'entity' : 'object';
}

/**
 * A member id: users' and objects' ids, or an entity's own id. No NUL (PostgreSQL's text refuses it),
 * at most 256 characters.
 */
export function checkMemberId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '' || id.length > 256 || id.includes('\0')) {
    fail('invalidLeaderboard', 'A member id is a string of 1 to 256 characters.');
  }
}

function notFound(statisticName: string): ApiError {
  return new ApiError('statisticNotFound', `statisticName '${statisticName}' not found.`);
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string, fallback: T): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    fail('invalidLeaderboard', `${field} must be one of ${allowed.join(', ')}.`);
  }
  return value as T;
}

/** A member's value with its board's member type: which class the member is an object of. */
export type BoardStatistic = Statistic & { memberType: string };

const withMemberType = (boards: ReadonlyMap<string, Leaderboard>) => (statistic: Statistic): BoardStatistic => ({
  ...statistic,
  memberType: boards.get(statistic.statisticName)!.memberType,
});

export interface NewLeaderboard {
  statisticName?: unknown;
  memberType?: unknown;
  order?: unknown;
  updateStrategy?: unknown;
  versionChangeInterval?: unknown;
}

export interface RankQuery {
  skip: number;
  limit: number;
  /** A past version (still archived); the current one when undefined. */
  version?: number;
  /** The member whose neighbourhood is asked: the page is centred on its rank. */
  around?: string;
}

/**
 * Leaderboards: boards, their versions on a schedule, members' values under each board's update
 * strategy, and ranks. A board whose scheduled end has passed starts its next version when it is next
 * read or written (rollOver), so no timer is needed and every node agrees on the version.
 */
export class Leaderboards {
  private readonly store: LeaderboardStore;
  private readonly clock: Clock;

  constructor(options: { store: LeaderboardStore; clock: Clock }) {
    this.store = options.store;
    this.clock = options.clock;
  }

  async create(appId: string, input: NewLeaderboard): Promise<Leaderboard> {
    const { statisticName } = input;
    if (typeof statisticName !== 'string' || !statisticNamePattern.test(statisticName)) {
      fail('invalidLeaderboard', 'statisticName must be a string of 1 to 128 characters without commas, slashes, spaces or control characters.');
    }
    const memberType = input.memberType ?? '_User';
    if (typeof memberType !== 'string') fail('invalidLeaderboard', 'memberType must be _User, _Entity or a class name.');
    if (memberType !== '_Entity') checkClassName(memberType);
    const interval = oneOf(input.versionChangeInterval, intervals, 'versionChangeInterval', 'week');
    const now = this.clock.now();
    const board: Leaderboard = {
      appId,
      statisticName,
      objectId: newObjectId(now),
      memberType,
      order: oneOf(input.order, orders, 'order', 'descending'),
      updateStrategy: oneOf(input.updateStrategy, strategies, 'updateStrategy', 'better'),
      versionChangeInterval: interval,
      version: 0,
      activatedAt: now,
      expiredAt: periodEnd(interval, now),
      createdAt: now,
      updatedAt: now,
    };
    if (!(await this.store.create(board))) {
      fail('leaderboardExists', `A leaderboard named '${statisticName}' already exists.`);
    }
    return board;
  }

  /** The board as it stands now: its next version started if its scheduled end has passed. */
  async get(appId: string, statisticName: string): Promise<Leaderboard> {
    // A name no board can have is not looked up (nor handed to the database).
    const board = statisticNamePattern.test(statisticName) ? await this.store.get(appId, statisticName) : null;
    if (!board) throw notFound(statisticName);
    return this.rollOver(board);
  }

  /** The boards of those names as they stand now; 2100 naming the first that does not exist. */
  async getMany(appId: string, statisticNames: readonly string[]): Promise<Map<string, Leaderboard>> {
    for (const name of statisticNames) if (!statisticNamePattern.test(name)) throw notFound(name);
    const found = new Map((await this.store.getMany(appId, statisticNames)).map((board) => [board.statisticName, board]));
    for (const name of statisticNames) if (!found.has(name)) throw notFound(name);
    for (const [name, board] of found) found.set(name, await this.rollOver(board));
    return found;
  }

  private async rollOver(board: Leaderboard): Promise<Leaderboard> {
    const now = this.clock.now();
    if (board.expiredAt === null || now < board.expiredAt) return board;
    const activatedAt = periodStart(board.versionChangeInterval, now) ?? now;
    const next = await this.store.nextVersion(board.appId, board.statisticName, {
      fromVersion: board.version,
      activatedAt,
      expiredAt: periodEnd(board.versionChangeInterval, now),
      archiveId: newObjectId(now),
      keepArchives: keptArchives,
    });
    if (!next) throw notFound(board.statisticName);
    return next;
  }

  /** Changes the update strategy or the schedule (nothing else of a board changes); the fields changed. */
  async update(appId: string, statisticName: string, change: Record<string, unknown>): Promise<Leaderboard> {
    const unknown = Object.keys(change).filter((key) => key !== 'updateStrategy' && key !== 'versionChangeInterval');
    if (unknown.length > 0) fail('invalidLeaderboard', 'Only updateStrategy and versionChangeInterval can be changed.');
    const board = await this.get(appId, statisticName);
    const now = this.clock.now();
    const updateStrategy = change.updateStrategy === undefined ? undefined : oneOf(change.updateStrategy, strategies, 'updateStrategy', 'better');
    const interval = change.versionChangeInterval === undefined ? undefined : oneOf(change.versionChangeInterval, intervals, 'versionChangeInterval', 'week');
    const updated = await this.store.update(appId, statisticName, {
      updateStrategy,
      versionChangeInterval: interval,
      expiredAt: interval === undefined ? undefined : periodEnd(interval, now),
      updatedAt: now,
    });
    return updated ?? board;
  }

  /** Starts the next version now, whatever the schedule. */
  async reset(appId: string, statisticName: string): Promise<Leaderboard> {
    const board = await this.get(appId, statisticName);
    const now = this.clock.now();
    const next = await this.store.nextVersion(appId, statisticName, {
      fromVersion: board.version,
      activatedAt: now,
      expiredAt: periodEnd(board.versionChangeInterval, now),
      archiveId: newObjectId(now),
      keepArchives: keptArchives,
    });
    if (!next) throw notFound(statisticName);
    return next;
  }

  async remove(appId: string, statisticName: string): Promise<void> {
    if (!statisticNamePattern.test(statisticName) || !(await this.store.remove(appId, statisticName))) throw notFound(statisticName);
  }

  async archives(appId: string, statisticName: string, skip: number, limit: number): Promise<LeaderboardArchive[]> {
    await this.get(appId, statisticName);
    return this.store.archives(appId, statisticName, skip, limit);
  }

  /** The boards of `kind` named; 2102 for a board of another member type. */
  private async boardsFor(appId: string, kind: MemberKind, statisticNames: readonly string[]): Promise<Map<string, Leaderboard>> {
    const boards = await this.getMany(appId, statisticNames);
    for (const board of boards.values()) {
      if (kindOfMemberType(board.memberType) !== kind) {
        fail('leaderboardMemberType', `The leaderboard '${board.statisticName}' ranks ${board.memberType}, not ${kind}s.`);
      }
    }
    return boards;
  }

  /**
   * Submits values for a member: `[{statisticName, statisticValue}]`, each applied under its board's
   * strategy (`overwrite`: the newest value whatever the strategy). The values kept, in order.
   */
  async submit(appId: string, kind: MemberKind, member: string, body: unknown, overwrite: boolean): Promise<Statistic[]> {
    if (!Array.isArray(body) || body.length === 0) {
      fail('invalidLeaderboard', 'The body must be an array of {"statisticName", "statisticValue"}.');
    }
    const entries = body.map((entry: unknown) => {
      const { statisticName, statisticValue } = (entry ?? {}) as { statisticName?: unknown; statisticValue?: unknown };
      if (typeof statisticName !== 'string' || typeof statisticValue !== 'number' || !Number.isFinite(statisticValue)) {
        fail('invalidLeaderboard', 'Each statistic is {"statisticName": a string, "statisticValue": a number}.');
      }
      return { statisticName, value: statisticValue };
    });
    const boards = await this.boardsFor(appId, kind, [...new Set(entries.map((entry) => entry.statisticName))]);
    const submissions = entries.map((entry) => {
      const board = boards.get(entry.statisticName)!;
      return { board, value: entry.value, strategy: overwrite ? ('last' as const) : board.updateStrategy };
    });
    return this.store.submit(appId, member, submissions, this.clock.now());
  }

  /** A member's values in the current versions of the boards named, or of every board it is on. */
  async statisticsOf(appId: string, kind: MemberKind, member: string, statisticNames: readonly string[] | null): Promise<BoardStatistic[]> {
    const names = statisticNames ?? (await this.store.boardsOf(appId, member));
    const boards = statisticNames ? await this.boardsFor(appId, kind, names) : await this.existing(appId, kind, names);
    const found = await this.store.statisticsOf(appId, member, new Map([...boards.values()].map((board) => [board.statisticName, board.version])));
    return found.map(withMemberType(boards));
  }

  /** The boards of those names that exist and rank `kind`, as they stand now. */
  private async existing(appId: string, kind: MemberKind, names: readonly string[]): Promise<Map<string, Leaderboard>> {
    const boards = new Map<string, Leaderboard>();
    for (const board of await this.store.getMany(appId, names)) {
      if (kindOfMemberType(board.memberType) === kind) boards.set(board.statisticName, await this.rollOver(board));
    }
    return boards;
  }

  /** The values of several members (at most 200) on one board's current version, in the order asked. */
  async statisticsOfMembers(appId: string, kind: MemberKind, statisticName: string, members: unknown): Promise<BoardStatistic[]> {
    if (!Array.isArray(members) || members.length > 200) fail('invalidLeaderboard', 'The body must be an array of at most 200 ids.');
    members.forEach(checkMemberId);
    const boards = await this.boardsFor(appId, kind, [statisticName]);
    const board = boards.get(statisticName)!;
    const stored = await this.store.statisticsOfMembers(appId, statisticName, board.version, members);
    const found = new Map(stored.map(withMemberType(boards)).map((s) => [s.member, s]));
    return members.flatMap((member: string) => found.get(member) ?? []);
  }

  async removeStatistics(appId: string, kind: MemberKind, member: string, statisticNames: readonly string[]): Promise<void> {
    if (statisticNames.length === 0) fail('invalidLeaderboard', 'Name the statistics to delete: statistics=<name>,<name>.');
    const boards = await this.boardsFor(appId, kind, statisticNames);
    await this.store.removeStatistics(appId, member, new Map([...boards.values()].map((board) => [board.statisticName, board.version])));
  }

  /**
   * A page of a board's ranks, best first; around a member, the page is centred on its rank (empty
   * when it holds no value). `kind` null: the board's own member type (the paths without one).
   */
  async ranks(appId: string, kind: MemberKind | null, statisticName: string, query: RankQuery): Promise<{ board: Leaderboard; version: number; rankings: Ranking[] }> {
    const board = kind === null ? await this.get(appId, statisticName) : (await this.boardsFor(appId, kind, [statisticName])).get(statisticName)!;
    const version = query.version ?? board.version;
    if (version > board.version || version < 0) fail('invalidLeaderboard', `The leaderboard has no version ${version}.`);
    let skip = query.skip;
    if (query.around !== undefined) {
      const rank = await this.store.rankOf(appId, statisticName, version, query.around);
      if (rank === null || query.limit === 0) return { board, version, rankings: [] };
      skip = Math.max(0, rank - Math.floor(query.limit / 2));
    }
    return { board, version, rankings: query.limit === 0 ? [] : await this.store.ranks(appId, statisticName, version, skip, query.limit) };
  }

  count(appId: string, statisticName: string, version: number): Promise<number> {
    return this.store.count(appId, statisticName, version);
  }
}
