import { ApiError, fail } from '../lib/errors.ts';
import { dictionary, own } from '../lib/lookup.ts';
import { parseAcl } from './acl.ts';
import type { Acl } from './types.ts';
import { builtInClasses, classNamePattern } from './values.ts';

/**
 * The ACL an object gets when its create sends none, per class, as the hosted console set it
 * (setting `classDefaultACL`). The principal `creator` stands for the user whose session creates
 * the object (for `_User`: the new user itself); created without a session, it grants nothing.
 * The ACL is stored on the object, as the hosted service stored it, so `returnACL` shows it.
 */
export type ClassDefaultAcls = Record<string, Acl>;

export const creatorPrincipal = 'creator';
/** The hosted service's limit of classes an app may have. */
export const maxClassDefaultAcls = 500;

const everyone: Acl = { '*': { read: true, write: true } };
/** Users: everyone reads, only the user writes (writes need the user's session or the master key anyway). */
const builtInDefaults: Readonly<Record<string, Acl>> = { _User: { '*': { read: true }, [creatorPrincipal]: { read: true, write: true } } };

/** The ACL a new object of `className` starts with when its create names none. */
export function defaultAclFor(configured: ClassDefaultAcls | undefined, className: string, creatorId: string | null): Acl {
  const template = own(configured, className) ?? own(builtInDefaults, className) ?? everyone;
  const acl: Acl = dictionary();
  for (const [principal, granted] of Object.entries(template)) {
    const who = principal === creatorPrincipal ? creatorId : principal;
    if (who === null) continue;
    acl[who] = { ...acl[who], ...granted };
  }
  return acl;
}

const shape = 'classDefaultACL must be an object: { <ClassName>: <ACL, where "creator" is the creating user> | null }';

/** A settings change: each class's ACL replaced whole, null restores the built-in default. */
export function validateClassDefaultAcls(value: unknown, current: ClassDefaultAcls): ClassDefaultAcls {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('incorrectType', `${shape}.`);
  const next: ClassDefaultAcls = dictionary(current);
  for (const [className, acl] of Object.entries(value)) {
    if (!classNamePattern.test(className) && !builtInClasses.has(className)) {
      fail('invalidClassName', `classDefaultACL: invalid class name '${className}'.`);
    }
    if (acl === null) {
      delete next[className];
      continue;
    }
    const parsed = parseAcl(acl);
    if (parsed instanceof ApiError) fail('invalidAcl', `classDefaultACL.${className}: ${parsed.message}`);
    next[className] = parsed;
  }
  if (Object.keys(next).length > maxClassDefaultAcls) fail('incorrectType', `classDefaultACL holds at most ${maxClassDefaultAcls} classes.`);
  return next;
}
