import { createHash, randomBytes } from 'node:crypto';

/**
 * Lines of a made-up export of the hosted service, for the import test and bench/import.ts.
 * The legacy hash is computed here on its own (not with src/accounts/legacy-passwords.ts):
 * SHA-512 of UTF-8 `salt + password`, 512 more rounds over the previous digest, base64.
 */
export function serviceHash(salt: string, password: string): string {
  let digest = createHash('sha512').update(Buffer.from(salt + password, 'utf8')).digest();
  for (let round = 1; round <= 512; round++) digest = createHash('sha512').update(digest).digest();
  return digest.toString('base64');
}

/** A 24-character id as the service issued them. */
export function serviceId(prefix: string, n: number): string {
  return prefix + n.toString(16).padStart(24 - prefix.length, '0');
}

export interface ExportUser {
  objectId: string;
  username: string;
  password: string;
  salt: string;
  sessionToken: string;
  line: string;
}

/** One `_User` line; `hash` may be precomputed (the benchmark reuses a few to save time). */
export function exportUser(n: number, options: { hash?: { salt: string; password: string; hash: string }; extra?: Record<string, unknown> } = {}): ExportUser {
  const objectId = serviceId('5a', n);
  const salt = options.hash?.salt ?? randomBytes(16).toString('hex');
  const password = options.hash?.password ?? `pw-${n}-ünïcode`;
  const hash = options.hash?.hash ?? serviceHash(salt, password);
  const sessionToken = randomBytes(13).toString('hex').slice(0, 25);
  const created = new Date(Date.UTC(2019, 0, 1) + n * 60_000).toISOString();
  const row = {
    objectId,
    username: `user${n}`,
    email: `user${n}@example.com`,
    emailVerified: n % 2 === 0,
    mobilePhoneVerified: false,
    salt,
    password: hash,
    sessionToken,
    ACL: { '*': { read: true }, [objectId]: { write: true } },
    // Both date forms occur in exports.
    createdAt: n % 2 === 0 ? created : { __type: 'Date', iso: created },
    updatedAt: new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString(),
    ...options.extra,
  };
  return { objectId, username: row.username, password, salt, sessionToken, line: JSON.stringify(row) };
}
