import type { VersionInterval } from '../storage/leaderboard-store.ts';

const dayMs = 86_400_000;
/**
 * Versions change at midnight Beijing time (UTC+8), as the hosted service's did: a weekly board created
 * on Thursday 2019-09-19 answered `expiredAt` 2019-09-22T16:00:00.000Z, Monday 00:00 at UTC+8
 * (the JavaScript SDK's recordings, Leaderboard/*).
 */
const offsetMs = 8 * 3_600_000;

/** The start (ms) of the period of `interval` that holds `at`; null for `never`. */
export function periodStart(interval: VersionInterval, at: number): number | null {
  const local = at + offsetMs;
  const day = Math.floor(local / dayMs) * dayMs;
  switch (interval) {
    case 'never':
      return null;
    case 'day':
      return day - offsetMs;
    case 'week': {
      const sinceMonday = (new Date(day).getUTCDay() + 6) % 7;
      return day - sinceMonday * dayMs - offsetMs;
    }
    case 'month': {
      const date = new Date(day);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) - offsetMs;
    }
  }
}

/** When the period of `interval` holding `at` ends: the next version's start; null for `never`. */
export function periodEnd(interval: VersionInterval, at: number): number | null {
  const start = periodStart(interval, at);
  if (start === null) return null;
  if (interval === 'day') return start + dayMs;
  if (interval === 'week') return start + 7 * dayMs;
  const date = new Date(start + offsetMs);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) - offsetMs;
}
