/** How long a bucket spans: a minute (the last hours) or an hour (the last days). */
export type StatGrain = 'minute' | 'hour';

export const grainMs: Record<StatGrain, number> = { minute: 60_000, hour: 3_600_000 };

/**
 * What is counted: `request` and `error` (answers of status 400 and above) by route, `login` by outcome,
 * `lockout`, `push` (devices handed over) and `pushFailed` by route (the own channel or a maker).
 */
export type StatKind = 'request' | 'error' | 'login' | 'lockout' | 'push' | 'pushFailed';

/** A count in one bucket: `at` is the bucket's start (ms); `app` is `none` where no application was proven. */
export interface StatCount {
  at: number;
  app: string;
  kind: StatKind;
  label: string;
  n: number;
}

/**
 * Counts of the console's overview, shared by every node on the database. Nodes add to the same
 * buckets, so a write is an addition (one statement per batch), never a read-modify-write.
 */
export interface StatsStore {
  /** Adds each count (stamped with its minute) to its minute bucket and to its hour bucket. */
  add(counts: readonly StatCount[]): Promise<void>;
  /** The buckets of a grain with `from <= at < to`, summed over applications (`app` is `*`). */
  read(grain: StatGrain, from: number, to: number): Promise<StatCount[]>;
  /** Removes the buckets of a grain that start before `before`; how many went. */
  prune(grain: StatGrain, before: number): Promise<number>;
}
