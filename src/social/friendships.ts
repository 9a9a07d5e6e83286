import { fail } from '../lib/errors.ts';
import { isObject, userPointer } from '../objects/values.ts';
import { masterCallerOf, type QueryCaller } from '../objects/query-reach.ts';
import { parseWhereParam } from '../objects/query.ts';
import { parseWriteBody, type ObjectService } from '../objects/service.ts';
import type { StoredObject } from '../objects/types.ts';

/** The fields a follow's attributes cannot set: they say who follows whom. */
const reserved = new Set(['user', 'follower', 'followee', 'ACL', 'objectId', 'createdAt', 'updatedAt']);

/**
 * Who follows whom, as the hosted service kept it: following `target` is a `_Followee` object of the
 * follower ({user, followee}) and a `_Follower` object of the target ({user, follower}), both with the
 * follow's own attributes (a group, a position) and readable by anyone, so apps query either side with
 * /1.1/classes. Only these verbs (or the master key) write them.
 */
export class Friendships {
  private readonly objects: ObjectService;

  constructor(options: { objects: ObjectService }) {
    this.objects = options.objects;
  }

  /** `userId` follows `targetId` (with the user's session or the master key); following again sets the attributes given. */
  async follow(caller: QueryCaller, who: string, targetId: string, attributes: unknown): Promise<void> {
    const userId = this.admit(caller, who);
    if (attributes !== undefined && attributes !== null && !isObject(attributes)) fail('invalidJson');
    const fields = Object.fromEntries(Object.entries((attributes ?? {}) as Record<string, unknown>).filter(([key]) => !reserved.has(key)));
    const master = masterCallerOf(caller.app);
    const target = await this.objects.get(master, '_User', targetId);
    if (target === null || target === 'noClass') fail('userNotFound');
    const acl = { '*': { read: true } };
    await this.put(master, '_Followee', { user: userPointer(userId), followee: userPointer(targetId) }, { ...fields, ACL: acl });
    await this.put(master, '_Follower', { user: userPointer(targetId), follower: userPointer(userId) }, { ...fields, ACL: acl });
  }

  /** `userId` no longer follows `targetId`; nothing to undo is no error. */
  async unfollow(caller: QueryCaller, who: string, targetId: string): Promise<void> {
    const userId = this.admit(caller, who);
    const master = masterCallerOf(caller.app);
    for (const [className, key] of [['_Followee', { user: userPointer(userId), followee: userPointer(targetId) }], ['_Follower', { user: userPointer(targetId), follower: userPointer(userId) }]] as const) {
      for (const found of await this.find(master, className, key)) await this.objects.remove(master, className, found.objectId);
    }
  }

  /** The follower's id (`self`: the session's user), when the caller may act for it. */
  private admit(caller: QueryCaller, who: string): string {
    const userId = who === 'self' && caller.userId ? caller.userId : who;
    if (!caller.master && caller.userId !== userId) fail('sessionMissing');
    return userId;
  }

  private find(master: QueryCaller, className: string, key: Record<string, unknown>): Promise<StoredObject[]> {
    return this.objects.find(master, className, { where: parseWhereParam(JSON.stringify(key)), order: [], limit: 10, skip: 0 });
  }

  /** The one object of `key`, created or given `fields` anew. */
  private async put(master: QueryCaller, className: string, key: Record<string, unknown>, fields: Record<string, unknown>): Promise<void> {
    const [found, ...extra] = await this.find(master, className, key);
    if (!found) {
      // The attributes first, then who follows whom, as the hosted service's objects read (R:…/_Followee query).
      await this.objects.create(master, className, parseWriteBody({ ...fields, ...key }));
      return;
    }
    await this.objects.update(master, className, found.objectId, parseWriteBody(fields));
    for (const duplicate of extra) await this.objects.remove(master, className, duplicate.objectId);
  }
}
