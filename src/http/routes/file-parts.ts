import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail } from '../../lib/errors.ts';
import type { FileService } from '../../files/service.ts';
import type { UploadParts } from '../../files/upload-parts.ts';
import { formFile, isForm } from '../form-file.ts';
import { declared, objectBody, pathParams } from '../schema.ts';
import { incomingBytes, takeRawBodies } from './files.ts';

type UploadParams = { token: string; bucket: string; key: string };
type PartParams = UploadParams & { uploadId: string; partNumber: string };

/** The token of the URL, which the SDK's qiniu uploader also sends as `Authorization: UpToken <token>`: never two. */
function tokenOf(request: FastifyRequest<{ Params: { token: string } }>): string {
  const sent = request.headers.authorization;
  if (sent !== undefined && sent !== `UpToken ${request.params.token}`) fail('fileTokenInvalid', 'The Authorization header names another upload token.');
  return request.params.token;
}

const uploads = '/files-qiniu/:token/buckets/:bucket/objects/:key/uploads';
const form = declared({ params: pathParams('token') });
const upload = declared({ params: pathParams('token', 'bucket', 'key') });
const part = declared({ params: pathParams('token', 'bucket', 'key', 'uploadId', 'partNumber') });
const started = declared({ params: pathParams('token', 'bucket', 'key', 'uploadId') });
const completion = declared({ params: pathParams('token', 'bucket', 'key', 'uploadId'), body: objectBody });

/**
 * The upload of a file whose size the SDK did not know (POST /1.1/fileTokens answered `qiniu`, docs/files.md),
 * outside /1.1 (the uploader sends no application keys; the token in the URL is the permission): qiniu's form
 * upload (the SDK's for `{base64}` data) and its multipart protocol v2 (the SDK's for a Node stream).
 */
export async function registerFileParts(app: FastifyInstance, options: { files: FileService; parts: UploadParts }): Promise<void> {
  const { files, parts } = options;
  await app.register(async (raw) => {
    takeRawBodies(raw);
    raw.post<{ Params: { token: string } }>('/files-qiniu/:token', form, async (request) => {
      const token = tokenOf(request);
      await files.openUpload(token);
      if (!isForm(request.headers)) fail('other', 'A form upload is multipart/form-data with the file as its first file part.');
      const bytes = incomingBytes(request);
      const kept = await files.receiveUpload(token, { ...bytes, body: formFile(request.raw, request.headers), length: null });
      return { hash: kept.md5 };
    });
    raw.put<{ Params: PartParams }>(`${uploads}/:uploadId/:partNumber`, part, async (request) => {
      const { key, uploadId, partNumber } = request.params;
      return parts.putPart(tokenOf(request), key, uploadId, partNumber, incomingBytes(request));
    });
  });
  app.post<{ Params: UploadParams }>(uploads, upload, (request) => parts.start(tokenOf(request), request.params.key));
  app.post<{ Params: UploadParams & { uploadId: string } }>(`${uploads}/:uploadId`, completion, (request) => {
    const socket = request.raw.socket;
    return parts.complete(tokenOf(request), request.params.key, request.params.uploadId, request.body, () => socket.destroyed);
  });
  app.delete<{ Params: UploadParams & { uploadId: string } }>(`${uploads}/:uploadId`, started, async (request) => {
    await parts.abort(tokenOf(request), request.params.key, request.params.uploadId);
    return {};
  });
}
