import { hmacHex, safeEqual } from '../lib/crypto.ts';

/**
 * FILES_SIGNED_URL_SECONDS: private files on Roost's own URLs. A record keeps its plain URL; every answer that
 * shows it (the record, or a File value naming it) shows it signed, so only a caller who may read the record gets
 * a URL that works, for a while. Expiry is rounded up to a whole window (valid for one to two windows), so one
 * file's URL stays the same within a window and caches still work.
 */
export class SignedFileUrls {
  constructor(
    private readonly options: { secret: string; seconds: number; now(): number; base(): string },
  ) {}

  private mac(path: string, expires: number): string {
    return hmacHex(this.options.secret, `file-url\n${path}\n${expires}`).slice(0, 32);
  }

  /** The URL with its signature when it is one of this server's file URLs; any other URL as it is. */
  sign(url: string): string {
    const base = this.options.base();
    if (!url.startsWith(`${base}/files/`) || url.includes('?')) return url;
    const window = this.options.seconds;
    const expires = (Math.floor(this.options.now() / 1000 / window) + 2) * window;
    return `${url}?expires=${expires}&signature=${this.mac(url.slice(base.length), expires)}`;
  }

  /** Whether a request for `path` (`/files/<appId>/<key>`) carries a signature this server gave, not expired. */
  verify(path: string, expires: unknown, signature: unknown): boolean {
    if (typeof expires !== 'string' || typeof signature !== 'string' || !/^\d{1,12}$/.test(expires)) return false;
    if (Number(expires) * 1000 < this.options.now()) return false;
    return safeEqual(signature, this.mac(path, Number(expires)));
  }
}
