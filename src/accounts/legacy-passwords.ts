import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Password hashes carried over from the hosted service's export (docs/operations.md, "Import").
 * Its documented scheme: SHA-512 of the UTF-8 bytes of `salt + password`, then 512 more rounds
 * each hashing the previous 64-byte digest; the final digest in base64. Roost keeps such a hash
 * in the password column as `$lcsha512$<salt, base64url of its UTF-8>$<digest, base64>` until
 * the user's next successful login replaces it with argon2id.
 */
const prefix = '$lcsha512$';
const rounds = 512;

export function legacyDigest(salt: string, password: string): Buffer {
  let digest = createHash('sha512').update(salt + password, 'utf8').digest();
  for (let i = 0; i < rounds; i++) digest = createHash('sha512').update(digest).digest();
  return digest;
}

/** The stored form of an exported `salt` and `password`; null when the pair is not one. */
export function encodeLegacyHash(salt: unknown, hash: unknown): string | null {
  if (typeof salt !== 'string' || typeof hash !== 'string' || salt === '') return null;
  const digest = Buffer.from(hash, 'base64');
  if (digest.length !== 64 || digest.toString('base64') !== hash) return null;
  return `${prefix}${Buffer.from(salt, 'utf8').toString('base64url')}$${hash}`;
}

export function isLegacyHash(stored: string): boolean {
  return stored.startsWith(prefix);
}

/** Constant-time check of a password against a stored legacy hash; false for a malformed one. */
export function verifyLegacy(stored: string, password: string): boolean {
  const [salt64, hash] = stored.slice(prefix.length).split('$');
  if (salt64 === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  if (expected.length !== 64) return false;
  return timingSafeEqual(legacyDigest(Buffer.from(salt64, 'base64url').toString('utf8'), password), expected);
}
