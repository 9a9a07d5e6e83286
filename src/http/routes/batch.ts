import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import { isObject } from '../../objects/values.ts';
import { batchHeader } from './classes.ts';
import { routeNotSupported, unsupportedFeatureOf } from '../unsupported.ts';
import { declared } from '../schema.ts';
import type { SchemaObject } from 'ajv';

const maxRequests = 500;
const methods = new Set(['GET', 'POST', 'PUT', 'DELETE']);
/** Headers that carry the caller's identity into each sub-request. */
const forwarded = /^(x-lc-|x-svc-|x-avoscloud-)/;

export interface SubRequest {
  method: string;
  /** The normalised path, without the query string. */
  path: string;
  url: string;
  body: unknown;
}

/** What a sub-request answered: its status and its parsed body. */
export interface SubAnswer {
  status: number;
  body: unknown;
}

/**
 * The path a sub-request would really reach, as the router will see it: dot segments (also
 * percent-encoded), backslashes and repeated slashes resolved the way a URL parser resolves them, so
 * the route check below judges that path and not its spelling. null for a query string or fragment.
 */
function normalisePath(raw: string): string | null {
  // Clients sometimes send a full URL or the bare version prefix; only the /1.1 path matters.
  const path = raw.replace(/^https?:\/\/[^/]+/i, '').replace(/[\\/]+/g, '/');
  if (!path.startsWith('/')) return null;
  let url: URL;
  try {
    url = new URL(path, 'http://batch.invalid');
  } catch {
    return null;
  }
  if (url.search !== '' || url.hash !== '' || path.includes('?') || path.includes('#')) return null;
  return url.pathname;
}

/**
 * The file API's JSON routes: reading and deleting a file by id, saving an external URL (hosted's batch took
 * /1.1/files, reference §11). A REST upload (POST /1.1/files/<name>) carries bytes a batch cannot.
 */
function fileRequest(method: string, path: string): boolean {
  return method === 'POST' ? path === '/1.1/files' : /^\/1\.1\/files\/[^/]+$/.test(path) && method !== 'PUT';
}

function parseSubRequest(raw: unknown, index: number): SubRequest {
  const bad = (why: string) => new ApiError('invalidJson', `requests[${index}]: ${why}`);
  if (!isObject(raw)) throw bad('must be an object.');
  const method = typeof raw.method === 'string' ? raw.method.toUpperCase() : '';
  if (!methods.has(method)) throw bad('method must be GET, POST, PUT or DELETE.');
  if (typeof raw.path !== 'string') throw bad('path must be a string.');
  const path = normalisePath(raw.path);
  // A feature Roost lacks is named, as outside a batch (the SDKs batch status messages, for one).
  if (path !== null && unsupportedFeatureOf(path)) throw routeNotSupported(method, path);
  // An inbox page too: the JavaScript SDK batches a GET whose query would make too long a URL (AV.InboxQuery).
  const inbox = method === 'GET' && path === '/1.1/subscribe/statuses';
  if (path === null || !(/^\/1\.1\/(classes|users|installations)(\/|$)/.test(path) || fileRequest(method, path) || inbox)) {
    throw bad('path must be a /1.1/classes, /1.1/users, /1.1/installations or /1.1/files path without a query string.');
  }
  const query = new URLSearchParams();
  if (raw.params !== undefined) {
    if (!isObject(raw.params)) throw bad('params must be an object.');
    for (const [key, value] of Object.entries(raw.params)) {
      query.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
  }
  const search = query.toString();
  return { method, path, url: search ? `${path}?${search}` : path, body: raw.body };
}

const needsRequests = { kind: 'invalidJson', message: 'A batch needs a "requests" array.' } as const;

/**
 * A batch body (/1.1/batch and /1.1/batch/save): {"requests": [{method, path, body?, params?}, …]}. Each
 * sub-request is checked by parseSubRequest in turn, so the first bad one is the one answered.
 */
export const batchBody: SchemaObject = {
  type: 'object',
  required: ['requests'],
  'x-error': needsRequests,
  properties: {
    requests: {
      type: 'array',
      'x-error': needsRequests,
      allOf: [{ maxItems: maxRequests, 'x-error': { kind: 'invalidJson', message: `A batch may hold at most ${maxRequests} requests.` } }],
    },
  },
};

/** The sub-requests of a body batchBody let through. */
export function parseRequests(body: { requests: unknown[] }): SubRequest[] {
  return body.requests.map(parseSubRequest);
}

/**
 * Runs sub-requests of `request` through the same routes, with the caller's identity, marked as a
 * batch's (a missing object answers null).
 */
export function subRequestRunner(
  app: FastifyInstance,
  request: FastifyRequest,
): (sub: Pick<SubRequest, 'method' | 'url' | 'body'>) => Promise<SubAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', [batchHeader]: '1' };
  for (const [name, value] of Object.entries(request.headers)) {
    if (forwarded.test(name) && typeof value === 'string') headers[name] = value;
  }
  return async (sub) => {
    const response = await app.inject({
      method: sub.method as 'GET',
      url: sub.url,
      headers,
      payload: sub.method === 'GET' ? undefined : JSON.stringify(sub.body ?? {}),
    });
    return { status: response.statusCode, body: response.body === '' ? null : JSON.parse(response.body) };
  };
}

/** POST /1.1/batch: each sub-request runs through the same routes, one after another. */
export function registerBatchRoutes(app: FastifyInstance): void {
  app.post<{ Body: { requests: unknown[] } }>('/1.1/batch', declared({ body: batchBody }), async (request) => {
    const subRequests = parseRequests(request.body);
    const run = subRequestRunner(app, request);
    const results: unknown[] = [];
    for (const sub of subRequests) {
      const answer = await run(sub);
      results.push(answer.status < 300 ? { success: answer.body } : { error: answer.body });
    }
    return results;
  });
}
