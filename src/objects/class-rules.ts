import type { ApiError } from '../lib/errors.ts';
import { own } from '../lib/lookup.ts';
import { checkRoleCreate, roleClass, roleNameGuard } from './roles.ts';
import type { WriteBody } from './service.ts';
import type { StoredObject } from './types.ts';

/** What a built-in class adds to the rules every object follows; each entry is optional. */
export interface ClassRules {
  /** Checks a create's body before anything is written. */
  checkCreate?(body: WriteBody): void;
  /** A rule of the class an update must meet on the current row, checked after the ACL. */
  updateGuard?(body: WriteBody): ((current: StoredObject) => ApiError | null) | undefined;
}

const rules: Readonly<Record<string, ClassRules>> = {
  [roleClass]: { checkCreate: checkRoleCreate, updateGuard: roleNameGuard },
};

/** The class's own rules; undefined for a class with none (every user class). Read with request text. */
export function classRulesOf(className: string): ClassRules | undefined {
  return own(rules, className);
}
