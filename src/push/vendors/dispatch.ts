/**
 * The pipeline's door to the phone makers: picks the sender for the installation's vendor,
 * loads the device profile's credentials, applies the delivery rules (SPEC §4.3: silent on a
 * maker without pass-through, limits, quota pauses) and answers one result per device.
 */
import type { AppSettings } from '../../apps/settings.ts';
import type { Clock } from '../../lib/clock.ts';
import { own } from '../../lib/lookup.ts';
import { buildPushMessage, packageNameProblem } from './mapping.ts';
import type { QuotaPauses } from '../../storage/quota-pause-store.ts';
import { nextQuotaDay } from './pauses.ts';
import { protocols } from './protocols.ts';
import { createSender, type RetryPolicy } from './sender.ts';
import type { DeviceResult, VendorName, VendorSender } from './types.ts';
import type { VendorDispatch, VendorSendInput } from '../vendor-dispatch.ts';

export type { VendorDispatch };
export type VendorDispatchInput = VendorSendInput;

export interface VendorDispatchOptions {
  /** The application's current settings (mixedPush, commercial, androidIntentHostname, vendors). */
  settingsFor(appId: string): Promise<AppSettings | null>;
  clock: Clock;
  /** Shared quota-pause state: in the database or Redis in production (src/storage/quota-pause-store.ts). */
  pauses: QuotaPauses;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  retry?: RetryPolicy;
  /** Requests in flight at once for one send call. */
  concurrency?: number;
  /** Told when a maker is paused for the day, for the log and the push record. */
  onPause?(event: { appId: string; deviceProfile: string; vendor: VendorName; until: number; reason: string; notificationId: string }): void | Promise<void>;
  /** Senders kept (with their cached access tokens) at most; the least recently used goes first. */
  maxSenders?: number;
}

function allResults(devices: VendorDispatchInput['devices'], status: DeviceResult['status'], error: string): DeviceResult[] {
  return devices.map((device) => ({ installationObjectId: device.installationObjectId, status, error }));
}

export function createVendorDispatch(options: VendorDispatchOptions): VendorDispatch {
  const senders = new Map<string, { fingerprint: string; sender: VendorSender }>();
  const maxSenders = options.maxSenders ?? 1000;

  function senderFor(key: string, vendor: VendorName, credentials: Record<string, string>): VendorSender {
    const fingerprint = JSON.stringify(Object.entries(credentials).sort());
    const existing = senders.get(key);
    if (existing && existing.fingerprint === fingerprint) {
      senders.delete(key);
      senders.set(key, existing); // most recently used last
      return existing.sender;
    }
    const sender = createSender({
      protocol: protocols[vendor],
      credentials: { ...credentials },
      clock: options.clock,
      fetch: options.fetch,
      sleep: options.sleep,
      retry: options.retry,
      concurrency: options.concurrency,
    });
    senders.delete(key);
    senders.set(key, { fingerprint, sender });
    while (senders.size > maxSenders) senders.delete(senders.keys().next().value!);
    return sender;
  }

  return {
    async send(input) {
      const { appId, vendor, deviceProfile, devices } = input;
      if (devices.length === 0) return [];
      const protocol = protocols[vendor];
      if (!protocol) return allResults(devices, 'failed', `unknown vendor "${String(vendor)}"`);
      const settings = await options.settingsFor(appId);
      if (!settings) return allResults(devices, 'failed', `unknown application ${appId}`);
      if (!settings.mixedPush || !settings.commercial) {
        return allResults(devices, 'failed', 'mixed push is off for this application (it needs commercial and mixedPush on)');
      }
      // deviceProfile is whatever the device saved: read only the application's own profiles.
      const credentials = own(own(settings.vendors, deviceProfile), vendor);
      if (!credentials) {
        return allResults(
          devices,
          'failed',
          `no ${vendor} credentials for device profile "${deviceProfile}": set vendors.${deviceProfile}.${vendor} {${protocol.requiredFields.join(', ')}}`,
        );
      }
      const missing = protocol.requiredFields.filter((field) => !credentials[field]);
      if (missing.length > 0) {
        return allResults(devices, 'failed', `vendors.${deviceProfile}.${vendor} is missing ${missing.join(', ')}`);
      }
      const packageProblem = packageNameProblem(credentials.packageName);
      if (packageProblem) return allResults(devices, 'failed', `vendors.${deviceProfile}.${vendor}: ${packageProblem}`);

      const now = options.clock.now();
      if (input.expiresAt !== null && input.expiresAt <= now) {
        return allResults(devices, 'failed', 'the push expired before it was sent');
      }
      const message = buildPushMessage({
        vendor,
        notificationId: input.notificationId,
        data: input.data,
        hms: input.hms,
        expiresAt: input.expiresAt,
        androidIntentHostname: settings.androidIntentHostname,
      });
      // SPEC §4.3 rule 3 (and rule 10 for OPPO): no pass-through at this maker → not sent, error recorded.
      if (message.silent && !protocol.passThrough) {
        return allResults(devices, 'dropped', `${vendor} does not support pass-through (silent) messages; not sent`);
      }
      const key = { appId, deviceProfile, vendor };
      const paused = await options.pauses.current(key, now);
      if (paused) {
        return allResults(devices, 'failed', `${vendor} paused until ${new Date(paused.until).toISOString()}: ${paused.reason}`);
      }

      const sender = senderFor(`${appId}\u0000${deviceProfile}\u0000${vendor}`, vendor, credentials);
      const report = await sender.send(message, devices);
      if (report.quotaExceeded !== undefined) {
        const until = nextQuotaDay(options.clock.now());
        await options.pauses.pause(key, until, report.quotaExceeded);
        await options.onPause?.({ ...key, until, reason: report.quotaExceeded, notificationId: input.notificationId });
      }
      // Results in the order of the devices given.
      const byId = new Map(report.results.map((result) => [result.installationObjectId, result]));
      return devices.map(
        (device) => byId.get(device.installationObjectId) ?? { installationObjectId: device.installationObjectId, status: 'failed', error: 'no result' },
      );
    },
  };
}
