import type { FastifyInstance } from 'fastify';
import type { AppRegistry } from '../../apps/registry.ts';
import { publicSettings } from '../../apps/settings.ts';
import { ApiError } from '../../lib/errors.ts';
import { requireMaster } from '../context.ts';
import { declared } from '../schema.ts';

/** A settings patch (PUT /1.1/settings, the console's settings API): each value is the settings code's to check. */
export const settingsBody = { type: 'object', 'x-error': { kind: 'invalidJson', message: 'Settings must be a JSON object.' } };

export function registerSettingsRoutes(app: FastifyInstance, options: { registry: AppRegistry }): void {
  app.get('/1.1/settings', async (request) => {
    requireMaster(request);
    const settings = await options.registry.freshSettings(request.ctx.appId);
    if (!settings) throw new ApiError('unauthorized');
    return publicSettings(settings);
  });

  // The master key is asked for before the body is read. Each setting's value is checked by the
  // settings code, which the console and the CLI share (src/apps/settings.ts), in the body's key order.
  app.put('/1.1/settings', { ...declared({ body: settingsBody }), preValidation: async (request) => requireMaster(request) }, async (request) => {
    const settings = await options.registry.updateSettings(request.ctx.appId, request.body);
    if (!settings) throw new ApiError('unauthorized');
    return publicSettings(settings);
  });
}
