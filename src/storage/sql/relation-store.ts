import { sql, type Kysely } from 'kysely';
import type { ObjectRef } from '../store.ts';
import type { RelationClassClash } from '../../objects/types.ts';
import type { RelationChange, RelationOutcome, RelationStore, RelationTargets } from '../relation-store.ts';
import type { Sql, SqlDialect } from './dialect.ts';

/**
 * The relation rows (migration 0005): `relations` holds one row per member; the target class of each
 * relation field is the class schema's (class_fields, migration 0014), its one record. Statements here
 * run inside the caller's transaction when given one, so an object write and its relation changes
 * commit together.
 */

/** The schema's type of a relation field, as src/storage/sql/schema-store.ts keeps types. */
const relationType = (targetClass: string) => JSON.stringify({ type: 'Relation', className: targetClass });

/**
 * Fixes the field as a relation to `targetClass` if the class has no such field yet; the class in
 * force afterwards (the field's type name when a write of another type got there first).
 */
async function declareKey(db: Kysely<any>, appId: string, className: string, key: string, targetClass: string): Promise<string> {
  await sql`INSERT INTO class_fields (app_id, class_name, name, type) VALUES (${appId}, ${className}, ${key}, ${relationType(targetClass)})
    ON CONFLICT (app_id, class_name, name) DO NOTHING`.execute(db);
  const { rows } = await sql<{ type: string }>`SELECT type FROM class_fields
    WHERE app_id = ${appId} AND class_name = ${className} AND name = ${key}`.execute(db);
  const kept = JSON.parse(rows[0].type) as { type: string; className?: string };
  return kept.type === 'Relation' && kept.className !== undefined ? kept.className : kept.type;
}

/**
 * Applies the changes in order, each field's class checked (or fixed) first. On a clash the caller
 * must roll back what came before it in the transaction.
 */
export async function applyRelationChanges(
  db: Kysely<any>,
  dialect: SqlDialect,
  owner: ObjectRef,
  changes: readonly RelationChange[],
): Promise<RelationOutcome> {
  const { appId, className, objectId } = owner;
  for (const change of changes) {
    const { key, targetClass } = change;
    const fixed = await declareKey(db, appId, className, key, targetClass);
    if (fixed !== targetClass) return { ok: false, reason: 'relationClass', key, targetClass: fixed };
    if (change.add.length > 0) {
      // WHERE true: SQLite reads `SELECT … ON CONFLICT` as a join constraint without it.
      await sql`INSERT INTO relations (app_id, owner_class, owner_id, key, target_class, target_id)
        SELECT ${appId}, ${className}, ${objectId}, ${key}, ${targetClass}, t.v FROM ${dialect.textRows([[...change.add]])} WHERE true
        ON CONFLICT DO NOTHING`.execute(db);
    }
    if (change.remove.length > 0) {
      await sql`DELETE FROM relations WHERE app_id = ${appId} AND owner_class = ${className} AND owner_id = ${objectId}
        AND key = ${key} AND target_class = ${targetClass}
        AND ${dialect.columnIn(sql.ref('target_id'), 'string', [...change.remove])}`.execute(db);
    }
  }
  return { ok: true };
}

/**
 * What deleting an object does to relations: the rows it owns go, and so do the rows naming it as a
 * member, so a later object with the same id (an import) does not inherit its memberships.
 */
export async function deleteRelationRows(db: Kysely<any>, ref: ObjectRef): Promise<void> {
  await sql`DELETE FROM relations WHERE app_id = ${ref.appId} AND owner_class = ${ref.className} AND owner_id = ${ref.objectId}`.execute(db);
  await sql`DELETE FROM relations WHERE app_id = ${ref.appId} AND target_class = ${ref.className} AND target_id = ${ref.objectId}`.execute(db);
}

/** Thrown inside a transaction to roll it back on a clash; the outcome is its value. */
export class RelationClash extends Error {
  constructor(readonly outcome: RelationClassClash) {
    super('relation class clash');
  }
}

/**
 * The where piece of `$relatedTo` on a query of the target class: the row `o` is a member of the owner's
 * relation. One probe of the primary key per row, so a page in any order reads about `limit` rows.
 */
export function memberOf(owner: { className: string; objectId: string }, key: string): Sql {
  return sql`EXISTS (SELECT 1 FROM relations r WHERE r.app_id = o.app_id AND r.owner_class = ${owner.className}
    AND r.owner_id = ${owner.objectId} AND r.key = ${key} AND r.target_class = o.class_name AND r.target_id = o.id)`;
}

/** The where piece of a reverse query on the owner class: the row `o`'s relation `key` holds any of the targets. */
export function holdsAny(dialect: SqlDialect, key: string, targets: RelationTargets): Sql {
  const ids = targets.objectIds;
  const target = ids.length === 1 ? sql`r.target_id = ${ids[0]}` : dialect.columnIn(sql.ref('r.target_id'), 'string', [...ids]);
  return sql`EXISTS (SELECT 1 FROM relations r WHERE r.app_id = o.app_id AND r.owner_class = o.class_name AND r.owner_id = o.id
    AND r.key = ${key} AND r.target_class = ${targets.className} AND ${target})`;
}

export class SqlRelationStore implements RelationStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async change(owner: ObjectRef, changes: readonly RelationChange[]): Promise<RelationOutcome> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        const outcome = await applyRelationChanges(trx, this.dialect, owner, changes);
        if (!outcome.ok) throw new RelationClash(outcome);
        return outcome;
      });
    } catch (error) {
      if (error instanceof RelationClash) return error.outcome;
      throw error;
    }
  }

  async members(owner: ObjectRef, key: string, limit: number): Promise<string[]> {
    const { rows } = await sql<{ target_id: string }>`SELECT target_id FROM relations
      WHERE app_id = ${owner.appId} AND owner_class = ${owner.className} AND owner_id = ${owner.objectId} AND key = ${key}
      ORDER BY target_id LIMIT ${limit}`.execute(this.db);
    return rows.map((row) => row.target_id);
  }

  async owners(appId: string, ownerClass: string, key: string, targets: RelationTargets): Promise<string[]> {
    if (targets.objectIds.length === 0) return [];
    const { rows } = await sql<{ owner_id: string }>`SELECT DISTINCT owner_id FROM relations
      WHERE app_id = ${appId} AND target_class = ${targets.className}
      AND ${this.dialect.columnIn(sql.ref('target_id'), 'string', [...targets.objectIds])}
      AND owner_class = ${ownerClass} AND key = ${key} ORDER BY owner_id`.execute(this.db);
    return rows.map((row) => row.owner_id);
  }

  async keysOf(appId: string, className: string): Promise<Record<string, string>> {
    const { rows } = await sql<{ name: string; type: string }>`SELECT name, type FROM class_fields
      WHERE app_id = ${appId} AND class_name = ${className}`.execute(this.db);
    const relations: Array<[string, string]> = [];
    for (const row of rows) {
      const type = JSON.parse(row.type) as { type: string; className?: string };
      if (type.type === 'Relation' && type.className !== undefined) relations.push([row.name, type.className]);
    }
    // Sorted here: the databases' collations may order mixed case differently.
    return Object.fromEntries(relations.sort(([a], [b]) => (a < b ? -1 : 1)));
  }
}
