import type {
  JobView,
  MailboxMessage,
  NewPush,
  NotificationRecord,
  PageResult,
  PageRouting,
  PageWork,
  TargetDevice,
} from '../push/types.ts';

export type CreatePushOutcome =
  | { created: true; record: NotificationRecord }
  /** The req_id was used within the dedupe window: this is the first record. */
  | { created: false; record: NotificationRecord };

export type ClaimedPage =
  | { kind: 'page'; work: PageWork; last: boolean }
  /** The job expired before it was fully paged; it was closed. */
  | { kind: 'expired'; job: JobView };

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
 * The storage verbs of push (src/push). Each verb is one transaction: a page of a fan-out job is
 * read, routed and committed with its cursor, so a worker that dies loses nothing and no page is
 * routed twice, whichever process claims it.
 */
export interface PushStore {
  createPush(push: NewPush): Promise<CreatePushOutcome>;
  getNotification(appId: string, objectId: string): Promise<NotificationRecord | null>;
  listNotifications(appId: string, options: { limit: number; skip: number }): Promise<NotificationRecord[]>;
  deleteNotification(appId: string, objectId: string): Promise<boolean>;

  /**
   * Claims the next page of a due job (skipping jobs another worker holds), routes it with
   * `route` (given the app's current mixedPush switch), and commits the routing, the cursor and
   * a pending page record leased until now + leaseMs. Null when no job has work.
   */
  claimPage(options: {
    now: number;
    pageSize: number;
    leaseMs: number;
    route: (job: JobView, devices: TargetDevice[], settings: { mixedPush: boolean }) => PageRouting;
  }): Promise<ClaimedPage | null>;
  /** A committed page whose lease ran out (its worker died): leased again to the caller. */
  claimStalePage(options: { now: number; leaseMs: number }): Promise<PageWork | null>;
  /** Records the outcome of a page's delivery and closes the job when it was the last. */
  finishPage(result: PageResult, now: number): Promise<void>;
  /** Closes fully paged jobs whose pages are all delivered (a safety net for concurrent last pages). */
  closeFinished(now: number): Promise<number>;

  /** Adds to a record's counters (an error reason, a pause); false when the record is gone. */
  recordCounts(appId: string, notificationId: string, counts: Record<string, number>): Promise<boolean>;
  /**
   * Applies a maker's receipts: counters on each known record, and `valid: false` on the
   * installations of that record's app which were sent through `vendor` with a listed token and
   * still have it. Receipts for unknown notifications are ignored.
   */
  applyReceipts(vendor: string, updates: ReceiptUpdate[], now: number): Promise<{ notifications: number; invalidated: number }>;

  /** Messages waiting for one device, oldest first. */
  mailbox(appId: string, installationId: string, now: number, limit: number): Promise<MailboxMessage[]>;
  /** Marks messages delivered; counts each first acknowledgement in its record. */
  ack(entries: AckEntry[], now: number): Promise<number>;
  /** Drops expired and long-acknowledged mailbox rows and old dedupe keys. */
  prune(now: number, keepAckedMs: number): Promise<void>;
}
