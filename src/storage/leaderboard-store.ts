/** How a member's new value meets the one it has: the better of the two, the newest, or their sum. */
export type UpdateStrategy = 'better' | 'last' | 'sum';
export type RankOrder = 'ascending' | 'descending';
export type VersionInterval = 'day' | 'week' | 'month' | 'never';

/** A leaderboard: one statistic, ranked in one order, its values kept per version. */
export interface Leaderboard {
  appId: string;
  statisticName: string;
  objectId: string;
  /** `_User`, `_Entity` (free-form ids) or the class whose objects are ranked. */
  memberType: string;
  order: RankOrder;
  updateStrategy: UpdateStrategy;
  versionChangeInterval: VersionInterval;
  version: number;
  /** When the current version began (ms). */
  activatedAt: number;
  /** When the current version ends by schedule (ms); null for `never`. */
  expiredAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** A version that ended: its values stay readable (`version=`) until the archive is pruned. */
export interface LeaderboardArchive {
  statisticName: string;
  objectId: string;
  version: number;
  activatedAt: number;
  deactivatedAt: number;
}

/** A member's value on a board, in one version. */
export interface Statistic {
  statisticName: string;
  member: string;
  value: number;
  version: number;
}

export interface Ranking {
  member: string;
  value: number;
  /** 0 for the best. */
  rank: number;
}

/** One value submitted for a member: the board (its current version and order) and how it meets the kept value. */
export interface Submission {
  board: Leaderboard;
  value: number;
  strategy: UpdateStrategy;
}

/**
 * Leaderboards, their archives and their members' values. Ranks are ordered by value (the board's
 * order), then by who reached the value first, then by member id, so equal values never share or
 * swap a rank between two reads.
 */
export interface LeaderboardStore {
  /** False when the application already has a board of that name. */
  create(board: Leaderboard): Promise<boolean>;
  get(appId: string, statisticName: string): Promise<Leaderboard | null>;
  /** The boards of those names that exist, in no particular order. */
  getMany(appId: string, statisticNames: readonly string[]): Promise<Leaderboard[]>;
  /** Sets the strategy and the schedule; the board after, or null when there is none. */
  update(
    appId: string,
    statisticName: string,
    change: { updateStrategy?: UpdateStrategy; versionChangeInterval?: VersionInterval; expiredAt?: number | null; updatedAt: number },
  ): Promise<Leaderboard | null>;
  /**
   * Starts the version after `fromVersion` if that is still the current one (two nodes rolling a
   * board over at once start one version), archives `fromVersion`, and forgets the values and archives
   * older than the newest `keepArchives`. The board after, or null when there is none.
   */
  nextVersion(
    appId: string,
    statisticName: string,
    next: { fromVersion: number; activatedAt: number; expiredAt: number | null; archiveId: string; keepArchives: number },
  ): Promise<Leaderboard | null>;
  /** Removes the board, its archives and every value; false when there was none. */
  remove(appId: string, statisticName: string): Promise<boolean>;
  /** Archives, newest first. */
  archives(appId: string, statisticName: string, skip: number, limit: number): Promise<LeaderboardArchive[]>;
  /** Applies each submission to the member's value in its board's version, all or none; the values kept, in order. */
  submit(appId: string, member: string, submissions: readonly Submission[], now: number): Promise<Statistic[]>;
  /** The member's values in the boards' versions given (name → version). */
  statisticsOf(appId: string, member: string, versions: ReadonlyMap<string, number>): Promise<Statistic[]>;
  /** The names of the boards the member holds a value on, in any version. */
  boardsOf(appId: string, member: string): Promise<string[]>;
  /** The values of several members on one board's version. */
  statisticsOfMembers(appId: string, statisticName: string, version: number, members: readonly string[]): Promise<Statistic[]>;
  /** Removes the member's values from the boards' versions given (name → version). */
  removeStatistics(appId: string, member: string, versions: ReadonlyMap<string, number>): Promise<void>;
  /** A page of a version's ranks, best first. */
  ranks(appId: string, statisticName: string, version: number, skip: number, limit: number): Promise<Ranking[]>;
  /** The member's rank in a version, null when it holds no value there. */
  rankOf(appId: string, statisticName: string, version: number, member: string): Promise<number | null>;
  /** How many members hold a value in a version. */
  count(appId: string, statisticName: string, version: number): Promise<number>;
}
