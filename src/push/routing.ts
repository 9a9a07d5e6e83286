import { isVendor, type PageRouting, type TargetDevice, type VendorTarget } from './types.ts';

export const defaultProfile = '_default';

/**
 * Counter keys of a `_Notification` record (push_counts): `devices`, `lc.routed`,
 * `lc.delivered`, `lc.unreachable`, `faultyIntegration`, `<vendor>.routed`,
 * `<vendor>.<sent|invalidToken|failed|dropped>`, and `error:<text>` per error reason.
 */
export const counterKeys = {
  devices: 'devices',
  lcRouted: 'lc.routed',
  lcDelivered: 'lc.delivered',
  lcUnreachable: 'lc.unreachable',
  faulty: 'faultyIntegration',
} as const;

export const faultyIntegrationError = 'registrationId without vendor (faulty client integration)';
export const noInstallationIdError = 'no installationId: the device cannot log in to the push channel';

function bump(counts: Record<string, number>, key: string, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}

/**
 * SPEC §4.3 rule 1: a device goes to its maker only when mixed push is on and it has both
 * `vendor` and `registrationId`; every other device uses Roost's own channel. `mixedPush` is
 * the switch as stored when the page is routed, so turning it off takes effect on the next page.
 */
export function routePage(devices: TargetDevice[], settings: { mixedPush: boolean }): PageRouting {
  const routing: PageRouting = { channel: [], vendor: [], counts: {} };
  bump(routing.counts, counterKeys.devices, devices.length);
  for (const device of devices) {
    if (settings.mixedPush && device.registrationId !== null && device.vendor === null) {
      bump(routing.counts, counterKeys.faulty);
      bump(routing.counts, `error:${faultyIntegrationError}`);
    }
    if (settings.mixedPush && device.registrationId !== null && isVendor(device.vendor)) {
      const target: VendorTarget = {
        installationObjectId: device.objectId,
        vendor: device.vendor,
        deviceProfile: device.deviceProfile ?? defaultProfile,
        registrationId: device.registrationId,
      };
      routing.vendor.push(target);
      bump(routing.counts, `${device.vendor}.routed`);
    } else if (device.installationId !== null) {
      routing.channel.push(device.installationId);
      bump(routing.counts, counterKeys.lcRouted);
    } else {
      bump(routing.counts, counterKeys.lcUnreachable);
      bump(routing.counts, `error:${noInstallationIdError}`);
    }
  }
  return routing;
}
