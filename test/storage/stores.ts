// The harness of the store conformance suites (test/storage/*.conformance.test.ts, STYLE point 7).
// Every suite tests one interface through its verbs only, against each implementation: the SQL
// ones on the database this run selects (PostgreSQL with DATABASE_URL, else SQLite), one fresh
// database per file as the rest of the suite has; QuotaPauses also against Redis and memory.
import { after, before } from 'node:test';
import type { Kysely } from 'kysely';
import { freshPostgresDatabase, testDatabase, type TestDatabase } from '../helpers/databases.ts';
import { openPostgresStore } from '../../src/storage/postgres/open.ts';

type PostgresStore = Awaited<ReturnType<typeof openPostgresStore>>;
import type { Store } from '../../src/storage/store.ts';
import type { StoredObject } from '../../src/objects/types.ts';
import type { SessionSeal } from '../../src/storage/account-store.ts';

export interface StoreUnderTest {
  (): Store;
  /**
   * A second store on the same database, as a second Roost process has; null on SQLite, where two
   * connections in one process would wait on each other's write lock synchronously (the HTTP tests
   * with real processes cover SQLite).
   */
  another(): Promise<Store | null>;
}

/** Opens a store on a fresh database before the file's tests and drops it after; call the result for the store. */
export function useStore(): StoreUnderTest {
  let database: TestDatabase | undefined;
  const opened: Store[] = [];
  before(async () => {
    database = await testDatabase();
    opened.push(await database.open());
  });
  after(async () => {
    for (const store of opened.reverse()) await store.close();
    await database?.drop();
  });
  const current = () => {
    if (opened.length === 0) throw new Error('the store opens in before()');
    return opened[0];
  };
  current.another = async () => {
    if (!database || database.kind === 'sqlite') return null;
    const store = await database.open();
    opened.push(store);
    return store;
  };
  return current;
}

let seq = 0;
/** A name no other test of the run uses: application ids, phone numbers, digests. */
export function unique(prefix: string): string {
  seq += 1;
  return `${prefix}${process.pid}x${seq}`;
}

/** Creates an application of its own for a test, so tests of one file never see each other's rows. */
export async function freshApp(store: Store, settings: Record<string, unknown> = {}): Promise<string> {
  const appId = unique('app');
  await store.createApp({ appId, name: appId, appKey: `k-${appId}`, masterKey: `m-${appId}`, settings, createdAt: Date.now(), retiredKeys: [] });
  return appId;
}

let objectSeq = 0;
/** An object with a fresh objectId; createdAt and updatedAt rise with each one made. */
export function objectOf(className: string, data: StoredObject['data'], acl: StoredObject['acl'] = null): StoredObject {
  objectSeq += 1;
  const at = 1_000_000 + objectSeq;
  return { className, objectId: `o${String(objectSeq).padStart(7, '0')}`, createdAt: at, updatedAt: at, acl, data };
}

export function sessionSeal(name: string): SessionSeal {
  return { digest: `digest-${name}`, cipher: `cipher-${name}` };
}

/**
 * A PostgreSQL store on a fresh database with one connection, so that the statement catalogue a test reads
 * (pg_prepared_statements) is its reads' own session's, and its query builder for such reads; dropped after `body`.
 */
export async function withOneConnectionStore(body: (store: PostgresStore, db: Kysely<any>) => Promise<void>): Promise<void> {
  const database = await freshPostgresDatabase();
  const store = await openPostgresStore({ url: database.url, poolSize: 1 });
  try {
    await body(store, (store as unknown as { db: Kysely<any> }).db);
  } finally {
    await store.close();
    await database.drop();
  }
}
