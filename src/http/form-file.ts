import { Readable } from 'node:stream';
import { ApiError } from '../lib/errors.ts';

/** The most a part's headers may hold. */
const maxHeadBytes = 16 * 1024;

function malformed(message: string): ApiError {
  return new ApiError('other', message);
}

/** The boundary of a `multipart/form-data` Content-Type, or null. */
export function boundaryOf(contentType: string | undefined): string | null {
  const match = /^multipart\/form-data\s*;.*\bboundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType ?? '');
  return match ? (match[1] ?? match[2]) : null;
}

/**
 * The bytes of the first file part of a multipart/form-data body (a part with a filename, or named `file`), as they
 * arrive: the SDK's qiniu form upload sends the file first and its text fields after, which are not needed (the
 * token is in the URL) and left unread. Only a delimiter's length is held back; a body that ends before the file
 * part's end fails the stream, so the backend keeps nothing.
 */
export function formFile(body: AsyncIterable<Buffer>, boundary: string): Readable {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  async function* bytes(): AsyncGenerator<Buffer> {
    // The first delimiter has no CRLF before it: one is put there so every delimiter looks the same.
    let pending: Buffer = Buffer.from('\r\n');
    let state: 'preamble' | 'head' | 'skip' | 'file' = 'preamble';
    for await (const chunk of body) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (state === 'file') {
          const end = pending.indexOf(delimiter);
          if (end >= 0) {
            if (end > 0) yield pending.subarray(0, end);
            return;
          }
          const safe = pending.length - delimiter.length + 1;
          if (safe > 0) {
            yield pending.subarray(0, safe);
            pending = pending.subarray(safe);
          }
          break;
        }
        if (state === 'head') {
          const end = pending.indexOf('\r\n\r\n');
          if (end < 0) {
            if (pending.length > maxHeadBytes) throw malformed('A form part has too large a header.');
            break;
          }
          const head = pending.subarray(0, end).toString('utf8');
          pending = pending.subarray(end + 4);
          const disposition = /^content-disposition:(.*)$/im.exec(head)?.[1] ?? '';
          state = /\bfilename\*?=/i.test(disposition) || /\bname="?file"?(;|$|\s)/i.test(disposition) ? 'file' : 'skip';
          continue;
        }
        // preamble or skip: up to the next delimiter, then a part's head or the end.
        const at = pending.indexOf(delimiter);
        if (at < 0 || pending.length < at + delimiter.length + 2) {
          if (at < 0 && pending.length > delimiter.length) pending = pending.subarray(pending.length - delimiter.length);
          if (pending.length > maxHeadBytes + delimiter.length) throw malformed('A form part has too large a header.');
          break;
        }
        const after = pending.subarray(at + delimiter.length, at + delimiter.length + 2).toString('latin1');
        if (after === '--') throw malformed('The form holds no file part.');
        pending = pending.subarray(at + delimiter.length);
        const lineEnd = pending.indexOf('\r\n');
        if (lineEnd < 0) break;
        pending = pending.subarray(lineEnd + 2);
        state = 'head';
      }
    }
    throw malformed(state === 'file' ? 'The form ended before its file part did.' : 'The form holds no file part.');
  }
  return Readable.from(bytes(), { objectMode: false });
}
