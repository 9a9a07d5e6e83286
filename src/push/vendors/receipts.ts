/**
 * Delivery receipts (SPEC §6): Honor posts them to {PUBLIC_URL}/push/v1/callback/honor.
 * Honor's receipt follows the HMS receipt shape: {"statuses":[{biTag, appId|appid, token,
 * status, timestamp, requestId}]}; biTag is the `_Notification` objectId the sender put in
 * android.biTag. Status 0 is delivered; 2, 5, 6, 10 and 201 mean the token should no longer be
 * used (app uninstalled, token not on the device, notifications off, inactive, controlled).
 */

export type ReceiptOutcome = 'delivered' | 'invalidToken' | 'undelivered';

export interface Receipt {
  /** The `_Notification` objectId (biTag), '' when the maker sent none. */
  notificationId: string;
  token: string;
  status: number;
  outcome: ReceiptOutcome;
  /** The maker's app id as it reports it, when present. */
  vendorAppId: string | null;
  requestId: string | null;
  at: number | null;
}

/** What the pipeline applies: counters per notification, tokens to mark `valid: false`. */
export interface ReceiptBatch {
  vendor: 'honor';
  receipts: Receipt[];
  counts: Array<{ notificationId: string; delivered: number; undelivered: number; invalidTokens: number }>;
  invalidTokens: string[];
}

const stopCodes = new Set([2, 5, 6, 10, 201]);

function outcomeOf(status: number): ReceiptOutcome {
  if (status === 0) return 'delivered';
  return stopCodes.has(status) ? 'invalidToken' : 'undelivered';
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
}

/** Parses Honor's receipt body. A malformed body is a value, not an exception. */
export function parseHonorReceipts(body: unknown): { ok: true; batch: ReceiptBatch } | { ok: false; error: string } {
  const list = Array.isArray(body) ? body : (body as { statuses?: unknown } | null)?.statuses;
  if (!Array.isArray(list)) return { ok: false, error: 'expected {"statuses": [...]}' };
  const receipts: Receipt[] = [];
  for (const item of list) {
    if (typeof item !== 'object' || item === null) continue;
    const entry = item as Record<string, unknown>;
    const token = text(entry.token);
    const status = Number(entry.status ?? entry.result);
    if (!token || !Number.isInteger(status)) continue;
    const at = Number(entry.timestamp);
    receipts.push({
      notificationId: text(entry.biTag) ?? text(entry.bi_tag) ?? '',
      token,
      status,
      outcome: outcomeOf(status),
      vendorAppId: text(entry.appId) ?? text(entry.appid),
      requestId: text(entry.requestId),
      at: Number.isFinite(at) && at > 0 ? at : null,
    });
  }
  const byNotification = new Map<string, { notificationId: string; delivered: number; undelivered: number; invalidTokens: number }>();
  const invalid = new Set<string>();
  for (const receipt of receipts) {
    if (receipt.outcome === 'invalidToken') invalid.add(receipt.token);
    if (!receipt.notificationId) continue;
    let count = byNotification.get(receipt.notificationId);
    if (!count) byNotification.set(receipt.notificationId, (count = { notificationId: receipt.notificationId, delivered: 0, undelivered: 0, invalidTokens: 0 }));
    if (receipt.outcome === 'delivered') count.delivered++;
    else if (receipt.outcome === 'invalidToken') count.invalidTokens++;
    else count.undelivered++;
  }
  return { ok: true, batch: { vendor: 'honor', receipts, counts: [...byNotification.values()], invalidTokens: [...invalid] } };
}
