import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { ApiError } from '../lib/errors.ts';
import { checkJsonShape, type JsonLimits } from '../lib/json-limits.ts';
import { batchHeader } from './routes/classes.ts';

/**
 * What a JSON body may hold besides its size (BODY_LIMIT_BYTES, 1 MiB). Above what apps send (the hosted
 * service allowed 300 fields a class; a batch of 500 objects of 40 fields is 42,000 keys and values), low
 * enough that each legal body, whatever its shape, costs tens of milliseconds of the event loop, not
 * seconds. Per byte, objects with many keys cost most (one of 1,000 keys several times one of 100: V8
 * keeps large objects as dictionaries), then objects and arrays by the thousand (bench/RESULTS.md "hardening").
 */
export const bodyLimits: JsonLimits = { maxDepth: 128, maxKeys: 500, maxValues: 50_000, maxContainers: 10_000 };

/** Bodies above this are large: scanned, parsed and handled one request at a time, in turns of their own. */
const yieldAbove = 64 * 1024;

/**
 * Large bodies take turns: one request with a large body at a time is scanned, parsed and handled (to
 * its response), the others wait for it without touching the event loop. However many arrive at once, a
 * small request then waits behind one large body's work at most, not behind all of them. The turn
 * passes on when the response is sent (endBodyTurn, from an onResponse hook) or the connection closes.
 */
const turns = { busy: false, waiting: [] as Array<() => void> };
const holdsTurn = Symbol('roost.bodyTurn');
type TurnRequest = FastifyRequest & { [holdsTurn]?: () => void };

function takeTurn(request: TurnRequest, run: () => void, abandon: () => void): void {
  const start = () => {
    const end = () => endBodyTurn(request);
    request[holdsTurn] = end;
    // A client that left while its body waited gets no work done for it.
    if (request.raw.socket?.destroyed) {
      end();
      return abandon();
    }
    request.raw.socket?.once('close', end);
    run();
  };
  if (turns.busy) turns.waiting.push(start);
  else {
    turns.busy = true;
    start();
  }
}

export function endBodyTurn(request: FastifyRequest): void {
  const end = (request as TurnRequest)[holdsTurn];
  if (!end) return;
  (request as TurnRequest)[holdsTurn] = undefined;
  request.raw.socket?.removeListener('close', end);
  const next = turns.waiting.shift();
  if (next) setImmediate(next);
  else turns.busy = false;
}

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

function scanAndParse(body: string, done: Done): void {
  const breach = checkJsonShape(body, bodyLimits);
  if (breach) return done(breachError(breach));
  if (body.length > yieldAbove) setImmediate(() => parse(body, done));
  else parse(body, done);
}

/**
 * Parses JSON bodies; an empty body (SDKs send one with DELETE and GET) reads as no body. The shape
 * limits are checked on the text before anything is built, so a hostile body is refused for the cost
 * of one scan; a large legal one waits for its turn (takeTurn) and is parsed in a loop turn of its own.
 * A batch's sub-requests run inside their batch's turn.
 */
export function jsonParser(request: FastifyRequest, body: string, done: Done): void {
  if (body.trim() === '') return done(null, undefined);
  if (body.length <= yieldAbove || request.headers[batchHeader]) return scanAndParse(body, done);
  takeTurn(request, () => scanAndParse(body, done), () => done(new ApiError('other', 'The connection was closed.')));
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
  // An answer to HEAD carries no body (a client reads what follows as a broken next response). The
  // method is known when the bytes the parser refused start the request; a request whose headers
  // overflow in a later chunk cannot be told apart and gets the body.
  const head = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  }
  socket.destroy(error);
}
