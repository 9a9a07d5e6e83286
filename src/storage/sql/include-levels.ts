import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Readers } from '../../objects/types.ts';
import type { SqlDialect } from './dialect.ts';
import { objectJsonColumns } from './object-row.ts';
import { readableSql } from './roles.ts';

export type LevelRefs = ReadonlyArray<{ className: string; objectId: string }>;

/**
 * Include levels' statements. Every class of a level is read in one statement: the (class, id) pairs bound as a
 * relation (dialect.refRows), each probed through the primary key (CROSS JOIN: the pairs first on SQLite too), its
 * rows as arrays for the pages' seam (SqlStore.foundJsonTuples), the class last. Its text and other parameters follow
 * from the application and the readers alone, so they are built once for those (Kysely: ~10 µs a level) and only the
 * pairs are bound anew; kept only when the pairs' parameters come first, as they are built.
 * test/include-pages.test.ts reads one page as three reader sets (fails when a statement is kept for other readers).
 */
export class IncludeLevelStatements {
  /** By application and readers; null: built afresh each time (the pairs' parameters did not come first). */
  private readonly known = new Map<string, { sql: string; rest: readonly unknown[] } | null>();

  constructor(
    private readonly db: Kysely<any>,
    private readonly dialect: SqlDialect,
  ) {}

  statement(appId: string, refs: LevelRefs, readers: Readers): CompiledQuery {
    const { rows, parameters } = this.dialect.refRows(refs);
    const key = `${appId}\u0000${JSON.stringify(readers)}`;
    const known = this.known.get(key);
    if (known) return CompiledQuery.raw(known.sql, [...parameters, ...known.rest]);
    const statement = this.dialect
      .reusedShape(
        sql`SELECT ${objectJsonColumns(this.dialect)}, o.class_name AS class_name FROM ${rows()}
      CROSS JOIN objects o WHERE o.app_id = ${appId} AND o.class_name = t.v AND o.id = t.v2
      AND ${readableSql(this.dialect, appId, readers)}`,
      )
      .compile(this.db);
    if (known === undefined) {
      if (this.known.size >= 1000) this.known.clear();
      const kept = parameters.every((parameter, i) => statement.parameters[i] === parameter);
      this.known.set(key, kept ? { sql: statement.sql, rest: statement.parameters.slice(parameters.length) } : null);
    }
    return statement;
  }
}
