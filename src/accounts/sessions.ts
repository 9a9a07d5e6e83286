import { customAlphabet } from 'nanoid';
import { decrypt, encrypt, hmacHex } from '../lib/crypto.ts';
import type { AccountStore, SessionSeal, UserRecord } from '../storage/account-store.ts';

/**
 * 25 characters of [0-9a-z] from a CSPRNG (about 129 random bits): the hosted service's tokens were of this
 * form (every one of the 76 in its recordings, reference leancloud-storage-wire.md §1).
 */
const newToken = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 25);
const purpose = 'session-token';
/** Anything longer is not a token Roost issued; refuse it before hashing. */
const maxTokenLength = 256;

/**
 * Session tokens. The database never holds one in usable form: it keeps an HMAC (keyed with
 * the server secret) to find the user, and an AES-GCM copy so login can return the current one.
 */
export class SessionTokens {
  private readonly secret: string;

  constructor(options: { secret: string }) {
    if (!options.secret) throw new Error('SessionTokens needs the server secret');
    this.secret = options.secret;
  }

  issue(): { token: string; seal: SessionSeal } {
    const token = newToken();
    return { token, seal: this.seal(token) };
  }

  seal(token: string): SessionSeal {
    return { digest: this.digest(token), cipher: encrypt(this.secret, purpose, token) };
  }

  digest(token: string): string {
    return hmacHex(this.secret, token);
  }

  /** The token behind a stored copy; null if it was sealed under another secret or tampered with. */
  reveal(cipher: string): string | null {
    return decrypt(this.secret, purpose, cipher);
  }

  /** The user's current token; a user without a readable one (imported, new secret) gets a fresh one. */
  async current(accounts: Pick<AccountStore, 'setSession'>, appId: string, record: UserRecord): Promise<string> {
    const current = record.sessionCipher ? this.reveal(record.sessionCipher) : null;
    if (current) return current;
    const session = this.issue();
    await accounts.setSession(appId, record.user.objectId, session.seal);
    return session.token;
  }

  plausible(token: string): boolean {
    return token.length > 0 && token.length <= maxTokenLength;
  }
}
