import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets Roost must read back (application keys for X-LC-Sign, vendor and sign-in provider secrets, the
 * SMS webhook secret, the server secret) are kept sealed: AES-256-GCM under a key that lives outside the
 * database, so a dump alone yields no credential. A sealed value names the key that sealed it:
 * `sealed:1:<key id>:<base64url of iv, tag, ciphertext>`. The first key of the ring seals; every key opens.
 */
const prefix = 'sealed:1:';

export interface SecretKey {
  id: string;
  key: Buffer;
}

export class SecretKeyError extends Error {}

/** A key as written in ROOST_SECRET_KEY or a key file: 32 bytes in base64 (44 characters) or hex (64). */
export function parseSecretKey(text: string): SecretKey {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(trimmed) && !/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed))) {
    throw new SecretKeyError('a secret key must be 32 random bytes in base64 (44 characters) or hex (64): make one with `roost secrets new-key`');
  }
  return { id: createHash('sha256').update('roost secret key id\n').update(key).digest('hex').slice(0, 8), key };
}

export function newSecretKeyText(): string {
  return randomBytes(32).toString('base64');
}

export class SecretBox {
  private keys: readonly SecretKey[];
  /** Reads the keys again (from their file), so a key another process added opens what it sealed. */
  private readonly reload: (() => string) | null;
  private reloadedAt = 0;

  constructor(keys: readonly SecretKey[], reload: (() => string) | null = null) {
    if (keys.length === 0) throw new SecretKeyError('no secret key');
    this.keys = keys;
    this.reload = reload;
  }

  /** Keys as listed (comma- or line-separated), the first one sealing. */
  static fromText(text: string, reload: (() => string) | null = null): SecretBox {
    return new SecretBox(keysFromText(text), reload);
  }

  private keyOf(id: string): SecretKey | undefined {
    let found = this.keys.find((candidate) => candidate.id === id);
    // `roost secrets rotate-key` puts a new key in the file and reseals: running nodes pick it up here, at most once a second.
    if (!found && this.reload && Date.now() - this.reloadedAt > 1000) {
      this.reloadedAt = Date.now();
      this.keys = keysFromText(this.reload());
      found = this.keys.find((candidate) => candidate.id === id);
    }
    return found;
  }

  get sealingKeyId(): string {
    return this.keys[0].id;
  }

  seal(clear: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0].key, iv);
    const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
    return `${prefix}${this.keys[0].id}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /**
   * The clear text of a sealed value. A value that is not sealed is returned as it is: only a database
   * not yet migrated holds one (the seal step at start seals them all).
   */
  open(value: string): string {
    if (!isSealed(value)) return value;
    const [id, payload] = value.slice(prefix.length).split(':');
    const secretKey = this.keyOf(id);
    if (!secretKey) throw new SecretKeyError(`a secret in the database was sealed with key ${id}, which is not among the configured secret keys (ROOST_SECRET_KEY / ROOST_SECRET_KEY_FILE)`);
    const bytes = Buffer.from(payload ?? '', 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', secretKey.key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(`a secret sealed with key ${id} does not open: the key or the value was altered`);
    }
  }

  /** Whether `value` should be sealed again: clear, or sealed by a key that no longer seals. */
  isStale(value: string): boolean {
    return !value.startsWith(`${prefix}${this.sealingKeyId}:`);
  }
}

function keysFromText(text: string): SecretKey[] {
  return text.split(/[\s,]+/).filter(Boolean).map(parseSecretKey);
}

export function isSealed(value: string): boolean {
  return value.startsWith(prefix);
}

/** For stores opened without a configured key (tests, tools): one random key for this process's life. */
let ephemeral: SecretBox | null = null;
export function processSecretBox(): SecretBox {
  return (ephemeral ??= SecretBox.fromText(newSecretKeyText()));
}
