/**
 * What the domain tells the operator's monitoring, in its own words. The Prometheus
 * implementation lives with the HTTP layer (src/http/routes/metrics.ts); the domain only ever
 * sees this interface, handed in through its constructor options, and `noMetrics` by default.
 */
export interface Metrics {
  /** One password login: signed in, wrong password or unknown user, or refused while locked. */
  login(outcome: 'success' | 'failure' | 'locked'): void;
  /** A user's failed logins just reached the lock (SPEC §3.2). */
  lockout(): void;
  /**
   * Devices a push page was handed to, per route: `channel` (Roost's own WebSocket channel) or a
   * maker's vendor name, with that maker's per-device status (`sent`, `invalidToken`, `failed`, `dropped`).
   */
  pushSent(route: string, status: string, devices: number): void;
}

export const noMetrics: Metrics = {
  login() {},
  lockout() {},
  pushSent() {},
};

/** Metrics that tell each of `all` (Prometheus and the console's overview) what the domain reports. */
export function teeMetrics(...all: Metrics[]): Metrics {
  return {
    login: (outcome) => all.forEach((m) => m.login(outcome)),
    lockout: () => all.forEach((m) => m.lockout()),
    pushSent: (route, status, devices) => all.forEach((m) => m.pushSent(route, status, devices)),
  };
}
