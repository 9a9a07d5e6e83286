/**
 * Roles as the ACL sees them (reference §6): which roles a user has. Membership itself is relation rows
 * (`_Role.users`, `_Role.roles`: RelationStore); reads resolve a caller's roles inside their own
 * statement, so this verb serves the checks made outside SQL (a write's ACL, src/objects/service.ts).
 */
export interface RoleStore {
  /**
   * The names of the roles the user has, sorted: those whose `users` holds it, and every role whose
   * `roles` holds one of those, at any depth (cycles end). Read fresh on every call.
   */
  rolesOf(appId: string, userId: string): Promise<string[]>;
}
