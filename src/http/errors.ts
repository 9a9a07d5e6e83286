import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../lib/errors.ts';
import { isStatementTimeout, storeFault, type StoreFault } from '../storage/busy.ts';
import { routeNotSupported } from './unsupported.ts';

/** The one mapping of "the store cannot do it now" (src/storage/busy.ts) to 503 `unavailable`. */
const faultMessages: Record<StoreFault, string> = {
  busy: 'The database is busy. Try again in a moment.',
  unreachable: 'The database is unavailable. Try again in a moment.',
};

declare module 'fastify' {
  interface FastifyRequest {
    /** The catalogue code this request was answered with, for its log line (set where errors are sent). */
    answerCode?: number;
  }
}

/** Sends `error` as {code, error} and notes its code for the request's log line. */
function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  const body = error.toBody();
  request.answerCode = body.code;
  return reply.status(error.status).send(body);
}

/** Maps framework errors (parsing, limits, media type) to the catalogue. */
function fromFramework(error: FastifyError): ApiError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupportedMediaType');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payloadTooLarge');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalidJson');
    case 'FST_ERR_VALIDATION':
      return new ApiError('invalidJson', error.message);
  }
  if (error instanceof SyntaxError || (error as { statusCode?: number }).statusCode === 400) {
    return new ApiError('invalidJson');
  }
  if ((error as { statusCode?: number }).statusCode === 413) return new ApiError('payloadTooLarge');
  if ((error as { statusCode?: number }).statusCode === 415) return new ApiError('unsupportedMediaType');
  return null;
}

/** Every error leaves as {code, error}; unexpected ones are logged and never show their stack. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = error instanceof ApiError ? error : fromFramework(error);
    if (known) {
      sendError(request, reply, known);
      return;
    }
    if (isStatementTimeout(error)) {
      // STATEMENT_TIMEOUT_MS cut the statement (its transaction rolled back whole); sent again, it
      // would be cut again, so no Retry-After.
      request.log.warn('statement timeout');
      sendError(request, reply, new ApiError('queryTimeout'));
      return;
    }
    const fault = storeFault(error);
    if (fault) {
      // The statement or its transaction failed whole (a commit whose answer was lost is the one
      // exception any database has): the client may retry.
      request.log.warn({ code: (error as { code?: string }).code }, fault === 'busy' ? 'database busy' : 'database unreachable');
      sendError(request, reply.header('retry-after', '1'), new ApiError('unavailable', faultMessages[fault]));
      return;
    }
    request.log.error({ err: error }, 'unexpected error');
    request.answerCode = 1;
    reply.status(500).send({ code: 1, error: 'Internal server error.' });
  });
  app.setNotFoundHandler((request, reply) => {
    sendError(request, reply, routeNotSupported(request.method, request.url));
  });
}
