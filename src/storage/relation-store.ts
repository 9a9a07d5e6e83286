import type { RelationClassClash } from '../objects/types.ts';
import type { ObjectRef } from './store.ts';

/**
 * What one write does to one relation of the object it writes: members added, then members removed
 * (the JS SDK sends both in one `Batch`), all of `targetClass`.
 */
export interface RelationChange {
  key: string;
  targetClass: string;
  add: readonly string[];
  remove: readonly string[];
}

export type RelationOutcome = { ok: true } | RelationClassClash;

/** A relation's target objects: the class (fixed per field) and their ids. */
export interface RelationTargets {
  className: string;
  objectIds: readonly string[];
}

/**
 * Relations between objects (`AddRelation`/`RemoveRelation`, `$relatedTo`), kept as one row per member,
 * not in the owner's fields, so a relation of any size reads a page through an index. Which fields of a
 * class are relations, and the class each points to, is fixed when a field is first written.
 * Object writes carry their relation changes in the same transaction (Store.insertObject/updateObject);
 * deleting an object deletes the rows it owns and the rows that name it as a member.
 */
export interface RelationStore {
  /** Adds and removes members of the owner's relations; already members stay once, absent ones are no change. */
  change(owner: ObjectRef, changes: readonly RelationChange[]): Promise<RelationOutcome>;
  /** Members of one relation (ids in id order, at most `limit`), whether or not the targets still exist. */
  members(owner: ObjectRef, key: string, limit: number): Promise<string[]>;
  /** Ids of the objects of `ownerClass` whose relation `key` holds any of the targets, in id order. */
  owners(appId: string, ownerClass: string, key: string, targets: RelationTargets): Promise<string[]>;
  /** The relation fields of a class and the class each points to ({} when it has none). */
  keysOf(appId: string, className: string): Promise<Record<string, string>>;
}
