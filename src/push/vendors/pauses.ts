/**
 * When a daily-quota pause ends (DESIGN "Push" 3): a maker that says an application's daily quota
 * is used up is not called for that application and device profile until the next quota day. The
 * pauses themselves are kept by a store (src/storage/quota-pause-store.ts), shared by every node.
 */

/** Makers reset daily quotas at midnight China Standard Time (UTC+8, no daylight saving). */
const chinaOffsetMs = 8 * 3600_000;
const dayMs = 86_400_000;

/** The start of the next quota day after `now`: the next 00:00 in UTC+8. */
export function nextQuotaDay(now: number): number {
  return Math.floor((now + chinaOffsetMs) / dayMs) * dayMs + dayMs - chinaOffsetMs;
}
