import type {
  JobView,
  MailboxMessage,
  NewPush,
  NotificationRecord,
  PageResult,
  PageWork,
  RoutePage,
} from '../push/types.ts';

export type CreatePushOutcome =
  | { created: true; record: NotificationRecord }
  /** The req_id was used within the dedupe window: this is the first record. */
  | { created: false; record: NotificationRecord }
  /** A scheduled push while the application already has `scheduleCap` pushes waiting: nothing is stored. */
  | { created: false; refused: 'scheduleCap' };

/** A page's key range, claimed by one worker: it routes (fills) the page next, then delivers it. */
export interface PageClaim {
  appId: string;
  notificationId: string;
  seq: number;
}

export type ClaimedPage =
  | { kind: 'page'; page: PageClaim; last: boolean }
  /** The job had no installations left to page: it is fully paged without a new page. */
  | { kind: 'paged'; job: JobView }
  /** The job expired before it was fully paged; it was closed. */
  | { kind: 'expired'; job: JobView }
  /**
   * Selecting the job's installations failed, and not for want of the database (a where the database
   * refuses, a stored selector this version cannot read): the job was closed with the error counted in
   * its record, since trying it again would fail again and hold every job behind it. `error` is for the log.
   */
  | { kind: 'failed'; job: JobView; error: unknown };

/** Delivery receipts a maker posted for one notification (SPEC §6), keyed by the notification id only. */
export interface ReceiptUpdate {
  notificationId: string;
  /** Counters to add to the record (push_counts keys). */
  counts: Record<string, number>;
  /** Registration ids the maker says are no longer valid: their installations get `valid: false`. */
  invalidTokens: string[];
}

export interface AckEntry {
  appId: string;
  installationId: string;
  notificationId: string;
}

/**
 * The storage verbs of push (src/push). Each verb is one transaction. A fan-out job is cut into
 * pages of consecutive installation keys: claiming a page's key range is short and happens one
 * after another under the job's lock; routing (filling) the claimed pages and delivering them
 * run in parallel, in any number of workers and processes. A page is routed once and its lease
 * lets another worker finish it when its worker dies, so nothing is lost or sent twice.
 */
export interface PushStore {
  createPush(push: NewPush): Promise<CreatePushOutcome>;
  getNotification(appId: string, objectId: string): Promise<NotificationRecord | null>;
  listNotifications(appId: string, options: { limit: number; skip: number }): Promise<NotificationRecord[]>;
  deleteNotification(appId: string, objectId: string): Promise<boolean>;

  /**
   * Claims the key range of the next page (at most pageSize installations) of a due job, skipping
   * jobs another worker holds, leased to the caller until now + leaseMs. Null when no job has work.
   */
  claimPage(options: { now: number; pageSize: number; leaseMs: number }): Promise<ClaimedPage | null>;
  /**
   * Routes a claimed page with `route` (given the app's mixedPush switch as it is now) and commits
   * the routing: own-channel devices into their mailboxes, maker targets into the page. Null when
   * there is nothing to deliver (no device matched, or the page is gone or already routed).
   */
  fillPage(page: PageClaim, options: { now: number; route: RoutePage }): Promise<PageWork | null>;
  /** A page whose lease ran out (its worker died): leased again to the caller, routed first if it was not. */
  claimStalePage(options: { now: number; leaseMs: number; route: RoutePage }): Promise<PageWork | null>;
  /** Records the outcome of a page's delivery and closes the job when it was the last. */
  finishPage(result: PageResult, now: number): Promise<void>;
  /** Closes fully paged jobs whose pages are all delivered (a safety net for concurrent last pages). */
  closeFinished(now: number): Promise<number>;

  /** Adds to a record's counters (an error reason, a pause); false when the record is gone. */
  recordCounts(appId: string, notificationId: string, counts: Record<string, number>): Promise<boolean>;
  /**
   * Applies a maker's receipts: counters on each known record, and `valid: false` on the
   * installations of that record's app whose vendor is `vendor` and whose registrationId is a
   * listed token. Receipts for unknown notifications are ignored.
   */
  applyReceipts(vendor: string, updates: ReceiptUpdate[], now: number): Promise<{ notifications: number; invalidated: number }>;

  /** The newest `limit` messages waiting for one device, oldest first. */
  mailbox(appId: string, installationId: string, now: number, limit: number): Promise<MailboxMessage[]>;
  /** Marks messages delivered; counts each first acknowledgement in its record. */
  ack(entries: AckEntry[], now: number): Promise<number>;
  /**
   * Drops expired mailbox rows, the oldest waiting messages of a device past its newest `mailboxLimit`,
   * delivered pages, old maker failures and old dedupe keys.
   */
  prune(now: number, keepAckedMs: number, mailboxLimit: number): Promise<void>;
}
