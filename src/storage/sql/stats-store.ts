import { sql, type Kysely } from 'kysely';
import { grainMs, type StatCount, type StatGrain, type StatKind, type StatsStore } from '../stats-store.ts';

/** Rows per INSERT: six parameters each, well inside SQLite's bound-parameter limit. */
const rowsPerStatement = 500;

/** StatsStore on SQL (table stat_buckets, migration 0015); one text for both databases. */
export class SqlStatsStore implements StatsStore {
  private readonly db: Kysely<any>;
  constructor(options: { db: Kysely<any> }) {
    this.db = options.db;
  }

  async add(counts: readonly StatCount[]): Promise<void> {
    // Summed per bucket first: PostgreSQL refuses an INSERT … ON CONFLICT that touches one row twice.
    const rows = new Map<string, [StatGrain, number, string, StatKind, string, number]>();
    for (const count of counts) {
      for (const grain of ['minute', 'hour'] as const) {
        const at = count.at - (count.at % grainMs[grain]);
        const key = `${grain}\0${at}\0${count.app}\0${count.kind}\0${count.label}`;
        const row = rows.get(key);
        if (row) row[5] += count.n;
        else rows.set(key, [grain, at, count.app, count.kind, count.label, count.n]);
      }
    }
    const all = [...rows.values()];
    for (let start = 0; start < all.length; start += rowsPerStatement) {
      const values = all.slice(start, start + rowsPerStatement).map((row) => sql`(${sql.join(row)})`);
      await sql`INSERT INTO stat_buckets (grain, at, app, kind, label, n) VALUES ${sql.join(values)}
        ON CONFLICT (grain, at, app, kind, label) DO UPDATE SET n = stat_buckets.n + excluded.n`.execute(this.db);
    }
  }

  async read(grain: StatGrain, from: number, to: number): Promise<StatCount[]> {
    const { rows } = await sql<{ at: number | string; kind: StatKind; label: string; n: number | string }>`
      SELECT at, kind, label, SUM(n) AS n FROM stat_buckets
      WHERE grain = ${grain} AND at >= ${from} AND at < ${to}
      GROUP BY at, kind, label`.execute(this.db);
    return rows.map((row) => ({ at: Number(row.at), app: '*', kind: row.kind, label: row.label, n: Number(row.n) }));
  }

  async prune(grain: StatGrain, before: number): Promise<number> {
    const result = await sql`DELETE FROM stat_buckets WHERE grain = ${grain} AND at < ${before}`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }
}
