import type { Readable } from 'node:stream';
import type { ThumbnailRefusal, ThumbnailSpec } from './thumbnails.ts';

/** What a backend knows of bytes it keeps under a key. */
export interface StoredBytes {
  size: number;
  /** Hex MD5 of the bytes, as the hosted service kept it in metaData._checksum. */
  md5: string;
}

/** A part of the bytes: from `start` to `end`, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

export class TooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
  }
}

/**
 * Where a file's bytes live, in the files domain's words. Keys are the `_File` record's `key`
 * (`<appId>/<name>`); a backend never sees HTTP or the database.
 *
 * put is all or nothing: the bytes appear under the key only once every byte arrived and no more than
 * `maxBytes` did (TooLarge otherwise); an interrupted stream leaves nothing behind.
 */
export interface FileBackend {
  /** `local` or `s3`: what the record's `provider` says. */
  readonly provider: string;
  /** The bucket the record names (the hosted `bucket` field); null on local disk. */
  readonly bucket: string | null;
  put(key: string, body: Readable, options: { contentType: string; maxBytes: number }): Promise<StoredBytes>;
  head(key: string): Promise<{ size: number } | null>;
  /** The bytes of the key, or of a range of them; null when the key holds nothing. */
  get(key: string, range?: ByteRange): Promise<Readable | null>;
  /** Removes the bytes; removing what is not there succeeds. */
  delete(key: string): Promise<void>;
  /** Removes every byte kept for an application (its keys and their thumbnails): `roost app delete`. */
  deleteApp(appId: string): Promise<void>;
  /** Where clients read the bytes from. */
  url(key: string): string;
  /** When `url` points at Roost but the bytes are elsewhere (a private bucket): where to send a reader now. */
  signedUrl?(key: string): Promise<string | null>;
  /**
   * Where to send a reader of a thumbnail of the key's image, made on the first request and kept beside it (removed
   * with it); null when the key holds nothing. Backends whose files Roost serves itself keep their own way.
   */
  thumbnailUrl?(key: string, spec: ThumbnailSpec): Promise<string | null | ThumbnailRefusal>;
  close?(): Promise<void>;
}

/** The longest key in UTF-8 bytes: well inside S3's 1,024 with a prefix before it. */
export const maxKeyBytes = 512;
/** The longest file name a key may end with, in UTF-8 bytes: what ext4, XFS and APFS take for one name. */
export const maxKeyNameBytes = 255;
const folder = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Keys are made by the server: `<appId>/<random><.ext>`, or with keepFileName `<appId>/<random>/<name>`, the
 * name as the app gave it. This refuses anything that could leave a backend's folder or prefix, or name what is
 * Roost's own there: more folders, a part that is empty or starts with a dot (`.`, `..`, `.partial`, `.thumbs`),
 * a backslash, a control character, and keys or names longer than a file system or S3 takes.
 */
export function checkKey(key: string): string {
  const parts = key.split('/');
  const name = parts[parts.length - 1];
  const valid =
    (parts.length === 2 || parts.length === 3) &&
    parts.slice(0, -1).every((part) => folder.test(part)) &&
    name !== '' &&
    !name.startsWith('.') &&
    !/[\\\u0000-\u001f\u007f]/.test(name) &&
    Buffer.byteLength(name) <= maxKeyNameBytes &&
    Buffer.byteLength(key) <= maxKeyBytes;
  if (!valid) throw new Error(`invalid file key ${JSON.stringify(key)}`);
  return key;
}
