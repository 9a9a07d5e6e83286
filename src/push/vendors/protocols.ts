import { hmsProtocol } from './hms.ts';
import { honorProtocol } from './honor.ts';
import { miProtocol } from './mi.ts';
import { mzProtocol } from './mz.ts';
import { oppoProtocol } from './oppo.ts';
import { vivoProtocol } from './vivo.ts';
import type { VendorName, VendorProtocol } from './types.ts';

/** Every maker's protocol, by the `vendor` value installations carry. */
export const protocols: Record<VendorName, VendorProtocol> = {
  HMS: hmsProtocol,
  mi: miProtocol,
  mz: mzProtocol,
  oppo: oppoProtocol,
  vivo: vivoProtocol,
  honor: honorProtocol,
};

/**
 * Credential fields per maker (SPEC §4.3 rule 6) in `vendors.<profile>.<vendor>`.
 * Every maker also takes `baseUrl` and (where it has a token endpoint) `authUrl`, and
 * optionally `packageName` (≤128 bytes; required by mi) and `badgeClass` (HMS, honor badges).
 */
export const credentialFields: Record<VendorName, readonly string[]> = Object.fromEntries(
  Object.entries(protocols).map(([vendor, protocol]) => [vendor, protocol.requiredFields]),
) as Record<VendorName, readonly string[]>;
