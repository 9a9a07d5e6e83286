import type { Migration } from './migrate.ts';

/**
 * PostgreSQL: the roles of a read's users (rolePrincipals' rule in src/storage/sql/roles.ts: the roles whose
 * `users` hold one of them, then any role whose `roles` holds a role found, at any depth; UNION ends a cycle) as a
 * function (dialect.memberRoles). Written into each page as a recursive query it was planned with the page at
 * every run: a role-protected page planned in 0.63-0.69 ms and ran in 0.17-0.22; calling this it plans in
 * 0.23 ms and runs in 0.18 (warm, 20,000 objects), as PL/pgSQL keeps its query's plan for the session.
 * A copy of rolePrincipals' query: a change of that rule needs a migration replacing this function
 * (test/storage/roles.conformance.test.ts holds pages to rolesOf's answers). SQLite reads the roles inline.
 */
const memberRoles = `CREATE OR REPLACE FUNCTION roost_member_roles(app text, members text[]) RETURNS SETOF text
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY WITH RECURSIVE member_roles(id) AS (
      SELECT r.owner_id FROM relations r WHERE r.app_id = app AND r.target_class = '_User'
        AND r.target_id = ANY(members) AND r.owner_class = '_Role' AND r.key = 'users'
      UNION
      SELECT r.owner_id FROM relations r JOIN member_roles m ON r.target_id = m.id
      WHERE r.app_id = app AND r.target_class = '_Role' AND r.owner_class = '_Role' AND r.key = 'roles')
    SELECT 'role:' || (ro.data ->> 'name') FROM member_roles m
    JOIN objects ro ON ro.app_id = app AND ro.class_name = '_Role' AND ro.id = m.id;
END
$$`;

export const memberRolesFunction: Migration = { sqlite: [], postgres: [memberRoles] };
