import type { Json, JsonObject, Readers, Where } from '../objects/types.ts';

/** The phone makers an installation may name in `vendor` (SPEC §2.3). */
export const vendorNames = ['HMS', 'mi', 'mz', 'oppo', 'vivo', 'honor'] as const;
export type Vendor = (typeof vendorNames)[number];

export function isVendor(value: unknown): value is Vendor {
  return typeof value === 'string' && (vendorNames as readonly string[]).includes(value);
}

/** What the worker needs to know about a push while sending it. */
export interface PushContent {
  data: JsonObject;
  /** The request's HMS-specific object, passed through to that maker (SPEC §4.3 rule 9). */
  hms?: Json;
  /** The first of the request's channels: LeanCloud's push connection names it to the device (`_channel`). */
  channel?: string;
}

/** A validated push request, ready to be stored as a `_Notification` record and a fan-out job. */
export interface NewPush {
  appId: string;
  objectId: string;
  createdAt: number;
  /** When sending may start; equal to createdAt for an immediate push. */
  pushTime: number;
  expiresAt: number | null;
  status: 'scheduled' | 'in-queue';
  /** Which installations the push targets (where + channels + "still valid"), as the neutral tree. */
  selector: Where;
  /** Whose readers the selector's subqueries read with: a client push's caller's; null or absent for the master key. */
  readers?: Readers;
  content: PushContent;
  /** The request as the record shows it (where, channels, prod, notification_id, …). */
  request: JsonObject;
  /** req_id: a repeat within dedupeMs returns the first record instead of sending again. */
  reqId: string | null;
  dedupeMs: number;
  /** A scheduled push is refused while this many wait for the application (src/push/schedule.ts). */
  scheduleCap?: number;
}

/** One installation of a page, with only the fields routing looks at. */
export interface TargetDevice {
  objectId: string;
  installationId: string | null;
  vendor: string | null;
  registrationId: string | null;
  deviceProfile: string | null;
}

export interface VendorTarget {
  installationObjectId: string;
  vendor: Vendor;
  deviceProfile: string;
  registrationId: string;
}

/** How the installations of one page are sent, and what to add to the record's counters. */
export interface PageRouting {
  /** installationIds whose message goes through Roost's own channel. */
  channel: string[];
  vendor: VendorTarget[];
  counts: Record<string, number>;
}

/** Splits a page's installations between the own channel and the makers (src/push/routing.ts). */
export type RoutePage = (job: JobView, devices: TargetDevice[], settings: { mixedPush: boolean }) => PageRouting;

/** The job as a worker sees it while routing a page. */
export interface JobView {
  appId: string;
  notificationId: string;
  createdAt: number;
  expiresAt: number | null;
  content: PushContent;
}

/** A page committed to the database whose delivery (own channel, makers) is still to be done. */
export interface PageWork {
  job: JobView;
  seq: number;
  /** installationIds for the own channel, not yet acknowledged by their device. */
  channel: string[];
  /** Devices for the makers that have no result yet. */
  vendor: VendorTarget[];
}

export type VendorOutcome = 'sent' | 'invalidToken' | 'failed' | 'dropped';

/** A maker's answer for one device of a page. */
export interface VendorResult extends VendorTarget {
  status: VendorOutcome;
  error?: string;
}

export interface PageResult {
  appId: string;
  notificationId: string;
  seq: number;
  /** Only the devices not sent are stored, one row each: a delivered page's other devices were sent. */
  vendorResults: VendorResult[];
  counts: Record<string, number>;
  /** Installations a maker reported invalid: they get `valid: false`. */
  invalidate: string[];
}

/** One stored `_Notification` record with its counters. */
export interface NotificationRecord {
  appId: string;
  objectId: string;
  createdAt: number;
  updatedAt: number;
  status: string;
  pushTime: number;
  expiresAt: number | null;
  request: JsonObject;
  content: PushContent;
  counts: Record<string, number>;
}

/** A message waiting in a device's mailbox for the own channel. */
export interface MailboxMessage {
  id: string;
  data: JsonObject;
  createdAt: number;
  expiresAt: number | null;
  channel?: string;
}
