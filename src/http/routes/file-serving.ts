import { declared, pathParams, queryParams } from '../schema.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SignedFileUrls } from '../../files/url-signing.ts';
import { maxImagePixels, maxThumbnailPixels, maxThumbnailsPerFile, thumbnailSpec, type ThumbnailRefusal } from '../../files/thumbnails.ts';
import send from '@fastify/send';
import { ApiError } from '../../lib/errors.ts';
import { checkKey } from '../../files/backend.ts';
import type { FileService } from '../../files/service.ts';
import { diskChunkBytes, type LocalDiskBackend } from '../../files/local-disk.ts';
import { incomingBytes, takeRawBodies } from './files.ts';

function refuse(reply: FastifyReply, message: string): FastifyReply {
  const refused = new ApiError('other', message);
  return reply.status(refused.status).send(refused.toBody());
}

function notFound(reply: FastifyReply): FastifyReply {
  const missing = new ApiError('objectNotFound', 'File not found.');
  return reply.status(missing.status).send(missing.toBody());
}

/** The key a file URL names (its path decoded once), or null for one no upload could have made. */
function keyOf(appId: string, rest: string): string | null {
  try {
    return checkKey(`${appId}/${rest}`);
  } catch {
    return null;
  }
}

const thumbnailRefusals: Record<ThumbnailRefusal, string> = {
  notImage: 'This file is not an image a thumbnail can be made of.',
  tooLarge: `This image has more than ${maxImagePixels} pixels: no thumbnail is made of it.`,
  tooMany: `At most ${maxThumbnailsPerFile} thumbnail sizes are made of one file.`,
};

/** What a thumbnail that was not made answers; null for what was made (a URL, a path). */
function refusalOf(made: string): string | null {
  return Object.hasOwn(thumbnailRefusals, made) ? thumbnailRefusals[made as ThumbnailRefusal] : null;
}

/** A key names its bytes for good (a new upload gets a new key), so caches may keep them. */
const cacheControl = 'public, max-age=31536000, immutable';

/**
 * Outside the keyed scope: the PUT of an upload's bytes to the `upload_url` POST /1.1/fileTokens gave
 * (the SDK's `s3` uploader sends no application keys; the token is the permission), and, on local
 * disk, the files themselves at their URLs.
 */
export async function registerFileServing(
  app: FastifyInstance,
  options: { files: FileService; local: LocalDiskBackend | null; signed: SignedFileUrls | null },
): Promise<void> {
  const { files, local } = options;
  await app.register(async (raw) => {
    takeRawBodies(raw);
    raw.put<{ Params: { token: string } }>('/files-upload/:token', { ...declared({ params: pathParams('token') }), compress: false }, async (request, reply) => {
      const kept = await files.receiveUpload(request.params.token, incomingBytes(request));
      reply.header('ETag', `"${kept.md5}"`);
      return '';
    });
  });
  const signed = options.signed;
  type FileRequest = FastifyRequest<{ Params: { appId: string; '*': string }; Querystring: { expires?: string; signature?: string } }>;
  // Private files (FILES_SIGNED_URL_SECONDS): a URL works only as an answer signed it, until it expires.
  const preHandler = async (request: FileRequest, reply: FastifyReply) => {
    // thumbnailURL appends "?imageView/…" to a signed URL's own query: the signature ends at that "?".
    // A parameter given twice arrives as a list: not a signature this server gave (verify refuses it).
    const given: unknown = request.query.signature;
    const signature = typeof given === 'string' ? given.split('?')[0] : given;
    if (signed && !signed.verify(request.url.split('?')[0], request.query.expires, signature)) {
      const refused = new ApiError('forbidden', 'This file URL needs a valid signature: read the file record again for a fresh one.');
      return reply.status(refused.status).send(refused.toBody());
    }
  };
  const cacheable = signed ? 'private, max-age=60' : cacheControl;
  app.route<{ Params: { appId: string; '*': string }; Querystring: { expires?: string; signature?: string } }>({
    method: ['GET', 'HEAD'],
    url: '/files/:appId/*',
    ...declared({ params: pathParams('appId', '*'), querystring: queryParams('expires', 'signature') }),
    compress: false,
    preHandler,
    handler: async (request, reply) => {
      const key = keyOf(request.params.appId, request.params['*']);
      if (key === null) return notFound(reply);
      const spec = thumbnailSpec(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));
      if (spec === 'invalid') {
        return refuse(reply, `A thumbnail is asked as imageView/<1|2>/w/<1-4096>/h/<1-4096>[/q/<1-100>][/format/png|jpg|webp|gif], w×h at most ${maxThumbnailPixels} pixels.`);
      }
      if (!local) {
        // A private bucket: its files' URLs point here, and each read is sent on to a freshly signed URL.
        const target = spec ? await files.backend.thumbnailUrl?.(key, spec) : await files.backend.signedUrl?.(key).catch(() => null);
        if (!target) return notFound(reply);
        const refusal = refusalOf(target);
        if (refusal) return refuse(reply, refusal);
        return reply.header('Cache-Control', 'private, max-age=60').redirect(target, 302);
      }
      let path = key;
      let root = local.root;
      if (spec) {
        const made = await local.thumbnail(key, spec);
        if (made === null) return notFound(reply);
        const refusal = refusalOf(made);
        if (refusal) return refuse(reply, refusal);
        path = made;
        root = local.thumbnailRoot;
      }
      // send decodes the path it is given: each part goes encoded, so a name holding "%" stays itself.
      const sent = await send(request.raw, `/${path.split('/').map(encodeURIComponent).join('/')}`, {
        root,
        dotfiles: 'deny',
        index: false,
        cacheControl: false,
        etag: true,
        lastModified: true,
        highWaterMark: diskChunkBytes,
      });
      if (sent.type === 'error' || sent.type === 'directory') return notFound(reply);
      reply.status(sent.statusCode).headers(sent.headers);
      if (sent.statusCode === 200 || sent.statusCode === 206) reply.header('Cache-Control', cacheable);
      return reply.send(sent.stream);
    },
  });
}
