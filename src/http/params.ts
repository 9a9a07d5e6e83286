import type { FastifyRequest } from 'fastify';
import { parseKeys, parseLimit, parseOrder, parseSkip, parseWhereParam, type Projection } from '../objects/query.ts';
import type { FindOptions } from '../objects/service.ts';
import type { StoredObject, Where } from '../objects/types.ts';
import type { Caller } from '../objects/acl.ts';
import type { ObjectService } from '../objects/service.ts';
import { parseInclude, type IncludeTree } from '../objects/include.ts';
import { queryParams } from './schema.ts';

export type Query = Record<string, string | string[] | undefined>;

export function queryOf(request: FastifyRequest): Query {
  return (request.query ?? {}) as Query;
}

/** The last value of a repeated query parameter, as most servers read it. */
export function param(query: Query, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? value[value.length - 1] : value;
}

export function flag(query: Query, name: string): boolean {
  const value = param(query, name);
  return value === 'true' || value === '1';
}

export interface ListParams extends FindOptions {
  projection: Projection | null;
  count: boolean;
  returnAcl: boolean;
  include: IncludeTree | null;
}

export function listParams(query: Query): ListParams {
  return {
    where: parseWhereParam(param(query, 'where')),
    order: parseOrder(param(query, 'order')),
    limit: parseLimit(param(query, 'limit')),
    skip: parseSkip(param(query, 'skip')),
    projection: parseKeys(param(query, 'keys')),
    count: flag(query, 'count'),
    returnAcl: flag(query, 'returnACL'),
    include: parseInclude(param(query, 'include')),
  };
}

/** `where` on an update or delete is a condition the object must meet. */
export function conditionOf(query: Query): Where | undefined {
  const raw = param(query, 'where');
  return raw === undefined || raw === '' ? undefined : parseWhereParam(raw);
}

/** The SDKs ask for the saved object back with ?new=true (JS) or ?fetchWhenSave=true (docs, Java). */
export function wantsObjectBack(query: Query): boolean {
  return flag(query, 'new') || flag(query, 'fetchWhenSave');
}

/**
 * Whether a write answers with the saved object: asked for, and readable by the caller under the ACL
 * it has after the write. A writer that may not read it gets the plain answer, never its fields.
 */
export async function sendsObjectBack(query: Query, objects: ObjectService, caller: Caller, saved: StoredObject): Promise<boolean> {
  return wantsObjectBack(query) && (await objects.mayRead(caller, saved.acl));
}

/** The query parameters listParams reads (find; get reads keys, include and returnACL of them). */
const listNames = ['where', 'order', 'limit', 'skip', 'keys', 'count', 'returnACL', 'include'];
export const listQuery = queryParams(...listNames);
/** A class's find: redirectClassNameForKey is the SDKs' relation.query() (src/http/routes/classes.ts). */
export const findQuery = queryParams(...listNames, 'redirectClassNameForKey');
/** What a create reads: wantsObjectBack's flags, and failOnNotExist for a _User's authData sign-in. */
export const createQuery = queryParams('new', 'fetchWhenSave', 'failOnNotExist');
/** What an update reads: conditionOf's where, wantsObjectBack's flags and returnACL; a delete reads the where alone. */
export const updateQuery = queryParams('where', 'new', 'fetchWhenSave', 'returnACL');
export const deleteQuery = queryParams('where');
