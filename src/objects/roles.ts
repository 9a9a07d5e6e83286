import { ApiError, fail } from '../lib/errors.ts';
import type { WriteBody } from './service.ts';
import type { StoredObject } from './types.ts';

export const roleClass = '_Role';

/**
 * A role's name: letters, digits, '_', '-' and space, as the SDKs check it before sending
 * (`^[0-9a-zA-Z\-_ ]+$`, the JS SDK's Role#validate; the docs list only letters, digits and '_'),
 * so every name an SDK lets through is stored. At most 128 characters: the longest `role:<name>`
 * an ACL accepts (src/objects/acl.ts).
 */
const roleNamePattern = /^[0-9A-Za-z_ -]{1,128}$/;

/** The name a role write sets, undefined when it leaves `name` alone; refuses any other change of it (139). */
function nameSet(body: WriteBody): string | undefined {
  let name: string | undefined;
  for (const op of body.operations) {
    if (op.path[0] !== 'name') continue;
    if (op.kind !== 'set' || op.path.length !== 1 || typeof op.value !== 'string' || !roleNamePattern.test(op.value)) {
      fail('invalidRoleName');
    }
    name = op.value;
  }
  return name;
}

/**
 * A new role needs a valid name and an ACL, under the master key too: the ACL decides who may change
 * the role's members, and without one a role would get the class default (public write in a new app),
 * letting any client add itself to it (docs/compatibility.md, "Roles").
 */
export function checkRoleCreate(body: WriteBody): void {
  if (nameSet(body) === undefined) fail('invalidRoleName');
  if (body.acl === undefined) fail('roleAclRequired');
}

/** A role's name is set once: an update may send it again unchanged, never another one (139). */
export function roleNameGuard(body: WriteBody): ((current: StoredObject) => ApiError | null) | undefined {
  const name = nameSet(body);
  if (name === undefined) return undefined;
  return (current) => (current.data.name === name ? null : new ApiError('roleNameImmutable'));
}
