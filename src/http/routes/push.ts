import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoDate } from '../../lib/clock.ts';
import { ApiError } from '../../lib/errors.ts';
import { declared, pathParams, queryParams } from '../schema.ts';
import { mergeSettings } from '../../apps/settings.ts';
import { parseLimit, parseSkip } from '../../objects/query.ts';
import { notificationToWire } from '../../push/notifications.ts';
import type { PushService } from '../../push/service.ts';
import { pushBodySchema } from '../../push/request.ts';
import { requireMaster } from '../context.ts';
import { param, queryOf } from '../params.ts';
import { isPlausibleId } from '../../objects/values.ts';
import { registerScheduledPushRoutes } from './push-schedule.ts';

interface NotificationParams {
  objectId: string;
}
const notificationParams = pathParams('objectId');

/** POST /1.1/push, the `_Notification` records and the queue of scheduled pushes. */
export function registerPushRoutes(app: FastifyInstance, options: { push: PushService }): void {
  const { push } = options;
  registerScheduledPushRoutes(app, { schedule: push.schedule });

  // Who may push is answered before what was sent.
  const mayPush = async (request: FastifyRequest) => {
    if (!request.ctx.master && !mergeSettings(request.ctx.app.settings).clientPushAllowed) {
      throw new ApiError('masterKeyRequired', 'Push needs the master key (or the app setting clientPushAllowed).');
    }
  };
  app.post<{ Body: Record<string, unknown> }>('/1.1/push', { ...declared({ body: pushBodySchema }), preValidation: mayPush }, async (request, reply) => {
    const settings = mergeSettings(request.ctx.app.settings);
    const prod = request.headers['x-lc-prod'] ?? request.headers['x-svc-prod'];
    const { created, record } = await push.accept(request.ctx, request.body, typeof prod === 'string' ? prod : null, settings);
    reply.status(created ? 201 : 200);
    return { objectId: record.objectId, createdAt: isoDate(record.createdAt) };
  });

  app.get('/1.1/notifications', declared({ querystring: queryParams('limit', 'skip') }), async (request) => {
    requireMaster(request);
    const query = queryOf(request);
    const records = await push.listNotifications(request.ctx.appId, {
      limit: parseLimit(param(query, 'limit')),
      skip: parseSkip(param(query, 'skip')),
    });
    return { results: records.map(notificationToWire) };
  });

  // The hosted service also shows a record at /1.1/tables/Notifications/<objectId> (reference §4.2).
  for (const path of ['/1.1/notifications/:objectId', '/1.1/tables/Notifications/:objectId']) {
    app.get<{ Params: NotificationParams }>(path, declared({ params: notificationParams }), async (request) => {
      requireMaster(request);
      const { objectId } = request.params;
      // Regression: a NUL byte in the id reached PostgreSQL's text column and answered 500.
      const record = isPlausibleId(objectId) ? await push.getNotification(request.ctx.appId, objectId) : null;
      if (!record) throw new ApiError('objectNotFound', `No notification with id ${JSON.stringify(objectId.slice(0, 64))}.`);
      return notificationToWire(record);
    });
  }

  app.delete<{ Params: NotificationParams }>('/1.1/notifications/:objectId', declared({ params: notificationParams }), async (request) => {
    requireMaster(request);
    if (isPlausibleId(request.params.objectId)) await push.deleteNotification(request.ctx.appId, request.params.objectId);
    return {};
  });
}
