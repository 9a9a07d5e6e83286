import { sql, type Kysely } from 'kysely';
import type { Readers } from '../../objects/types.ts';
import type { RoleStore } from '../role-store.ts';
import type { Sql, SqlDialect } from './dialect.ts';

/**
 * The users a reader list names: its principals other than '*' and 'role:<name>' (src/objects/acl.ts,
 * readersFor). Each also reads with the roles it belongs to.
 */
export function membersOf(readers: readonly string[]): string[] {
  return readers.filter((principal) => principal !== '*' && !principal.startsWith('role:'));
}

/**
 * `SELECT principal`: 'role:<name>' of every role the users whose ids `isMember` accepts (a condition on
 * `r.target_id`) belong to, directly (the role's `users` relation) or through a role of it, at any depth
 * (a role whose `roles` relation holds a role already found: reference §6, "add Administrators to
 * Moderators.roles"). UNION keeps each role once, so a cycle ends. Read from the relation rows
 * (migration 0005) through relations_target_idx, one probe a level; role names from the `_Role` rows.
 * Nothing is cached between statements: a member removed is no member in the next statement, on every node.
 */
export function rolePrincipals(dialect: SqlDialect, appId: Sql, isMember: (targetId: Sql) => Sql): Sql {
  return sql`WITH RECURSIVE member_roles(id) AS (
      SELECT r.owner_id FROM relations r WHERE r.app_id = ${appId} AND r.target_class = '_User'
        AND ${isMember(sql.ref('r.target_id'))} AND r.owner_class = '_Role' AND r.key = 'users'
      UNION
      SELECT r.owner_id FROM relations r JOIN member_roles m ON r.target_id = m.id
      WHERE r.app_id = ${appId} AND r.target_class = '_Role' AND r.owner_class = '_Role' AND r.key = 'roles')
    SELECT 'role:' || ${dialect.jsonField(sql`ro.data`, 'name')} AS principal FROM member_roles m
    JOIN objects ro ON ro.app_id = ${appId} AND ro.class_name = '_Role' AND ro.id = m.id`;
}

/**
 * The ACL rule of a read: the row's readers share a principal with `readers`, or with the roles of the
 * users among them (resolved inside the same statement, only for rows the principals do not already
 * grant: dialect.readableBy). null readers (the master key) read everything.
 */
export function readableSql(dialect: SqlDialect, appId: string, readers: Readers): Sql {
  if (readers === null) return sql`1=1`;
  const members = membersOf(readers);
  if (members.length === 0) return dialect.readableBy(readers, null);
  const isMember = (targetId: Sql) =>
    members.length === 1 ? sql`${targetId} = ${members[0]}` : dialect.columnIn(targetId, 'string', members);
  return dialect.readableBy(readers, dialect.memberRoles(appId, members) ?? rolePrincipals(dialect, sql`${appId}`, isMember));
}

export class SqlRoleStore implements RoleStore {
  private readonly db: Kysely<any>;
  private readonly dialect: SqlDialect;

  constructor(options: { db: Kysely<any>; dialect: SqlDialect }) {
    this.db = options.db;
    this.dialect = options.dialect;
  }

  async rolesOf(appId: string, userId: string): Promise<string[]> {
    const statement = rolePrincipals(this.dialect, sql`${appId}`, (targetId) => sql`${targetId} = ${userId}`);
    const { rows } = await sql<{ principal: string | null }>`${statement}`.execute(this.db);
    return rows.flatMap((row) => (typeof row.principal === 'string' ? [row.principal.slice('role:'.length)] : [])).sort();
  }
}
