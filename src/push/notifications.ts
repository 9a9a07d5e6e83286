import { isoDate } from '../lib/clock.ts';
import type { JsonObject } from '../objects/types.ts';
import { counterKeys } from './routing.ts';
import { vendorNames, type NotificationRecord } from './types.ts';

/** Names the hosted service uses for per-route successes (reference §4.2). */
const successNames: Record<string, string> = {
  lc: 'lcSuccesses',
  HMS: 'hmsSuccesses',
  mi: 'miSuccesses',
  mz: 'meizuSuccesses',
  oppo: 'oppoSuccesses',
  vivo: 'vivoSuccesses',
  honor: 'honorSuccesses',
};

/**
 * A `_Notification` record as GET /1.1/notifications shows it: the request, the status, and the
 * counters — `devices` targeted, `successes` (own channel: acknowledged by the device; makers:
 * accepted by the maker), `errors`, `invalidTokens`, per-route successes, and `routes` with every
 * counter of each route.
 */
export function notificationToWire(record: NotificationRecord): JsonObject {
  const c = record.counts;
  const n = (key: string) => c[key] ?? 0;
  const routes: JsonObject = {
    lc: {
      devices: n(counterKeys.lcRouted),
      successes: n(counterKeys.lcDelivered),
      pending: Math.max(0, n(counterKeys.lcRouted) - n(counterKeys.lcDelivered)),
    },
  };
  let successes = n(counterKeys.lcDelivered);
  let invalidTokens = 0;
  let errors = n(counterKeys.lcUnreachable) + n(counterKeys.faulty);
  const out: JsonObject = {};
  out.lcSuccesses = n(counterKeys.lcDelivered);
  for (const vendor of vendorNames) {
    const routed = n(`${vendor}.routed`);
    const sent = n(`${vendor}.sent`);
    successes += sent;
    invalidTokens += n(`${vendor}.invalidToken`);
    errors += n(`${vendor}.failed`) + n(`${vendor}.dropped`);
    out[successNames[vendor]] = sent;
    if (routed > 0) {
      routes[vendor] = {
        devices: routed,
        successes: sent,
        failures: n(`${vendor}.failed`),
        invalidTokens: n(`${vendor}.invalidToken`),
        dropped: n(`${vendor}.dropped`),
      };
      const route = routes[vendor] as JsonObject;
      // Only when they happened: the quota pauses met, and the receipts the maker posted back (SPEC §6).
      if (n(`${vendor}.paused`) > 0) route.paused = n(`${vendor}.paused`);
      const receipts = ['delivered', 'undelivered', 'invalidToken'].map((k) => n(`${vendor}.receipt.${k}`));
      if (receipts.some((x) => x > 0)) route.receipts = { delivered: receipts[0], undelivered: receipts[1], invalidTokens: receipts[2] };
    }
  }
  const errorDetails: JsonObject = {};
  for (const [key, value] of Object.entries(c)) if (key.startsWith('error:')) errorDetails[key.slice(6)] = value;

  const wire: JsonObject = {
    objectId: record.objectId,
    createdAt: isoDate(record.createdAt),
    updatedAt: isoDate(record.updatedAt),
    status: record.status,
    data: record.content.data,
    ...record.request,
    'push-time': isoDate(record.pushTime),
    devices: n(counterKeys.devices),
    successes,
    errors,
    invalidTokens,
    faultyIntegrations: n(counterKeys.faulty),
    ...out,
    routes,
    errorDetails,
  };
  if (record.content.hms !== undefined) wire.hms = record.content.hms;
  if (record.expiresAt !== null) wire.expiration_time = isoDate(record.expiresAt);
  return wire;
}
