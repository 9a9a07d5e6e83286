import { fail } from '../lib/errors.ts';
import { masterCallerOf, type QueryCaller } from '../objects/query-reach.ts';
import { parseWhereParam } from '../objects/query.ts';
import { parseWriteBody, type ObjectService } from '../objects/service.ts';
import { checkClassName, checkText, isObject, userPointer } from '../objects/values.ts';
import type { StoredObject, Where } from '../objects/types.ts';
import type { InboxKey, StatusInboxStore } from '../storage/status-inbox-store.ts';

/** Most inboxes one status reaches: the delivery runs within the request. */
export const maxRecipients = 100_000;
/** Inbox entries read for one page: a where that matches few statuses stops here, with `end` false. */
const maxScanned = 5_000;

/** What POST /1.1/statuses takes: the recipients' query, the status's fields and its inbox type. */
export interface StatusMessage {
  query?: unknown;
  data?: unknown;
  inboxType?: unknown;
}

export interface InboxPage {
  statuses: Array<{ status: StoredObject; messageId: number }>;
  /** True when the inbox holds nothing further in this direction. */
  end: boolean;
}

function inboxTypeOf(value: unknown): string {
  if (value === undefined || value === null) return 'default';
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(value)) fail('invalidJson', 'inboxType is a name of letters, digits, _ and -.');
  return value;
}

/**
 * Status messages, as the hosted service had them (`AV.Status`): a status is a `_Status` object; sending
 * it puts it in the inbox of each user its query reaches (the sender's followers, or users found by a
 * query), numbered in each inbox. A status of the `default` inbox is readable by anyone through
 * /1.1/classes/_Status (the SDK's statusQuery); one of another type (a private message) by its sender only,
 * and its recipients read it in their inboxes.
 */
export class Statuses {
  private readonly objects: ObjectService;
  private readonly inboxes: StatusInboxStore;

  constructor(options: { objects: ObjectService; inboxes: StatusInboxStore }) {
    this.objects = options.objects;
    this.inboxes = options.inboxes;
  }

  /** Sends a status from the caller's user (the master key may name any `source`); the saved `_Status`. */
  async send(caller: QueryCaller, message: StatusMessage): Promise<StoredObject> {
    if (!caller.master && !caller.userId) fail('sessionMissing', 'A status is sent by a signed-in user.');
    if (!isObject(message.query)) fail('invalidJson', 'query must be {"className", "where", "keys"?}: whose inboxes the status goes to.');
    if (message.data !== undefined && !isObject(message.data)) fail('invalidJson', 'data must be a JSON object: the status.');
    const inboxType = inboxTypeOf(message.inboxType);
    const master = masterCallerOf(caller.app);
    const recipients = await this.recipients(master, message.query);
    const data = { ...((message.data ?? {}) as Record<string, unknown>) };
    if (!caller.master || data.source === undefined) data.source = userPointer(caller.userId ?? '');
    const source = (data.source as { objectId?: unknown }).objectId;
    const readers = inboxType === 'default' ? { '*': { read: true } } : {};
    const acl = typeof source === 'string' && source !== '' ? { ...readers, [source]: { read: true, write: true } } : readers;
    const status = await this.objects.create(master, '_Status', parseWriteBody({ ...data, inboxType, ACL: acl }));
    try {
      await this.inboxes.deliver(caller.appId, status.objectId, inboxType, recipients);
    } catch (error) {
      // The delivery is one transaction that stored nothing: the status goes too, so the sender's retry is not a
      // second copy beside one that reached no inbox.
      await this.objects.remove(master, '_Status', status.objectId).catch(() => undefined);
      throw error;
    }
    return status;
  }

  /**
   * The users a status goes to: `_User` objects the query finds, or the users the field `keys` points to
   * in the objects of another class it finds (`_Follower` with keys `follower`: the sender's followers).
   * The query runs with the master key: it chooses inboxes, and its results are never shown.
   */
  private async recipients(master: QueryCaller, query: Record<string, unknown>): Promise<string[]> {
    const { className, keys } = query;
    if (typeof className !== 'string') fail('invalidJson', 'query.className names the class the recipients are found in.');
    checkClassName(className);
    const field = className === '_User' ? null : typeof keys === 'string' && keys !== '' ? keys.split(',')[0] : null;
    if (className !== '_User' && field === null) fail('invalidJson', 'query.keys names the field pointing at the recipients.');
    const where = parseWhereParam(query.where === undefined ? '{}' : JSON.stringify(query.where));
    if ((await this.objects.count(master, className, where)) > maxRecipients) {
      fail('invalidQuery', `A status reaches at most ${maxRecipients} inboxes.`);
    }
    const owners: string[] = [];
    let after = '';
    for (;;) {
      const page = await this.objects.find(master, className, {
        where: after === '' ? where : { op: 'and', items: [where, parseWhereParam(JSON.stringify({ objectId: { $gt: after } }))] },
        order: [{ path: ['objectId'], descending: false }],
        limit: 1000,
        skip: 0,
      });
      for (const object of page) {
        if (field === null) owners.push(object.objectId);
        else {
          const target = (object.data as Record<string, unknown>)[field];
          if (isObject(target) && target.__type === 'Pointer' && target.className === '_User' && typeof target.objectId === 'string') owners.push(target.objectId);
        }
      }
      if (page.length < 1000) return owners;
      after = page[page.length - 1].objectId;
    }
  }

