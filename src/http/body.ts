import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import secureJson from 'secure-json-parse';
import { ApiError } from '../lib/errors.ts';
import { checkJsonShape, type JsonLimits } from '../lib/json-limits.ts';

/**
 * What a JSON body may hold besides its size (BODY_LIMIT_BYTES, 1 MiB). Above what apps send (the hosted
 * service allowed 300 fields a class; a batch of 500 objects of 40 fields is 42,000 keys and values), low
 * enough that each legal body, whatever its shape, costs tens of milliseconds of the event loop, not
 * seconds. Per byte, objects with many keys cost most (one of 1,000 keys several times one of 100: V8
 * keeps large objects as dictionaries), then objects and arrays by the thousand (bench/RESULTS.md "hardening").
 */
export const bodyLimits: JsonLimits = { maxDepth: 128, maxKeys: 500, maxValues: 50_000, maxContainers: 10_000 };

/** Bodies above this are scanned, parsed and handled in turns of their own, so other requests get in between. */
const yieldAbove = 64 * 1024;

function breachError(breach: ReturnType<typeof checkJsonShape> & object): ApiError {
  switch (breach.limit) {
    case 'depth':
      return new ApiError('invalidJson', `JSON bodies may nest at most ${breach.max} levels.`);
    case 'keys':
      return new ApiError('invalidJson', `A JSON object may hold at most ${breach.max} keys.`);
    case 'values':
      return new ApiError('payloadTooLarge', `A JSON body may hold at most ${breach.max} keys and values.`);
    case 'containers':
      return new ApiError('payloadTooLarge', `A JSON body may hold at most ${breach.max} objects and arrays.`);
  }
}

type Done = (error: Error | null, value?: unknown) => void;

function parse(body: string, done: Done): void {
  let value: unknown;
  try {
    value = secureJson.parse(body, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return done(new ApiError('invalidJson'));
  }
  if (body.length > yieldAbove) setImmediate(() => done(null, value));
  else done(null, value);
}

/**
 * Parses JSON bodies; an empty body (SDKs send one with DELETE and GET) reads as no body. The shape
 * limits are checked on the text before anything is built, so a hostile body is refused for the cost
 * of one scan; a large legal one is parsed in a turn of its own (after the scan's).
 */
export function jsonParser(_request: unknown, body: string, done: Done): void {
  if (body.trim() === '') return done(null, undefined);
  const breach = checkJsonShape(body, bodyLimits);
  if (breach) return done(breachError(breach));
  if (body.length > yieldAbove) setImmediate(() => parse(body, done));
  else parse(body, done);
}

/**
 * Errors Node's HTTP parser meets before Fastify sees a request (headers too large, a request that
 * did not arrive in time, malformed HTTP) answer {code, error} too, and close the connection.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const known =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('headersTooLarge')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('requestTimeout')
        : new ApiError('other', 'Malformed HTTP request.');
  const body = JSON.stringify(known.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
