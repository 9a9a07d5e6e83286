import { sql, type Kysely } from 'kysely';
import type {
  Leaderboard, LeaderboardArchive, LeaderboardStore, RankOrder, Ranking, Statistic, Submission, UpdateStrategy, VersionInterval,
} from '../leaderboard-store.ts';
import type { SqlDialect } from './dialect.ts';

interface BoardRow {
  app_id: string;
  name: string;
  object_id: string;
  member_type: string;
  sort_order: RankOrder;
  update_strategy: UpdateStrategy;
  version_interval: VersionInterval;
  version: number | string;
  activated_at: number | string;
  expired_at: number | string | null;
  created_at: number | string;
  updated_at: number | string;
}

function boardOf(row: BoardRow): Leaderboard {
  return {
    appId: row.app_id,
    statisticName: row.name,
    objectId: row.object_id,
    memberType: row.member_type,
    order: row.sort_order,
    updateStrategy: row.update_strategy,
    versionChangeInterval: row.version_interval,
    version: Number(row.version),
    activatedAt: Number(row.activated_at),
    expiredAt: row.expired_at === null ? null : Number(row.expired_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

interface StatisticRow {
  name: string;
  member: string;
  value: number | string;
  version: number | string;
}

const statisticOf = (row: StatisticRow): Statistic => ({ statisticName: row.name, member: row.member, value: Number(row.value), version: Number(row.version) });

/** The key a value ranks by: smaller ranks higher, whatever the board's order (migration 0017). */
const sortKey = (order: RankOrder, value: number) => (order === 'ascending' ? value : -value);

/**
 * The value kept when a member that already holds one submits another, as one statement, so that two
 * submissions at once (a `sum` above all) both count. `s` is the row as stored, `excluded` the submission.
 */
const kept: Record<UpdateStrategy, { value: string; sortKey: string; reachedAt: string }> = {
  last: { value: 'excluded.value', sortKey: 'excluded.sort_key', reachedAt: 'excluded.reached_at' },
  sum: {
    value: 'leaderboard_statistics.value + excluded.value',
    sortKey: 'leaderboard_statistics.sort_key + excluded.sort_key',
    reachedAt: 'excluded.reached_at',
  },
  better: {
    value: 'CASE WHEN excluded.sort_key < leaderboard_statistics.sort_key THEN excluded.value ELSE leaderboard_statistics.value END',
    sortKey: 'CASE WHEN excluded.sort_key < leaderboard_statistics.sort_key THEN excluded.sort_key ELSE leaderboard_statistics.sort_key END',
    reachedAt: 'CASE WHEN excluded.sort_key < leaderboard_statistics.sort_key THEN excluded.reached_at ELSE leaderboard_statistics.reached_at END',
  },
};

/** LeaderboardStore on SQL (migration 0017); one text for both databases. */
export class SqlLeaderboardStore implements LeaderboardStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async create(board: Leaderboard): Promise<boolean> {
    const result = await sql`INSERT INTO leaderboards (app_id, name, object_id, member_type, sort_order, update_strategy, version_interval,
        version, activated_at, expired_at, created_at, updated_at)
      VALUES (${board.appId}, ${board.statisticName}, ${board.objectId}, ${board.memberType}, ${board.order}, ${board.updateStrategy},
        ${board.versionChangeInterval}, ${board.version}, ${board.activatedAt}, ${board.expiredAt}, ${board.createdAt}, ${board.updatedAt})
      ON CONFLICT (app_id, name) DO NOTHING`.execute(this.db);
    return Number(result.numAffectedRows ?? 0) === 1;
  }

  async get(appId: string, statisticName: string): Promise<Leaderboard | null> {
    const { rows } = await sql<BoardRow>`SELECT * FROM leaderboards WHERE app_id = ${appId} AND name = ${statisticName}`.execute(this.db);
    return rows.length === 0 ? null : boardOf(rows[0]);
  }

  async getMany(appId: string, statisticNames: readonly string[]): Promise<Leaderboard[]> {
    if (statisticNames.length === 0) return [];
    const { rows } = await sql<BoardRow>`SELECT * FROM leaderboards WHERE app_id = ${appId}
      AND ${this.dialect.columnIn(sql.ref('name'), 'string', [...statisticNames])}`.execute(this.db);
    return rows.map(boardOf);
  }

  async update(
    appId: string,
    statisticName: string,
    change: { updateStrategy?: UpdateStrategy; versionChangeInterval?: VersionInterval; expiredAt?: number | null; updatedAt: number },
  ): Promise<Leaderboard | null> {
    const sets = [sql`updated_at = ${change.updatedAt}`];
    if (change.updateStrategy !== undefined) sets.push(sql`update_strategy = ${change.updateStrategy}`);
    if (change.versionChangeInterval !== undefined) sets.push(sql`version_interval = ${change.versionChangeInterval}`);
    if (change.expiredAt !== undefined) sets.push(sql`expired_at = ${change.expiredAt}`);
    await sql`UPDATE leaderboards SET ${sql.join(sets)} WHERE app_id = ${appId} AND name = ${statisticName}`.execute(this.db);
    return this.get(appId, statisticName);
  }

  async nextVersion(
    appId: string,
    statisticName: string,
    next: { fromVersion: number; activatedAt: number; expiredAt: number | null; archiveId: string; keepArchives: number },
  ): Promise<Leaderboard | null> {
    await this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<BoardRow>`SELECT * FROM leaderboards WHERE app_id = ${appId} AND name = ${statisticName}
        AND version = ${next.fromVersion} ${this.dialect.rowLock}`.execute(trx);
      if (rows.length === 0) return;
      const ended = boardOf(rows[0]);
      const version = next.fromVersion + 1;
      await sql`UPDATE leaderboards SET version = ${version}, activated_at = ${next.activatedAt}, expired_at = ${next.expiredAt},
        updated_at = ${next.activatedAt} WHERE app_id = ${appId} AND name = ${statisticName}`.execute(trx);
      await sql`INSERT INTO leaderboard_archives (app_id, name, version, object_id, activated_at, deactivated_at)
        VALUES (${appId}, ${statisticName}, ${ended.version}, ${next.archiveId}, ${ended.activatedAt}, ${next.activatedAt})
        ON CONFLICT (app_id, name, version) DO NOTHING`.execute(trx);
      // The oldest version still kept: the newest keepArchives archives, and the current one.
      const oldest = version - next.keepArchives;
      await sql`DELETE FROM leaderboard_archives WHERE app_id = ${appId} AND name = ${statisticName} AND version < ${oldest}`.execute(trx);
      await sql`DELETE FROM leaderboard_statistics WHERE app_id = ${appId} AND name = ${statisticName} AND version < ${oldest}`.execute(trx);
    });
    return this.get(appId, statisticName);
  }

  async remove(appId: string, statisticName: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await sql`DELETE FROM leaderboards WHERE app_id = ${appId} AND name = ${statisticName}`.execute(trx);
      await sql`DELETE FROM leaderboard_archives WHERE app_id = ${appId} AND name = ${statisticName}`.execute(trx);
      await sql`DELETE FROM leaderboard_statistics WHERE app_id = ${appId} AND name = ${statisticName}`.execute(trx);
      return Number(result.numAffectedRows ?? 0) > 0;
    });
  }

  async archives(appId: string, statisticName: string, skip: number, limit: number): Promise<LeaderboardArchive[]> {
    const { rows } = await sql<{ name: string; object_id: string; version: number | string; activated_at: number | string; deactivated_at: number | string }>`
      SELECT name, object_id, version, activated_at, deactivated_at FROM leaderboard_archives
      WHERE app_id = ${appId} AND name = ${statisticName} ORDER BY version DESC LIMIT ${limit} OFFSET ${skip}`.execute(this.db);
    return rows.map((row) => ({
      statisticName: row.name,
      objectId: row.object_id,
      version: Number(row.version),
      activatedAt: Number(row.activated_at),
      deactivatedAt: Number(row.deactivated_at),
    }));
  }

  async submit(appId: string, member: string, submissions: readonly Submission[], now: number): Promise<Statistic[]> {
    return this.db.transaction().execute(async (trx) => {
      const out: Statistic[] = [];
      for (const { board, value, strategy } of submissions) {
        const rule = kept[strategy];
        const { rows } = await sql<StatisticRow>`INSERT INTO leaderboard_statistics (app_id, name, version, member, value, sort_key, reached_at)
          VALUES (${appId}, ${board.statisticName}, ${board.version}, ${member}, ${value}, ${sortKey(board.order, value)}, ${now})
          ON CONFLICT (app_id, name, version, member) DO UPDATE SET value = ${sql.raw(rule.value)}, sort_key = ${sql.raw(rule.sortKey)},
            reached_at = ${sql.raw(rule.reachedAt)}
          RETURNING name, member, value, version`.execute(trx);
        out.push(statisticOf(rows[0]));
      }
      return out;
    });
  }

  async statisticsOf(appId: string, member: string, versions: ReadonlyMap<string, number>): Promise<Statistic[]> {
    if (versions.size === 0) return [];
    const { rows } = await sql<StatisticRow>`SELECT name, member, value, version FROM leaderboard_statistics
      WHERE app_id = ${appId} AND member = ${member} AND ${this.dialect.columnIn(sql.ref('name'), 'string', [...versions.keys()])}
      ORDER BY name`.execute(this.db);
    return rows.map(statisticOf).filter((statistic) => versions.get(statistic.statisticName) === statistic.version);
  }

  async boardsOf(appId: string, member: string): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`SELECT DISTINCT name FROM leaderboard_statistics
      WHERE app_id = ${appId} AND member = ${member} ORDER BY name`.execute(this.db);
    return rows.map((row) => row.name);
  }

  async statisticsOfMembers(appId: string, statisticName: string, version: number, members: readonly string[]): Promise<Statistic[]> {
    if (members.length === 0) return [];
    const { rows } = await sql<StatisticRow>`SELECT name, member, value, version FROM leaderboard_statistics
      WHERE app_id = ${appId} AND name = ${statisticName} AND version = ${version}
      AND ${this.dialect.columnIn(sql.ref('member'), 'string', [...members])}`.execute(this.db);
    return rows.map(statisticOf);
  }

  async removeStatistics(appId: string, member: string, versions: ReadonlyMap<string, number>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const [name, version] of versions) {
        await sql`DELETE FROM leaderboard_statistics WHERE app_id = ${appId} AND name = ${name} AND version = ${version}
          AND member = ${member}`.execute(trx);
      }
    });
  }

  async ranks(appId: string, statisticName: string, version: number, skip: number, limit: number): Promise<Ranking[]> {
    const { rows } = await sql<{ member: string; value: number | string }>`SELECT member, value FROM leaderboard_statistics
      WHERE app_id = ${appId} AND name = ${statisticName} AND version = ${version}
      ORDER BY sort_key, reached_at, member LIMIT ${limit} OFFSET ${skip}`.execute(this.db);
    return rows.map((row, i) => ({ member: row.member, value: Number(row.value), rank: skip + i }));
  }

  async rankOf(appId: string, statisticName: string, version: number, member: string): Promise<number | null> {
    const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM leaderboard_statistics s
      JOIN leaderboard_statistics m ON m.app_id = s.app_id AND m.name = s.name AND m.version = s.version AND m.member = ${member}
      WHERE s.app_id = ${appId} AND s.name = ${statisticName} AND s.version = ${version}
      AND (s.sort_key, s.reached_at, s.member) <= (m.sort_key, m.reached_at, m.member)`.execute(this.db);
    const n = Number(rows[0]?.n ?? 0);
    return n === 0 ? null : n - 1;
  }

  async count(appId: string, statisticName: string, version: number): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM leaderboard_statistics
      WHERE app_id = ${appId} AND name = ${statisticName} AND version = ${version}`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }
}
