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

export function isoDate(ms: number): string {
  return new Date(ms).toISOString();
}
