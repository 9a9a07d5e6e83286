import { availableParallelism } from 'node:os';
import { hash, verify, type Options } from '@node-rs/argon2';
import { Turns } from '../lib/turns.ts';

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
 * so the event loop keeps serving other requests meanwhile. At most one hash per core runs at
 * a time (`parallel`, Turns), the others wait their turn here: libuv's four threads on two cores ran
 * four 19 MiB hashes against each other and did ~10% fewer a second than two (bench/RESULTS.md,
 * Accounts), and the pool's other threads stay free for file reads and writes.
 */
export class PasswordHasher {
  private readonly params: Options;
  private dummy: Promise<string> | null = null;
  private readonly turns: Turns;

  constructor(options: { params?: Options; parallel?: number } = {}) {
    this.params = options.params ?? passwordParams;
    this.turns = new Turns(options.parallel ?? hashParallelism());
  }

  hash(password: string): Promise<string> {
    return this.turns.run(() => hash(password, this.params));
  }

  /** False for a wrong password and for a hash this hasher cannot read. */
  async verify(passwordHash: string, password: string): Promise<boolean> {
    // Imported from the hosted service (src/accounts/legacy-passwords.ts); login then rehashes it.
    if (isLegacyHash(passwordHash)) return verifyLegacy(passwordHash, password);
    if (!passwordHash.startsWith('$argon2')) return false;
    try {
      return await this.turns.run(() => verify(passwordHash, password));
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

/** Hashes run at once: one per core the process may use, at least one and never more than libuv's pool. */
export function hashParallelism(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Math.max(1, Math.min(availableParallelism(), pool));
}
