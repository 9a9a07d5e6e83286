import type { FastifyInstance } from 'fastify';
import { isoDate } from '../../lib/clock.ts';
import { ApiError } from '../../lib/errors.ts';
import { mergeSettings } from '../../apps/settings.ts';
import { parseLimit, parseSkip } from '../../objects/query.ts';
import { notificationToWire } from '../../push/notifications.ts';
import type { PushService } from '../../push/service.ts';
import { requireMaster } from '../context.ts';
import { param, queryOf } from '../params.ts';

interface NotificationParams {
  objectId: string;
}

/** POST /1.1/push and the `_Notification` records. */
export function registerPushRoutes(app: FastifyInstance, options: { push: PushService }): void {
  const { push } = options;

  app.post('/1.1/push', async (request, reply) => {
    if (!request.ctx.master && !mergeSettings(request.ctx.app.settings).clientPushAllowed) {
      throw new ApiError('masterKeyRequired', 'Push needs the master key (or the app setting clientPushAllowed).');
    }
    const prod = request.headers['x-lc-prod'] ?? request.headers['x-svc-prod'];
    const { created, record } = await push.accept(request.ctx.appId, request.body, typeof prod === 'string' ? prod : null);
    reply.status(created ? 201 : 200);
    return { objectId: record.objectId, createdAt: isoDate(record.createdAt) };
  });

  app.get('/1.1/notifications', async (request) => {
    requireMaster(request);
    const query = queryOf(request);
    const records = await push.listNotifications(request.ctx.appId, {
      limit: parseLimit(param(query, 'limit')),
      skip: parseSkip(param(query, 'skip')),
    });
    return { results: records.map(notificationToWire) };
  });

  app.get<{ Params: NotificationParams }>('/1.1/notifications/:objectId', async (request) => {
    requireMaster(request);
    const record = await push.getNotification(request.ctx.appId, request.params.objectId);
    if (!record) throw new ApiError('objectNotFound', `No notification with id '${request.params.objectId}'.`);
    return notificationToWire(record);
  });

  app.delete<{ Params: NotificationParams }>('/1.1/notifications/:objectId', async (request) => {
    requireMaster(request);
    await push.deleteNotification(request.ctx.appId, request.params.objectId);
    return {};
  });
}
