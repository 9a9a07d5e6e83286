import type { JsonObject } from '../objects/types.ts';
import type { PushContent } from '../push/types.ts';

/**
 * A push waiting for its push_time that no worker has started. `id` is the number the scheduled
 * job got when it was accepted: it never changes and is never given to another job.
 */
export interface ScheduledPush {
  id: number;
  appId: string;
  notificationId: string;
  createdAt: number;
  pushTime: number;
  expiresAt: number | null;
  /** The request as the notification record shows it (where, channels, prod, notificationId, …). */
  request: JsonObject;
  content: PushContent;
}

/** `started`: the job began sending (or ended) before it could be cancelled. */
export type CancelOutcome = 'cancelled' | 'started' | 'unknown';

/**
 * The queue of scheduled pushes (GET/DELETE /1.1/scheduledPushMessages). Jobs enter it when
 * PushStore.createPush stores a push whose status is `scheduled`, under the application's cap.
 */
export interface PushScheduleStore {
  /** The application's scheduled pushes not started yet, by id. */
  list(appId: string): Promise<ScheduledPush[]>;
  /**
   * Cancels a scheduled push that has not started: its record stays, with status `cancelled`, and no
   * worker will send it. One statement against the worker's claim, so a job is either sent or cancelled.
   */
  cancel(appId: string, id: number, now: number): Promise<CancelOutcome>;
}
