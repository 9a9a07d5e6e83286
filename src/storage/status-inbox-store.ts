/** One entry of an inbox: the status and its number in that inbox. */
export interface InboxEntry {
  messageId: number;
  statusId: string;
}

export interface InboxKey {
  appId: string;
  owner: string;
  inboxType: string;
}

/**
 * Users' status inboxes. Each inbox numbers its entries 1, 2, … in the order they arrive; `read` is
 * the highest number its owner has read (or reset), so the unread are the ones above it.
 */
export interface StatusInboxStore {
  /** Puts the status in the inbox of `inboxType` of each owner (each owner once), numbered after its last entry. */
  deliver(appId: string, statusId: string, inboxType: string, owners: readonly string[]): Promise<void>;
  /** Entries newest first with sinceId < messageId (and messageId <= maxId when maxId > 0). */
  page(inbox: InboxKey, range: { sinceId: number; maxId: number; limit: number }): Promise<InboxEntry[]>;
  /** How many entries the inbox holds, and how many of them are above what was read. */
  count(inbox: InboxKey): Promise<{ total: number; unread: number }>;
  /** Marks the inbox read up to `messageId` (null: up to its last entry); never moves backwards. */
  markRead(inbox: InboxKey, messageId: number | null): Promise<void>;
  /** Removes one entry; false when there was none. */
  removeEntry(inbox: InboxKey, messageId: number): Promise<boolean>;
  /** Removes the status from every inbox it was put in. */
  removeStatus(appId: string, statusId: string): Promise<void>;
}
