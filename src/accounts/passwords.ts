import { hash, verify, type Options } from '@node-rs/argon2';

/** Algorithm.Argon2id; the package's enum is a const enum, which this build cannot import. */
const argon2id = 2;
import { randomToken } from '../lib/crypto.ts';
import { isLegacyHash, verifyLegacy } from './legacy-passwords.ts';

/**
 * argon2id with OWASP's minimum: 19 MiB of memory, 2 passes, one lane. bench/ measures the
 * hash limit with these same parameters, so keep them exported from here.
 */
export const passwordParams: Options = {
  algorithm: argon2id,
  memoryCost: 19 * 1024,
  timeCost: 2,
  parallelism: 1,
};

/** Longest password accepted; longer inputs only cost hashing time. */
export const maxPasswordLength = 4096;

/**
 * Hashes and checks passwords. The native binding runs each hash on the libuv thread pool,
 * so the event loop keeps serving other requests meanwhile.
 */
export class PasswordHasher {
  private readonly params: Options;
  private dummy: Promise<string> | null = null;

  constructor(options: { params?: Options } = {}) {
    this.params = options.params ?? passwordParams;
  }

  hash(password: string): Promise<string> {
    return hash(password, this.params);
  }

  /** False for a wrong password and for a hash this hasher cannot read. */
  async verify(passwordHash: string, password: string): Promise<boolean> {
    // Imported from the hosted service (src/accounts/legacy-passwords.ts); login then rehashes it.
    if (isLegacyHash(passwordHash)) return verifyLegacy(passwordHash, password);
    if (!passwordHash.startsWith('$argon2')) return false;
    try {
      return await verify(passwordHash, password);
    } catch {
      return false;
    }
  }

  /** Whether a hash that just verified should be replaced by an argon2id one. */
  needsRehash(passwordHash: string): boolean {
    return !passwordHash.startsWith('$argon2id$');
  }

  /**
   * Spends the time of one real check and answers false: used for unknown identifiers, so
   * a login's duration does not tell whether the account exists.
   */
  async verifyDummy(password: string): Promise<false> {
    this.dummy ??= this.hash(randomToken(16));
    await this.verify(await this.dummy, password);
    return false;
  }
}
