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
  state: 'building' | 'ready' | 'failed';
}

/** The indexes users declare on the fields of their classes (POST /1.1/indexes/<className>). */
export interface ClassIndexStore {
  /** Builds the index and answers once it is ready; false when the class already has an index of that name. */
  create(appId: string, className: string, name: string, keys: IndexKey[]): Promise<ClassIndex | false>;
  list(appId: string, className: string): Promise<ClassIndex[]>;
  /** False when the class has no index of that name. */
  drop(appId: string, className: string, name: string): Promise<boolean>;
}
