import type { OrderKey, Readers, Where } from '../../objects/types.ts';
import { isTimeField, timeColumnValue } from './builtin-columns.ts';
import type { Value } from './statement-shapes.ts';
import { walkNear } from './geo.ts';

/**
 * A page's query with its values taken out: `key` names everything its statement's text and the way its
 * parameters follow from the values depend on (structure, paths, each value's type), `values` are the
 * equality, $in, range and $relatedTo values in the order the walk meets them, then the users among its
 * readers (StatementShapes learns how its parameters follow from them); `times` the positions of values
 * compared with a time column, each already the whole number of milliseconds the where compares.
 */
export interface PageShape {
  key: string;
  values: Array<string | number>;
  times: number[];
}

/**
 * Walks a where, writing its shape into `key` and taking each shaped value out into `values`, or (given
 * `replace`) putting replace's values back in that order: the same walk both ways, so a shape's values
 * and its probe's line up. A number compared with a time column is taken as the whole number of
 * milliseconds the where compares (timeColumnValue: rounded and clamped), which the where takes back
 * unchanged, so the recipe is learnt from whole-number probes (`times`); one the where makes no row of
 * (a fraction an equality never meets) stays in the key, as a node whose values are not plain scalars
 * does. A $nearSphere's values are the numbers its SQL binds (geo.ts walkNear: its box, cos φ, bounds), not its
 * point, so no recipe derives them. Null for a where whose values are unbounded in number and read through
 * arithmetic (a box's or a polygon's), which no recipe derives.
 */
class ShapeWalk {
  readonly key: string[] = [];
  readonly values: Value[] = [];
  readonly times: number[] = [];
  constructor(private readonly replace?: readonly Value[]) {}

  take(value: Value, kind = typeof value === 'number' ? 'n' : 's'): Value {
    this.values.push(value);
    this.key.push(kind);
    return this.replace ? this.replace[this.values.length - 1] : value;
  }

  where(node: Where): Where | null {
    switch (node.op) {
      case 'and':
      case 'or': {
        this.key.push(`${node.op}(`);
        const items: Where[] = [];
        for (const item of node.items) {
          const walked = this.where(item);
          if (walked === null) return null;
          items.push(walked);
        }
        this.key.push(')');
        return { op: node.op, items };
      }
      case 'not': {
        this.key.push('not(');
        const item = this.where(node.item);
        this.key.push(')');
        return item && { op: 'not', item };
      }
      case 'eq':
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte': {
        if (isTimeField(node.path)) {
          const ms = typeof node.value === 'number' ? timeColumnValue(node.op, node.value) : null;
          if (ms === null) return this.whole(node);
          this.key.push(`${node.op}${JSON.stringify(node.path)}:`);
          this.times.push(this.values.length);
          return { ...node, value: this.take(ms, 't') } as Where;
        }
        if (!isScalar(node.value)) return this.whole(node);
        this.key.push(`${node.op}${JSON.stringify(node.path)}:`);
        return { ...node, value: this.take(node.value) } as Where;
      }
      case 'in':
        // Repeated values stay in the key: a dialect may fold them (SQLite's keys), which a probe of distinct ones would not.
        if (!node.values.every(isScalar) || new Set(node.values).size !== node.values.length || isTimeField(node.path)) return this.whole(node);
        this.key.push(`in${JSON.stringify(node.path)}:`);
        return { ...node, values: (node.values as Value[]).map((value) => this.take(value)) };
      case 'relatedTo':
        this.key.push(`rel${JSON.stringify([node.owner.className, node.key])}:`);
        return { ...node, owner: { className: node.owner.className, objectId: this.take(node.owner.objectId) as string } };
      case 'inQuery':
      case 'select': {
        const { where, ...rest } = node.query;
        this.key.push(`${node.op}${JSON.stringify({ ...node, query: rest })}(`);
        const inner = this.where(where);
        this.key.push(')');
        return inner && ({ ...node, query: { ...node.query, where: inner } } as Where);
      }
      case 'near':
        return walkNear(node, (value) => this.take(value) as number, this.key);
      case 'geoBox':
      case 'geoPolygon':
        return null;
      default:
        return this.whole(node);
    }
  }

  private whole(node: Where): Where {
    this.key.push(JSON.stringify(node));
    return node;
  }
}

const isScalar = (value: unknown): value is Value => typeof value === 'string' || typeof value === 'number';

/** The rest of a page's query that its statement depends on, all of it part of the key. */
export interface PageShapeQuery {
  appId: string;
  className: string;
  readers: Readers;
  where: Where;
  order: OrderKey[];
  limit: number;
  skip: number;
}

/**
 * The readers after the where, the same walk both ways: '*' and `role:` principals stay in the key, each user is
 * a value ('u'), so one user's page and another's are one shape (readersFor: ['*', userId]) rather than a shape a
 * user, each built and learnt again, and together more than the shapes kept.
 */
function walkReaders(walk: ShapeWalk, readers: Readers): Readers {
  if (readers === null) {
    walk.key.push('master');
    return null;
  }
  walk.key.push('readers(');
  const walked = readers.map((principal) => {
    if (principal === '*' || principal.startsWith('role:')) {
      walk.key.push(JSON.stringify(principal));
      return principal;
    }
    return walk.take(principal, 'u') as string;
  });
  walk.key.push(')');
  return walked;
}

/** The shape of a page of `select` (what it reads of each row: part of the key); null for a page not cached (a $within box, a $geoWithin polygon). */
export function pageShape(select: string, query: PageShapeQuery): PageShape | null {
  const walk = new ShapeWalk();
  if (walk.where(query.where) === null) return null;
  walkReaders(walk, query.readers);
  const scope = JSON.stringify([select, query.appId, query.className, query.order, query.limit, query.skip]);
  return { key: `${scope}${walk.key.join(' ')}`, values: walk.values, times: walk.times };
}

/** The query of a page's shape with `values` in place of its own (the same walk as pageShape's). */
export function pageWithValues<Q extends PageShapeQuery>(query: Q, values: readonly Value[]): Q {
  const walk = new ShapeWalk(values);
  const where = walk.where(query.where) as Where;
  return { ...query, where, readers: walkReaders(walk, query.readers) };
}
