import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import { declared } from '../schema.ts';
import { parseHonorReceipts, type ReceiptBatch } from '../../push/vendors/receipts.ts';

/** A list of receipts, bare or as {"statuses": [...]}; each receipt is read by parseHonorReceipts, which skips what it cannot use. */
const honorBody = {
  anyOf: [{ type: 'array' }, { type: 'object', required: ['statuses'], properties: { statuses: { type: 'array' } } }],
  'x-error': { kind: 'invalidJson', message: 'Honor receipt: expected {"statuses": [...]}.' },
};

export interface VendorCallbackOptions {
  /** Applies the receipts: delivery counters on `_Notification`, `valid: false` for the listed tokens. */
  onReceipt(batch: ReceiptBatch): Promise<void>;
}

/**
 * Receipts the phone makers post (SPEC §6). Mounted outside the X-LC-authenticated scope: the
 * maker sends no application keys. Honor expects a quick 200.
 */
export function registerVendorCallbackRoutes(app: FastifyInstance, options: VendorCallbackOptions): void {
  app.post('/push/v1/callback/honor', declared({ body: honorBody }), async (request) => {
    const parsed = parseHonorReceipts(request.body);
    if (!parsed.ok) throw new ApiError('invalidJson', `Honor receipt: ${parsed.error}.`);
    await options.onReceipt(parsed.batch);
    return { errno: '0', errmsg: 'success' };
  });
}
