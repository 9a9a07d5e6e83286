import type { FastifyInstance } from 'fastify';
import { isoDate } from '../../lib/clock.ts';
import { fail } from '../../lib/errors.ts';
import type { ObjectService } from '../../objects/service.ts';
import type { JsonObject } from '../../objects/types.ts';
import type { Statuses, StatusMessage } from '../../social/statuses.ts';
import { answerObject, answerObjects } from '../answer.ts';
import { listParams, listQuery, param, queryOf, type Query } from '../params.ts';
import { declared, objectBody, pathParams, queryParams } from '../schema.ts';

/** A message number of the query (sinceId, maxId, messageId): a whole number, 0 when absent. */
function messageNumber(query: Query, name: string): number {
  const raw = param(query, name);
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,15}$/.test(raw)) fail('invalidQuery', `${name} must be a whole number.`);
  return Number(raw);
}

const inboxQuery = queryParams('owner', 'inboxType');

/** Status messages and inboxes (README "Status messages"), as `AV.Status` and `AV.InboxQuery` call them. */
export function registerStatusRoutes(app: FastifyInstance, options: { statuses: Statuses; objects: ObjectService }): void {
  const { statuses, objects } = options;

  app.post('/1.1/statuses', declared({ body: objectBody }), async (request, reply) => {
    const status = await statuses.send(request.ctx, request.body as StatusMessage);
    // The hosted service's Location names the class (AV.Status/Send status recordings).
    reply.code(201).header('Location', `/1.1/classes/_Status/${status.objectId}`);
    return { objectId: status.objectId, createdAt: isoDate(status.createdAt) };
  });

  app.get<{ Params: { objectId: string } }>('/1.1/statuses/:objectId', declared({ params: pathParams('objectId'), querystring: listQuery }), async (request) => {
    const found = await objects.get(request.ctx, '_Status', request.params.objectId);
    if (found === null || found === 'noClass') return {};
    return answerObject(objects, request.ctx, found, listParams(queryOf(request)));
  });

  app.delete<{ Params: { objectId: string } }>('/1.1/statuses/:objectId', declared({ params: pathParams('objectId') }), async (request) => {
    await statuses.remove(request.ctx, request.params.objectId);
    return {};
  });

  app.get('/1.1/subscribe/statuses', declared({ querystring: queryParams('owner', 'inboxType', 'sinceId', 'maxId', 'where', 'limit', 'skip', 'include', 'keys', 'order', 'count', 'returnACL') }), async (request) => {
    const query = queryOf(request);
    const params = listParams(query);
    const page = await statuses.inbox(request.ctx, {
      owner: param(query, 'owner'),
      inboxType: param(query, 'inboxType'),
      sinceId: messageNumber(query, 'sinceId'),
      maxId: messageNumber(query, 'maxId'),
      limit: param(query, 'limit') === undefined ? 100 : params.limit,
      where: params.where,
    });
    const answered = await answerObjects(objects, request.ctx, page.statuses.map((entry) => entry.status), params);
    const results: JsonObject[] = answered.map((status, i) => ({ ...status, messageId: page.statuses[i].messageId }));
    return { results, end: page.end };
  });

  app.get('/1.1/subscribe/statuses/count', declared({ querystring: inboxQuery }), async (request) => {
    const query = queryOf(request);
    return statuses.count(request.ctx, param(query, 'owner'), param(query, 'inboxType'));
  });

  app.post<{ Body: { owner?: unknown; inboxType?: unknown } }>('/1.1/subscribe/statuses/resetUnreadCount', declared({ body: objectBody }), async (request) => {
    await statuses.resetUnread(request.ctx, request.body.owner, request.body.inboxType);
    return {};
  });

  app.delete('/1.1/subscribe/statuses/inbox', declared({ querystring: queryParams('owner', 'inboxType', 'messageId') }), async (request) => {
    const query = queryOf(request);
    const messageId = messageNumber(query, 'messageId');
    if (messageId === 0) fail('invalidQuery', 'messageId names the inbox entry to delete.');
    await statuses.removeFromInbox(request.ctx, param(query, 'owner'), param(query, 'inboxType'), messageId);
    return {};
  });
}
