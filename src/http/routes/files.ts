import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoDate } from '../../lib/clock.ts';
import { ApiError } from '../../lib/errors.ts';
import { parseWriteBody, type ObjectService } from '../../objects/service.ts';
import type { ClassAccess } from '../class-access.ts';
import { fileClass, type FileService, type IncomingBytes } from '../../files/service.ts';
import { queryOf, listParams, listQuery } from '../params.ts';
import { answerObject } from '../answer.ts';
import { batchHeader, genericHandlers, missing, type ClassHandlers } from './classes.ts';
import type { JsonObject } from '../../objects/types.ts';
import { declared, objectBody as objectSchema, pathParams } from '../schema.ts';

type JsonBody = { Body: JsonObject };
const objectBody = declared({ body: objectSchema });
const fileParams = pathParams('objectId');

/** A body handed over as it arrives, never parsed or gathered: file bytes stream on to the backend. */
export function takeRawBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
}

export function incomingBytes(request: FastifyRequest): IncomingBytes {
  const length = request.headers['content-length'];
  const socket = request.raw.socket;
  return { body: request.raw, length: length === undefined ? null : Number(length), gone: () => socket.destroyed };
}

/**
 * The SDKs' file API under /1.1 (docs/files.md): upload tokens and their callback, the REST upload
 * and external URLs, reading and deleting a file by id.
 */
export async function registerFileRoutes(api: FastifyInstance, options: { files: FileService; objects: ObjectService }): Promise<void> {
  const { files, objects } = options;

  api.post<JsonBody>('/1.1/fileTokens', objectBody, (request) => files.grantUpload(request.ctx, request.body));
  api.post<JsonBody>('/1.1/fileCallback', objectBody, async (request) => {
    await files.settleUpload(request.body);
    return {};
  });
  api.post<JsonBody>('/1.1/files', objectBody, async (request, reply) => {
    const saved = await files.saveExternal(request.ctx, request.body);
    reply.status(201).header('Location', `/1.1/files/${saved.objectId}`);
    return { objectId: saved.objectId, createdAt: isoDate(saved.createdAt) };
  });
  api.get<{ Params: { objectId: string } }>('/1.1/files/:objectId', declared({ params: fileParams, querystring: listQuery }), async (request) => {
    const found = await objects.get(request.ctx, fileClass, request.params.objectId);
    // In a batch a missing object answers null, as a batch GET of /1.1/classes does (reference §11).
    if (found === null || found === 'noClass') {
      if (request.headers[batchHeader]) return null;
      throw new ApiError('objectNotFound', 'Could not find file.');
    }
    return answerObject(objects, request.ctx, found, listParams(queryOf(request)));
  });
  api.delete<{ Params: { objectId: string } }>('/1.1/files/:objectId', declared({ params: fileParams }), async (request) => {
    await files.remove(request.ctx, request.params.objectId);
    return {};
  });
  await api.register(async (raw) => {
    takeRawBodies(raw);
    raw.post<{ Params: { name: string } }>('/1.1/files/:name', declared({ params: pathParams('name') }), async (request, reply) => {
      const answer = await files.uploadDirect(request.ctx, request.params.name, request.headers['content-type'], incomingBytes(request));
      reply.status(201).header('Location', `/1.1/files/${String(answer.objectId)}`);
      return answer;
    });
  });
}

/**
 * `_File` through /1.1/classes: read and queried under ACLs like any class; written only through the
 * file API, as the hosted service had it, since a record without its bytes (or bytes without a record)
 * is what that API exists to prevent. Deleting one deletes its bytes too.
 */
/** `_File` objects are made by uploads: a write of one as a plain object is refused (an update only for the master key). */
async function refuseFileWrite(): Promise<never> {
  throw new ApiError('operationForbidden', 'Files are created through /1.1/fileTokens or /1.1/files, not /1.1/classes/_File.');
}

/** `_File` as scan and CQL reach it: the rules of the handlers below. */
export function fileClassAccess(objects: ObjectService, files: FileService): Partial<ClassAccess> {
  return {
    create: refuseFileWrite,
    update: (ctx, className, objectId, body, condition) =>
      ctx.master ? objects.update(ctx, className, objectId, parseWriteBody(body), condition) : refuseFileWrite(),
    remove: (ctx, _className, objectId) => files.remove(ctx, objectId),
  };
}

export function fileClassHandlers(objects: ObjectService, files: FileService): ClassHandlers {
  const generic = genericHandlers(objects);
  const refuse = refuseFileWrite;
  return {
    create: refuse,
    get: async (request, reply, className, objectId) => {
      const found = await objects.get(request.ctx, className, objectId);
      if (found === null || found === 'noClass') return missing(request, found);
      reply.type('application/json; charset=utf-8');
      return answerObject(objects, request.ctx, found, listParams(queryOf(request)));
    },
    update: (request, reply, className, objectId) => (request.ctx.master ? generic.update(request, reply, className, objectId) : refuse()),
    remove: async (request, _reply, _className, objectId) => {
      await files.remove(request.ctx, objectId);
      return {};
    },
    find: generic.find,
    admit: {
      create: refuse,
      update: async (request) => {
        if (!request.ctx.master) await refuse();
      },
    },
  };
}
