import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { ApiError } from '../lib/errors.ts';

function malformed(message: string): ApiError {
  return new ApiError('other', message);
}

/** Whether the body is `multipart/form-data` with a boundary busboy can read. */
export function isForm(headers: IncomingHttpHeaders): boolean {
  return /^multipart\/form-data\s*;.*\bboundary=/i.test(headers['content-type'] ?? '');
}

/**
 * The bytes of the first file part of a multipart/form-data body (busboy: a part with a filename, or of type
 * application/octet-stream), as they arrive. The SDK's qiniu form upload sends the file first and its text fields
 * after, which are not needed (the token is in the URL) and left unread. A body that ends before the file part's
 * end, or holds no file part, fails the stream, so the backend keeps nothing.
 */
export function formFile(body: Readable, headers: IncomingHttpHeaders): Readable {
  // Bounds on what the form may carry besides the file: the SDK sends three short fields.
  const parser = busboy({ headers, limits: { files: 1, fields: 16, fieldSize: 16 * 1024, parts: 32, headerPairs: 16 } });
  const firstFile = new Promise<Readable>((found, refused) => {
    parser.on('file', (_name, stream) => {
      // A cut form fails the part too; whoever iterates it sees that (stream.errored), unread it is no crash.
      stream.on('error', () => undefined);
      found(stream);
    });
    parser.on('error', () => refused(malformed('The form is not well formed.')));
    parser.on('close', () => refused(malformed('The form holds no file part.')));
  });
  // Read only when the backend reads: a form that fails before then is not an unhandled rejection.
  firstFile.catch(() => undefined);
  body.on('error', (error) => parser.destroy(error));
  body.pipe(parser);
  // Errors surface when the stream is read, whoever reads it and whenever it starts.
  async function* bytes(): AsyncGenerator<Buffer> {
    const file = await firstFile;
    try {
      yield* file;
    } catch {
      throw malformed('The form ended before its file part did.');
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}
