import { sql, type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { pushMigration, pushPageListMigration, pushPageRangesMigration, pushSweepMigration } from './push-migration.ts';
import { mailTokenMigration } from './mail-token-store.ts';
import { identityMigration } from './identity-migration.ts';
import { quotaPauseMigration } from './quota-pause-store.ts';
import { pushScheduleMigration } from './push-schedule-store.ts';
import { loginAttemptsMigration } from './account-store.ts';

type Kind = 'sqlite' | 'postgres';

/**
 * Schema changes, in order, each a list of statements per database. Never edit a landed
 * migration: add the next one. Applied at start under a lock (underMigrationLock), so several
 * nodes starting at once apply each exactly once.
 */
const steps: Array<{ name: string; statements: Record<Kind, string[]> }> = [
  {
    name: '0001_foundation',
    statements: {
      sqlite: [
        `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
        `CREATE TABLE apps (app_id TEXT PRIMARY KEY, name TEXT NOT NULL, app_key TEXT NOT NULL,
           master_key TEXT NOT NULL, settings TEXT NOT NULL DEFAULT '{}', created_at INTEGER NOT NULL)`,
        `CREATE TABLE objects (app_id TEXT NOT NULL, class_name TEXT NOT NULL, id TEXT NOT NULL,
           created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, data TEXT NOT NULL, acl TEXT,
           readers TEXT NOT NULL, username TEXT, email TEXT, mobile_phone TEXT, installation_id TEXT,
           PRIMARY KEY (app_id, class_name, id))`,
      ],
      postgres: [
        `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
        `CREATE TABLE apps (app_id TEXT PRIMARY KEY, name TEXT NOT NULL, app_key TEXT NOT NULL,
           master_key TEXT NOT NULL, settings JSONB NOT NULL DEFAULT '{}', created_at BIGINT NOT NULL)`,
        `CREATE TABLE objects (app_id TEXT NOT NULL, class_name TEXT NOT NULL, id TEXT NOT NULL,
           created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, data JSONB NOT NULL, acl JSONB,
           readers TEXT[] NOT NULL, username TEXT, email TEXT, mobile_phone TEXT, installation_id TEXT,
           CONSTRAINT objects_pkey PRIMARY KEY (app_id, class_name, id))`,
      ],
    },
  },
  {
    name: '0002_object_indexes',
    statements: {
      sqlite: [],
      postgres: [],
    },
  },
  {
    // Users' secrets live in columns no object query selects; failed logins are one row each.
    name: '0003_accounts',
    statements: {
      sqlite: [
        `ALTER TABLE objects ADD COLUMN password_hash TEXT`,
        `ALTER TABLE objects ADD COLUMN session_digest TEXT`,
        `ALTER TABLE objects ADD COLUMN session_cipher TEXT`,
        `CREATE UNIQUE INDEX objects_session_digest_key ON objects (app_id, session_digest) WHERE session_digest IS NOT NULL`,
        `CREATE TABLE login_failures (id INTEGER PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, at INTEGER NOT NULL)`,
        `CREATE INDEX login_failures_user_idx ON login_failures (app_id, user_id, at)`,
      ],
      postgres: [
        `ALTER TABLE objects ADD COLUMN password_hash TEXT, ADD COLUMN session_digest TEXT, ADD COLUMN session_cipher TEXT`,
        `CREATE UNIQUE INDEX objects_session_digest_key ON objects (app_id, session_digest) WHERE session_digest IS NOT NULL`,
        `CREATE TABLE login_failures (id BIGSERIAL PRIMARY KEY, app_id TEXT NOT NULL, user_id TEXT NOT NULL, at BIGINT NOT NULL)`,
        `CREATE INDEX login_failures_user_idx ON login_failures (app_id, user_id, at)`,
      ],
    },
  },
];

// Indexes read the same on both databases.
const sharedIndexes = [
  `CREATE UNIQUE INDEX objects_username_key ON objects (app_id, username) WHERE username IS NOT NULL`,
  `CREATE UNIQUE INDEX objects_email_key ON objects (app_id, email) WHERE email IS NOT NULL`,
  `CREATE UNIQUE INDEX objects_mobile_phone_key ON objects (app_id, mobile_phone) WHERE mobile_phone IS NOT NULL`,
  `CREATE UNIQUE INDEX objects_installation_id_key ON objects (app_id, installation_id) WHERE installation_id IS NOT NULL`,
  `CREATE INDEX objects_created_idx ON objects (app_id, class_name, created_at)`,
  `CREATE INDEX objects_updated_idx ON objects (app_id, class_name, updated_at)`,
];
steps[1].statements.sqlite.push(...sharedIndexes);
steps[1].statements.postgres.push(...sharedIndexes);
steps.push(pushMigration, pushSweepMigration, pushPageListMigration);
steps.push(identityMigration);
steps.push(mailTokenMigration);
steps.push(quotaPauseMigration);
steps.push(pushPageRangesMigration);
steps.push(pushScheduleMigration);
steps.push(loginAttemptsMigration);

export function migrationsFor(kind: Kind): MigrationProvider {
  return {
    async getMigrations() {
      const migrations: Record<string, Migration> = {};
      for (const step of steps) {
        migrations[step.name] = {
          async up(db: Kysely<any>) {
            for (const statement of step.statements[kind]) await sql.raw(statement).execute(db);
          },
        };
      }
      return migrations;
    },
  };
}

export async function migrate(db: Kysely<any>, kind: Kind): Promise<void> {
  await db.connection().execute((connection) =>
    underMigrationLock(connection, kind, async () => {
      // Steps written on parallel branches may land out of name order; each still runs exactly once.
      const migrator = new Migrator({ db: connection, provider: migrationsFor(kind), allowUnorderedMigrations: true });
      const { error, results } = await migrator.migrateToLatest();
      const failed = results?.find((r) => r.status === 'Error');
      if (error || failed) {
        throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String((error as Error)?.message ?? error)}`, { cause: error });
      }
    }),
  );
}

/** "roostmig": the advisory lock only migrations take. */
const postgresLockKey = '8245931984403917159';
/** How long a process waits for another one's migrations before giving up. */
const lockWaitMs = 10 * 60_000;

/**
 * Servers and CLI commands starting together on one database migrate one at a time: the whole run,
 * the migrator's own bookkeeping tables included, happens on one connection that holds the lock.
 * kysely's migrator locks nothing across SQLite processes, and on PostgreSQL only after creating
 * its tables. PostgreSQL: a session advisory lock (the server frees it if the process dies).
 * SQLite: one write transaction (BEGIN IMMEDIATE) around the run, which also leaves nothing
 * half-applied when a step fails.
 */
async function underMigrationLock(connection: Kysely<any>, kind: Kind, work: () => Promise<void>): Promise<void> {
  if (kind === 'postgres') {
    await sql`SELECT pg_advisory_lock(${sql.lit(postgresLockKey)}::bigint)`.execute(connection);
    try {
      await work();
    } finally {
      // A lost connection took the lock with it.
      await sql`SELECT pg_advisory_unlock(${sql.lit(postgresLockKey)}::bigint)`.execute(connection).catch(() => undefined);
    }
    return;
  }
  const deadline = Date.now() + lockWaitMs;
  for (;;) {
    try {
      await sql`BEGIN IMMEDIATE`.execute(connection);
      break;
    } catch (error) {
      // busy_timeout ran out while another process migrates a big database: keep waiting.
      const busy = String((error as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY');
      if (!busy || Date.now() > deadline) throw error;
    }
  }
  try {
    await work();
  } catch (error) {
    await sql`ROLLBACK`.execute(connection).catch(() => undefined);
    throw error;
  }
  await sql`COMMIT`.execute(connection);
}
