import type { FieldType } from '../storage/schema-store.ts';
import type { Where } from './types.ts';

/** Whether the where holds an $inQuery anywhere (its subqueries' wheres included). */
export function hasInQuery(where: Where): boolean {
  switch (where.op) {
    case 'and':
    case 'or':
      return where.items.some(hasInQuery);
    case 'not':
      return hasInQuery(where.item);
    case 'inQuery':
      return true;
    case 'select':
      return hasInQuery(where.query.where);
    default:
      return false;
  }
}

/**
 * Marks each $inQuery on a field its class's schema types Array (`inArray`): the hosted service matched
 * an array of pointers when any element pointed at one of the subquery's matches, and the store reads
 * arrays otherwise than a single pointer (so a pointer field's $inQuery keeps its index-driven form).
 * Nested paths are left as pointers: the schema types top-level fields only.
 */
export function markArrayInQueries(where: Where, className: string, typesOf: (className: string) => ReadonlyMap<string, FieldType>): Where {
  const mark = (node: Where, types: ReadonlyMap<string, FieldType>): Where => {
    switch (node.op) {
      case 'and':
      case 'or':
        return { op: node.op, items: node.items.map((item) => mark(item, types)) };
      case 'not':
        return { op: 'not', item: mark(node.item, types) };
      case 'inQuery':
      case 'select': {
        const query = { ...node.query, where: mark(node.query.where, typesOf(node.query.className)) };
        const inArray = node.op === 'inQuery' && node.path.length === 1 && types.get(node.path[0])?.type === 'Array';
        return inArray ? { ...node, query, inArray } : { ...node, query };
      }
      default:
        return node;
    }
  };
  return mark(where, typesOf(className));
}
