import type { FastifyInstance } from 'fastify';
import type { AppRegistry } from '../../apps/registry.ts';
import { publicSettings } from '../../apps/settings.ts';
import { ApiError } from '../../lib/errors.ts';
import { requireMaster } from '../context.ts';

export function registerSettingsRoutes(app: FastifyInstance, options: { registry: AppRegistry }): void {
  app.get('/1.1/settings', async (request) => {
    requireMaster(request);
    const settings = await options.registry.freshSettings(request.ctx.appId);
    if (!settings) throw new ApiError('unauthorized');
    return publicSettings(settings);
  });

  app.put('/1.1/settings', async (request) => {
    requireMaster(request);
    const settings = await options.registry.updateSettings(request.ctx.appId, request.body);
    if (!settings) throw new ApiError('unauthorized');
    return publicSettings(settings);
  });
}
