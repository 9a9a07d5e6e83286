import { fail } from '../lib/errors.ts';
import { mergeSettings } from '../apps/settings.ts';
import { table } from '../lib/lookup.ts';
import type { Caller } from './acl.ts';
import { wherePaths } from './query.ts';
import type { AppRecord, OrderKey, Where } from './types.ts';

/** A caller of a query: class rules read the application's settings. */
export interface QueryCaller extends Caller {
  app: AppRecord;
}

/** The application acting with its master key: the console's and the server's own writes. */
export function masterCallerOf(app: AppRecord): QueryCaller {
  return { appId: app.appId, master: true, userId: null, app };
}

/** A class a query reads, with the field paths it tests or orders by there. */
export interface ClassRead {
  className: string;
  paths: string[][];
}

/**
 * Every class a query reads: the queried class with the fields its where and order test, then each
 * subquery's class (at any depth) with its own where's, order's and selected key's fields.
 */
export function queryReads(className: string, where: Where, order: OrderKey[] = []): ClassRead[] {
  const reads: ClassRead[] = [];
  const visit = (read: ClassRead, node: Where): void => {
    switch (node.op) {
      case 'and':
      case 'or':
        for (const item of node.items) visit(read, item);
        return;
      case 'not':
        visit(read, node.item);
        return;
      case 'const':
        return;
      case 'inQuery':
      case 'select': {
        read.paths.push(node.path);
        const inner: ClassRead = { className: node.query.className, paths: node.query.order.map((key) => key.path) };
        if (node.op === 'select') inner.paths.push(node.key);
        reads.push(inner);
        visit(inner, node.query.where);
        return;
      }
      default:
        read.paths.push(...wherePaths(node));
    }
  };
  const outer: ClassRead = { className, paths: order.map((key) => key.path) };
  reads.push(outer);
  visit(outer, where);
  return reads;
}

const classPermission = 'Forbidden to find by class permissions.';

/**
 * Who may find in a built-in class, and which of its fields stay out of reach of a filter or an order,
 * whether the class is the one queried or a subquery's: a subquery must not read what a query may not.
 */
const findRules = table<(caller: QueryCaller, paths: string[][]) => void>({
  _User(caller, paths) {
    if (caller.master) return;
    // The hosted words for a class permission; here the setting userQueryPermission (README "Settings").
    if (!mergeSettings(caller.app.settings).userQueryPermission) fail('forbidden', classPermission);
    // authData is never shown to other users, so it must not be probed through a filter or an order either.
    if (paths.some((path) => path[0] === 'authData')) fail('forbidden', 'Only the master key may query or order users by authData.');
  },
  // The hosted service's default class permissions of `_Installation`: find with the master key only.
  _Installation(caller) {
    if (!caller.master) fail('forbidden', classPermission);
  },
});

function check(caller: QueryCaller, reads: ClassRead[]): void {
  for (const read of reads) {
    findRules[read.className]?.(caller, read.paths);
  }
}

/** Refuses a query (403) that reads a class or a field the caller may not find in, its own class's or a subquery's. */
export function checkFind(caller: QueryCaller, className: string, where: Where, order: OrderKey[] = []): void {
  check(caller, queryReads(className, where, order));
}

/** checkFind of a write's condition: only its subqueries' classes (the written class's rules are the write's). */
export function checkConditionReads(caller: QueryCaller, className: string, where: Where | undefined): void {
  if (where !== undefined) check(caller, queryReads(className, where).slice(1));
}
