import type { Vendor } from './types.ts';

/** One maker send: the devices of one (vendor, deviceProfile) group of a page. */
export interface VendorSendInput {
  appId: string;
  vendor: Vendor;
  deviceProfile: string;
  notificationId: string;
  data: Record<string, unknown>;
  /** The request's `hms` object, passed through to HMS (SPEC §4.3 rule 9). */
  hms?: unknown;
  expiresAt: number | null;
  devices: Array<{ installationObjectId: string; registrationId: string }>;
}

export interface VendorDeviceResult {
  installationObjectId: string;
  status: 'sent' | 'invalidToken' | 'failed' | 'dropped';
  error?: string;
}

/**
 * The seam between the fan-out and the phone-maker senders (src/push/vendors/). The fan-out
 * calls `send` once per (vendor, deviceProfile) group of a page and expects one result per
 * device; a thrown error counts every device of the call as failed.
 */
export interface VendorDispatch {
  send(input: VendorSendInput): Promise<VendorDeviceResult[]>;
}

export const notConfiguredError = 'vendor sender not configured';

/** Used until the makers' senders are wired in: every device is recorded as failed. */
export const unconfiguredDispatch: VendorDispatch = {
  async send(input) {
    return input.devices.map((device) => ({
      installationObjectId: device.installationObjectId,
      status: 'failed' as const,
      error: notConfiguredError,
    }));
  },
};
