import type { FastifyInstance, FastifyReply } from 'fastify';
import send from '@fastify/send';
import { ApiError } from '../../lib/errors.ts';
import type { FileService } from '../../files/service.ts';
import type { LocalDiskBackend } from '../../files/local-disk.ts';
import { incomingBytes, takeRawBodies } from './files.ts';

function notFound(reply: FastifyReply): FastifyReply {
  const missing = new ApiError('objectNotFound', 'File not found.');
  return reply.status(missing.status).send(missing.toBody());
}

/** A key names its bytes for good (a new upload gets a new key), so caches may keep them. */
const cacheControl = 'public, max-age=31536000, immutable';

/**
 * Outside the keyed scope: the PUT of an upload's bytes to the `upload_url` POST /1.1/fileTokens gave
 * (the SDK's `s3` uploader sends no application keys; the token is the permission), and, on local
 * disk, the files themselves at their URLs.
 */
export async function registerFileServing(app: FastifyInstance, options: { files: FileService; local: LocalDiskBackend | null }): Promise<void> {
  const { files, local } = options;
  await app.register(async (raw) => {
    takeRawBodies(raw);
    raw.put<{ Params: { token: string } }>('/files-upload/:token', { compress: false }, async (request, reply) => {
      const kept = await files.receiveUpload(request.params.token, incomingBytes(request));
      reply.header('ETag', `"${kept.md5}"`);
      return '';
    });
  });
  if (!local) {
    // A private bucket: its files' URLs point here, and each read is sent on to a freshly signed URL.
    app.route<{ Params: { appId: string; name: string } }>({
      method: ['GET', 'HEAD'],
      url: '/files/:appId/:name',
      handler: async (request, reply) => {
        const target = await files.backend.signedUrl?.(`${request.params.appId}/${request.params.name}`).catch(() => null);
        if (!target) return notFound(reply);
        return reply.header('Cache-Control', 'private, max-age=60').redirect(target, 302);
      },
    });
    return;
  }
  app.route<{ Params: { appId: string; name: string } }>({
    method: ['GET', 'HEAD'],
    url: '/files/:appId/:name',
    compress: false,
    handler: async (request, reply) => {
      const { appId, name } = request.params;
      const sent = await send(request.raw, `/${appId}/${name}`, {
        root: local.root,
        dotfiles: 'deny',
        index: false,
        cacheControl: false,
        etag: true,
        lastModified: true,
      });
      if (sent.type === 'error' || sent.type === 'directory') return notFound(reply);
      reply.status(sent.statusCode).headers(sent.headers);
      if (sent.statusCode === 200 || sent.statusCode === 206) reply.header('Cache-Control', cacheControl);
      return reply.send(sent.stream);
    },
  });
}
