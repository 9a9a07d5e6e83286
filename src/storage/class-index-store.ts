/** One key of an index a user declares: a field (its path) and its direction. */
export interface IndexKey {
  path: string[];
  descending: boolean;
}

/**
 * An index a user declared on fields of a class. `building`: the database is still building it
 * (another request or node started it); `failed`: its build stopped (the index is not used).
 */
export interface ClassIndex {
  name: string;
  keys: IndexKey[];
  /** No two objects of the class hold the same values in the keys (an object missing one is not compared). */
  unique: boolean;
  state: 'building' | 'ready' | 'failed';
}

/** The indexes users declare on the fields of their classes (POST /1.1/indexes/<className>). */
export interface ClassIndexStore {
  /**
   * Builds the index and answers once it is ready: `exists` when the class has an index of that name,
   * `duplicates` when a unique one cannot be built because objects share values (nothing of it stays).
   */
  create(appId: string, className: string, spec: { name: string; keys: IndexKey[]; unique: boolean }): Promise<ClassIndex | 'exists' | 'duplicates'>;
  list(appId: string, className: string): Promise<ClassIndex[]>;
  /** False when the class has no index of that name. */
  drop(appId: string, className: string, name: string): Promise<boolean>;
}
