import { ApiError } from '../lib/errors.ts';
import { dictionary } from '../lib/lookup.ts';
import type { Acl, Condition, Readers, Where } from './types.ts';
import { isObject } from './values.ts';

/** Who is asking: the application, whether the master key was used, and the signed-in user. */
export interface Caller {
  appId: string;
  master: boolean;
  userId: string | null;
}

const principalPattern = /^(\*|[A-Za-z0-9_-]{1,64}|role:[A-Za-z0-9_ -]{1,128})$/;

/** Validates an ACL from a request; false permissions are dropped, as only true grants anything. */
export function parseAcl(value: unknown): Acl | ApiError {
  if (!isObject(value)) return new ApiError('invalidAcl', 'Invalid ACL: it must be an object.');
  // Principals are request text (an imported line may even say '__proto__'): a map without a prototype.
  const acl: Acl = dictionary();
  for (const [principal, permission] of Object.entries(value)) {
    if (!principalPattern.test(principal)) return new ApiError('invalidAcl', `Invalid ACL key '${principal}'.`);
    if (!isObject(permission)) return new ApiError('invalidAcl', `Invalid ACL permission for '${principal}'.`);
    const granted: { read?: boolean; write?: boolean } = {};
    for (const [name, flag] of Object.entries(permission)) {
      if ((name !== 'read' && name !== 'write') || typeof flag !== 'boolean') {
        return new ApiError('invalidAcl', `Invalid ACL permission '${name}' for '${principal}'.`);
      }
      if (flag) granted[name] = true;
    }
    if (granted.read || granted.write) acl[principal] = granted;
  }
  return acl;
}

export function readersFor(caller: Caller): Readers {
  if (caller.master) return null;
  return caller.userId ? ['*', caller.userId] : ['*'];
}

/**
 * Whether the caller may read or write under the ACL: true or false, or 'roles' when only `role:<name>` entries
 * could grant it and the caller's role names (`roles`) have not been read: reading them is left to the
 * requests that need it (ObjectService), so one needs no more than its own statements otherwise.
 */
export function access(acl: Acl | null, caller: Caller, roles: ReadonlySet<string> | undefined, right: 'read' | 'write'): boolean | 'roles' {
  if (caller.master || acl === null) return true;
  if (acl['*']?.[right]) return true;
  if (caller.userId === null) return false;
  if (acl[caller.userId]?.[right] === true) return true;
  const granting = Object.keys(acl).filter((principal) => principal.startsWith(rolePrefix) && acl[principal][right] === true);
  if (granting.length === 0) return false;
  if (roles === undefined) return 'roles';
  return granting.some((principal) => roles.has(principal.slice(rolePrefix.length)));
}

export function writeAccess(acl: Acl | null, caller: Caller, roles: ReadonlySet<string> | undefined): boolean | 'roles' {
  return access(acl, caller, roles, 'write');
}

const rolePrefix = 'role:';

/** A write's `where`, to be evaluated with the caller's read rights (see Condition). */
export function conditionFor(caller: Caller, where: Where | undefined): Condition | undefined {
  return where === undefined ? undefined : { where, readers: readersFor(caller) };
}
