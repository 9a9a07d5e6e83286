import { sql, type Kysely, type Migration as KyselyMigration, type MigrationProvider, Migrator } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { baseline } from './0001_baseline.ts';
import { objectsDataGin } from './0002_objects_data_gin.ts';
import { classIndexes } from './0003_class_indexes.ts';
import { objectsInsertionOrder } from './0004_objects_insertion_order.ts';
import { relations } from './0005_relations.ts';
import { roleNames } from './0006_role_names.ts';
import { objectsGeo } from './0007_objects_geo.ts';
import { classFields } from './0008_class_fields.ts';
import { classIndexBuilds } from './0009_class_index_builds.ts';
import { appRetiredKeys } from './0010_app_retired_keys.ts';
import { operators } from './0011_operators.ts';
import { sqliteValueSamples } from './0012_sqlite_value_samples.ts';
import { operatorTotp } from './0013_operator_totp.ts';
import { relationFieldsInClassFields } from './0014_relation_fields_in_class_fields.ts';
import { statBuckets } from './0015_stat_buckets.ts';
import { operatorRecoveryCodes } from './0016_operator_recovery_codes.ts';
import { leaderboards } from './0017_leaderboards.ts';
import { statusInboxes } from './0018_status_inboxes.ts';
import { objectsGeoCells } from './0019_objects_geo_cells.ts';
import { memberRolesFunction } from './0020_member_roles.ts';

type Kind = 'sqlite' | 'postgres';

/** One schema change: its statements for each database, run in order. */
export type Migration = Record<Kind, readonly string[]>;

/**
 * Every migration of this folder, in name order; the name is the file's name. For contributors:
 * never edit a migration that has landed (databases out there already ran it). Change the schema
 * by adding the next file (`0002_what_it_does.ts`, statements for both databases) and its line
 * here; test/migrations.test.ts checks that this list and the folder agree.
 */
export const migrations: ReadonlyArray<[name: string, migration: Migration]> = [
  ['0001_baseline', baseline],
  ['0002_objects_data_gin', objectsDataGin],
  ['0003_class_indexes', classIndexes],
  ['0004_objects_insertion_order', objectsInsertionOrder],
  ['0005_relations', relations],
  ['0006_role_names', roleNames],
  ['0007_objects_geo', objectsGeo],
  ['0008_class_fields', classFields],
  ['0009_class_index_builds', classIndexBuilds],
  ['0010_app_retired_keys', appRetiredKeys],
  ['0011_operators', operators],
  ['0012_sqlite_value_samples', sqliteValueSamples],
  ['0013_operator_totp', operatorTotp],
  ['0014_relation_fields_in_class_fields', relationFieldsInClassFields],
  ['0015_stat_buckets', statBuckets],
  ['0016_operator_recovery_codes', operatorRecoveryCodes],
  ['0017_leaderboards', leaderboards],
  ['0018_status_inboxes', statusInboxes],
  ['0019_objects_geo_cells', objectsGeoCells],
  ['0020_member_roles', memberRolesFunction],
];

function providerFor(kind: Kind): MigrationProvider {
  return {
    async getMigrations() {
      const byName: Record<string, KyselyMigration> = {};
      for (const [name, migration] of migrations) {
        byName[name] = {
          async up(db: Kysely<any>) {
            for (const statement of migration[kind]) await sql.raw(statement).execute(db);
          },
        };
      }
      return byName;
    },
  };
}

/**
 * Applies the migrations this database has not run yet. Servers and CLI commands starting together on one database migrate one at a time: the whole run,
 * the migrator's own bookkeeping tables included, happens on one connection holding the dialect's
 * migration lock (kysely's migrator locks nothing across SQLite processes, and on PostgreSQL only
 * after creating its tables).
 */
export async function migrate(db: Kysely<any>, dialect: SqlDialect): Promise<void> {
  await db.connection().execute((connection) =>
    dialect.underMigrationLock(connection, async () => {
      const migrator = new Migrator({ db: connection, provider: providerFor(dialect.kind) });
      const { error, results } = await migrator.migrateToLatest();
      const failed = results?.find((r) => r.status === 'Error');
      if (error || failed) {
        // No failed step: kysely refused the run, e.g. a database that ran migrations this folder no longer has.
        const what = failed ? `migration ${failed.migrationName}` : 'migrations';
        throw new Error(`${what} failed: ${String((error as Error)?.message ?? error)}`, { cause: error });
      }
    }),
  );
}

