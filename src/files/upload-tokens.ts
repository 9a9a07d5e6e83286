import { decrypt, encrypt } from '../lib/crypto.ts';
import type { Acl, JsonObject } from '../objects/types.ts';

/**
 * What POST /1.1/fileTokens promises an upload, sealed into the token the SDK PUTs the bytes with and
 * sends back to /1.1/fileCallback: nothing is stored until the bytes arrive, so an upload never made
 * leaves no record. The record's objectId is unique, which makes a token good for one upload.
 */
export interface UploadGrant {
  appId: string;
  objectId: string;
  key: string;
  name: string;
  mimeType: string;
  metaData: JsonObject;
  acl: Acl | null;
  userId: string | null;
  /** Epoch ms after which the upload is refused. */
  expiresAt: number;
}

const purpose = 'file-upload';
/** metaData and ACL travel inside the token, which travels in a URL: kept well under the 64 KiB header limit. */
export const maxGrantBytes = 8 * 1024;

export function sealGrant(secret: string, grant: UploadGrant): string {
  return encrypt(secret, purpose, JSON.stringify(grant));
}

export function openGrant(secret: string, token: string): UploadGrant | null {
  if (typeof token !== 'string' || token.length === 0 || token.length > 4 * maxGrantBytes) return null;
  const plain = decrypt(secret, purpose, token);
  if (plain === null) return null;
  try {
    return JSON.parse(plain) as UploadGrant;
  } catch {
    return null;
  }
}
