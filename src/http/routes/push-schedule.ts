import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import { scheduledPushToWire, type PushSchedule } from '../../push/schedule.ts';
import { requireMaster } from '../context.ts';
import { declared, pathParams } from '../schema.ts';

interface ScheduledParams {
  id: string;
}

/** A job's number as it appears in the list: a positive whole number, nothing else. */
const jobNumber = /^[1-9][0-9]{0,14}$/;

/** GET /1.1/scheduledPushMessages and DELETE /1.1/scheduledPushMessages/<id> (master key, reference §4.2). */
export function registerScheduledPushRoutes(app: FastifyInstance, options: { schedule: PushSchedule }): void {
  const { schedule } = options;

  app.get('/1.1/scheduledPushMessages', async (request) => {
    requireMaster(request);
    return { results: (await schedule.list(request.ctx.appId)).map(scheduledPushToWire) };
  });

  app.delete<{ Params: ScheduledParams }>('/1.1/scheduledPushMessages/:id', declared({ params: pathParams('id') }), async (request) => {
    requireMaster(request);
    const { id } = request.params;
    const outcome = jobNumber.test(id) ? await schedule.cancel(request.ctx.appId, Number(id)) : 'unknown';
    if (outcome === 'unknown') throw new ApiError('objectNotFound', `No scheduled push with id ${JSON.stringify(id)}.`);
    if (outcome === 'started') {
      throw new ApiError('objectNotFound', `Scheduled push ${id} has started sending; it can no longer be cancelled.`);
    }
    return {};
  });
}
