/** One key of an index a user declares: a field (its path) and its direction. */
export interface IndexKey {
  path: string[];
  descending: boolean;
}

/** How far a build has gone, as the database reports it (PostgreSQL; SQLite reports nothing). */
export interface BuildProgress {
  phase: string;
  blocks: { done: number; total: number };
  tuples: { done: number; total: number };
}

/** Why a build stopped: objects sharing values of a unique index's keys, or the database's own words. */
export type BuildFailure = { reason: 'duplicates' } | { reason: 'error'; message: string };

/**
 * An index a user declared on fields of a class. `building`: a process is building it, or will (one
 * that stopped during the build is resumed); `failed`: its build stopped for good, nothing of it stays.
 */
export interface ClassIndex {
  name: string;
  keys: IndexKey[];
  /** No two objects of the class hold the same values in the keys (an object missing one is not compared). */
  unique: boolean;
  state: 'building' | 'ready' | 'failed';
  /** While building, where the database reports it. */
  progress?: BuildProgress;
  /** When failed. */
  failure?: BuildFailure;
}

/** The indexes users declare on the fields of their classes (POST /1.1/indexes/<className>). */
export interface ClassIndexStore {
  /**
   * Claims the name and answers at once, the index `building`: the build goes on in the background,
   * by one process however many ask (list shows it ready or failed after). `exists`: the class has an
   * index of that name.
   */
  create(appId: string, className: string, spec: { name: string; keys: IndexKey[]; unique: boolean }): Promise<ClassIndex | 'exists'>;
  /** The class's indexes by name; builds of them that no process runs any more (one stopped) start again. */
  list(appId: string, className: string): Promise<ClassIndex[]>;
  /** False when the class has no index of that name. A build of it going on elsewhere removes what it built. */
  drop(appId: string, className: string, name: string): Promise<boolean>;
  /** Starts the builds that no process runs (after a restart), in the background. */
  resume(): Promise<void>;
  /** Resolves when the builds this process runs have ended. */
  idle(): Promise<void>;
}
