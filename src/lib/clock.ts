/** Time source. Injected everywhere time matters so tests can move it instead of sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can move by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start = Date.now()) {
    this.current = start;
  }
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

const dayMs = 86_400_000;
/** Years 1970–9999: the span the arithmetic below formats as toISOString does. */
const fastIsoEnd = 253_402_300_800_000;
const twoDigits = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));
const threeDigits = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));
/** "YYYY-MM-DDT" by day number; timestamps cluster in few days. */
const dayPrefixes = new Map<number, string>();

/**
 * The same string as `new Date(ms).toISOString()`, a tenth of its cost: V8's formats through
 * snprintf and a time-zone lookup, twice for every object sent (bench/RESULTS.md, Objects).
 */
export function isoDate(ms: number): string {
  if (!(ms >= 0 && ms < fastIsoEnd) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const day = Math.floor(ms / dayMs);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    prefix = new Date(day * dayMs).toISOString().slice(0, 11);
    if (dayPrefixes.size >= 1024) dayPrefixes.clear();
    dayPrefixes.set(day, prefix);
  }
  const inDay = ms - day * dayMs;
  const milli = inDay % 1000;
  const seconds = (inDay - milli) / 1000;
  return `${prefix}${twoDigits[Math.floor(seconds / 3600)]}:${twoDigits[Math.floor(seconds / 60) % 60]}:${twoDigits[seconds % 60]}.${threeDigits[milli]}Z`;
}
