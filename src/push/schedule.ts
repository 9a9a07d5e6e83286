import type { Clock } from '../lib/clock.ts';
import { isoDate } from '../lib/clock.ts';
import type { Json, JsonObject } from '../objects/types.ts';
import type { CancelOutcome, PushScheduleStore, ScheduledPush } from '../storage/push-schedule-store.ts';

/** Reference §4.2: how many scheduled pushes may wait at once per application. */
export const scheduledPushCaps = { development: 10, commercial: 1000 };

export function scheduledPushCap(settings: { commercial: boolean }): number {
  return settings.commercial ? scheduledPushCaps.commercial : scheduledPushCaps.development;
}

/** The installation query of a push as one `where`: the request's `channels` folded in, as the hosted service does. */
function targetQuery(request: JsonObject): Json {
  const where = (request.where ?? {}) as JsonObject;
  if (!Array.isArray(request.channels)) return where;
  const channels = { channels: { $in: request.channels } };
  return Object.keys(where).length === 0 ? channels : { $and: [where, channels] };
}

/**
 * One entry of GET /1.1/scheduledPushMessages in the hosted service's shape (reference §4.2):
 * `expire_time` is when the job leaves the queue and starts sending (its push_time, in ms);
 * `push_msg.id` is the `_Notification` objectId; `sort` is the order installations are paged in.
 */
export function scheduledPushToWire(job: ScheduledPush): JsonObject {
  const notificationId = typeof job.request.notificationId === 'string' ? job.request.notificationId : null;
  return {
    id: job.id,
    expire_time: job.pushTime,
    push_msg: {
      'app-id': job.appId,
      where: { query: targetQuery(job.request), sort: { objectId: 1 } },
      prod: (job.request.prod as Json) ?? 'prod',
      'api-version': '1.1',
      msg: job.content.data,
      id: job.notificationId,
      notificationId,
    },
    createdAt: isoDate(job.createdAt),
  };
}

/** Scheduled pushes as the HTTP layer sees them: the queue and cancelling a job that has not started. */
export class PushSchedule {
  private readonly store: PushScheduleStore;
  private readonly clock: Clock;

  constructor(options: { store: PushScheduleStore; clock: Clock }) {
    this.store = options.store;
    this.clock = options.clock;
  }

  list(appId: string): Promise<ScheduledPush[]> {
    return this.store.list(appId);
  }

  cancel(appId: string, id: number): Promise<CancelOutcome> {
    return this.store.cancel(appId, id, this.clock.now());
  }
}
