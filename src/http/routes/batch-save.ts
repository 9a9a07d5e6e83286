import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import { dictionary } from '../../lib/lookup.ts';
import { isObject } from '../../objects/values.ts';
import { batchBody, parseRequests, subRequestRunner, type SubRequest } from './batch.ts';
import { declared } from '../schema.ts';

/** A path naming a class (or users, installations) rather than one object: where a create goes. */
const collectionPath = /^\/1\.1\/(classes\/[^/]+|users|installations)$/;

type Answer = Record<string, unknown>;

/**
 * `__children` of an Objective-C save: [{className, cid, key}], each child saved earlier in the same
 * request under `__internalId` cid (or an existing object whose objectId is cid), set as a Pointer on `key`.
 */
function linkChildren(body: Record<string, unknown>, created: Map<string, string>, index: number): void {
  const children = body.__children;
  if (children === undefined) return;
  const bad = () => new ApiError('invalidJson', `requests[${index}]: __children must be a list of {className, cid, key}.`);
  if (!Array.isArray(children)) throw bad();
  for (const child of children) {
    if (!isObject(child) || typeof child.className !== 'string' || typeof child.cid !== 'string' || typeof child.key !== 'string') {
      throw bad();
    }
    body[child.key] = { __type: 'Pointer', className: child.className, objectId: created.get(child.cid) ?? child.cid };
  }
}

/**
 * Where a sub-request goes. The Objective-C SDK sends an object's later updates as PUT to the class path
 * with the `__internalId` of its create earlier in the request: they go to the object made there. A PUT
 * to the class path naming no such create is the create itself.
 */
function target(sub: SubRequest, internalId: string | null, created: Map<string, string>): SubRequest {
  if (sub.method !== 'PUT' || !collectionPath.test(sub.path) || internalId === null) return sub;
  const objectId = created.get(internalId);
  if (objectId === undefined) return { ...sub, method: 'POST' };
  const path = `${sub.path}/${encodeURIComponent(objectId)}`;
  return { ...sub, path, url: path + sub.url.slice(sub.path.length) };
}

/**
 * POST /1.1/batch/save: the Java SDK's save of an existing object with several operations on one field,
 * and every save of the Objective-C SDK. The sub-requests run in order, each through its own route, as
 * in /1.1/batch; the answer is one object keyed by each sub-request's `__internalId` (else the objectId),
 * holding what its requests answered, merged: {"<id>": {"objectId", "createdAt"?, "updatedAt"?, …}}.
 * The first failure answers the whole request with its own status and error; what ran before it stays
 * written, as in /1.1/batch (reference §11; docs/compatibility.md).
 */
export function registerBatchSaveRoute(app: FastifyInstance): void {
  app.post<{ Body: { requests: unknown[] } }>('/1.1/batch/save', declared({ body: batchBody }), async (request, reply) => {
    const subRequests = parseRequests(request.body);
    const run = subRequestRunner(app, request);
    const created = new Map<string, string>();
    // Keys come from the client (`__internalId`): a table without a prototype keeps '__proto__' an entry.
    const answer = dictionary<Answer>();
    for (const [index, sub] of subRequests.entries()) {
      const body = isObject(sub.body) ? dictionary(sub.body) : sub.body;
      const internalId = isObject(body) && typeof body.__internalId === 'string' ? body.__internalId : null;
      if (isObject(body)) linkChildren(body, created, index);
      const routed = target(sub, internalId, created);
      const result = await run({ ...routed, body });
      if (result.status >= 300) return reply.status(result.status).send(result.body);
      const saved: Answer = isObject(result.body) ? result.body : {};
      const objectId = typeof saved.objectId === 'string' ? saved.objectId : null;
      if (routed.method === 'POST' && internalId !== null && objectId !== null) created.set(internalId, objectId);
      const key = internalId ?? objectId;
      if (key !== null) answer[key] = { ...answer[key], ...saved };
    }
    return answer;
  });
}