  /** The inbox of `owner` (the caller's user when absent) as the caller may see it: another user's reads as empty. */
  private inboxOf(caller: QueryCaller, owner: unknown, inboxType: unknown): InboxKey & { own: boolean } {
    const ownerId = ownerIdOf(owner) ?? caller.userId;
    if (ownerId === null) fail('sessionMissing', 'Name the inbox owner, or sign in.');
    return { appId: caller.appId, owner: ownerId, inboxType: inboxTypeOf(inboxType), own: caller.master || caller.userId === ownerId };
  }

  /**
   * A page of an inbox, newest first: entries numbered above sinceId and (maxId > 0) up to maxId whose
   * status matches `where`. Reading one's own inbox marks what it read as read. Another user's inbox
   * reads as empty, as the hosted service answered the SDK's test of it (200, no results): what a user
   * was sent is never shown to others.
   */
  async inbox(caller: QueryCaller, params: { owner: unknown; inboxType: unknown; sinceId: number; maxId: number; limit: number; where: Where }): Promise<InboxPage> {
    const inbox = this.inboxOf(caller, params.owner, params.inboxType);
    if (!inbox.own || params.limit === 0) return { statuses: [], end: !inbox.own };
    const master = masterCallerOf(caller.app);
    const statuses: InboxPage['statuses'] = [];
    let maxId = params.maxId;
    let scanned = 0;
    for (;;) {
      const entries = await this.inboxes.page(inbox, { sinceId: params.sinceId, maxId, limit: params.limit });
      scanned += entries.length;
      if (entries.length > 0) {
        const ids = entries.map((entry) => entry.statusId);
        const found = await this.objects.find(master, '_Status', {
          where: { op: 'and', items: [params.where, parseWhereParam(JSON.stringify({ objectId: { $in: ids } }))] },
          order: [],
          limit: ids.length,
          skip: 0,
        });
        const byId = new Map(found.map((status) => [status.objectId, status]));
        for (const entry of entries) {
          const status = byId.get(entry.statusId);
          if (status && statuses.length < params.limit) statuses.push({ status, messageId: entry.messageId });
        }
        maxId = entries[entries.length - 1].messageId - 1;
      }
      const end = entries.length < params.limit || maxId <= params.sinceId;
      if (end || statuses.length >= params.limit || scanned >= maxScanned) {
        if (statuses.length > 0) await this.inboxes.markRead(inbox, statuses[0].messageId);
        return { statuses, end: end && statuses.length < params.limit };
      }
    }
  }

  /** How many statuses an inbox holds and how many are unread (anyone may ask: numbers, never the statuses). */
  async count(caller: QueryCaller, owner: unknown, inboxType: unknown): Promise<{ total: number; unread: number }> {
    return this.inboxes.count(this.inboxOf(caller, owner, inboxType));
  }

  /** Marks one's own inbox read. */
  async resetUnread(caller: QueryCaller, owner: unknown, inboxType: unknown): Promise<void> {
    const inbox = this.ownInbox(caller, owner, inboxType);
    await this.inboxes.markRead(inbox, null);
  }

  /** Removes one entry of one's own inbox. */
  async removeFromInbox(caller: QueryCaller, owner: unknown, inboxType: unknown, messageId: number): Promise<void> {
    await this.inboxes.removeEntry(this.ownInbox(caller, owner, inboxType), messageId);
  }

  private ownInbox(caller: QueryCaller, owner: unknown, inboxType: unknown): InboxKey {
    const inbox = this.inboxOf(caller, owner, inboxType);
    if (!inbox.own) fail('sessionMissing', "An inbox is changed by its owner's session or the master key.");
    return inbox;
  }

  /** Deletes a status (its sender, or the master key) and takes it out of every inbox. */
  async remove(caller: QueryCaller, statusId: string): Promise<void> {
    await this.objects.remove(caller, '_Status', statusId);
    await this.inboxes.removeStatus(caller.appId, statusId);
  }
}

/** A user's id from an owner parameter: a Pointer (or its JSON, as the SDK sends it in a query string) or an id. */
export function ownerIdOf(owner: unknown): string | null {
  let value = owner;
  if (typeof value === 'string' && value.startsWith('{')) {
    try {
      value = JSON.parse(value);
    } catch {
      fail('invalidJson', 'owner must be a Pointer to a user.');
    }
  }
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'string') return checkText(value);
  if (isObject(value) && typeof value.objectId === 'string') return checkText(value.objectId);
  fail('invalidJson', 'owner must be a Pointer to a user.');
}
