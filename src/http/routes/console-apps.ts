import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseGrace } from '../../app-keys-command.ts';
import type { AppRegistry } from '../../apps/registry.ts';
import { mapSecrets, mergeSettings, publicSettings, type AppSettings } from '../../apps/settings.ts';
import type { OperatorService } from '../../console/operators.ts';
import type { Clock } from '../../lib/clock.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppRecord } from '../../objects/types.ts';
import { appPage, maskedKey, type Rotated } from '../console/app-page.ts';
import { changedKeys, settingsPatch } from '../console/app-settings-form.ts';
import { consoleHeaders } from '../console/pages.ts';
import { backTo, field, notice, operatorOnly, session, wantsHtml, type ConsoleSession } from '../console/routing.ts';
import { formBody, textForm } from '../console/input.ts';
import { declared, pathParams, queryParams } from '../schema.ts';
import { settingsBody } from './settings.ts';

type Params = { Params: { appId: string } };

const params = pathParams('appId');
/** kind and grace are the domain's to check: a wrong one is shown on the application's page. */
const rotateForm = declared({ params, body: formBody(['kind', 'grace']) });
const deleteForm = declared({ params, body: formBody(['confirm']) });

/** The settings an operator may see: an admin the API's masked form, a viewer nothing of a secret. */
function visibleSettings(settings: AppSettings, session: ConsoleSession): AppSettings {
  return session.operator.role === 'admin' ? publicSettings(settings) : mapSecrets(settings, () => '••••••••');
}

const notices = { saved: 'Settings saved. Secrets are write-only: they are shown masked from now on.' };

/**
 * One application's page (/console/apps/:appId): its keys (masked), rotation with a grace period,
 * every setting, and deletion with the id typed as confirmation. Changes go through AppRegistry, as
 * `PUT /1.1/settings` and `roost app rotate|delete` do, and each is audited without its secrets.
 */
export async function registerConsoleAppRoutes(scope: FastifyInstance, deps: { registry: AppRegistry; operators: OperatorService; clock: Clock }): Promise<void> {
  const { registry, operators, clock } = deps;

  const appOf = async (request: FastifyRequest<Params>): Promise<AppRecord> => {
    const app = await registry.freshApp(request.params.appId);
    if (!app) throw new ApiError('objectNotFound', `No application with id ${request.params.appId}.`);
    return app;
  };

  const render = async (request: FastifyRequest<Params>, reply: FastifyReply, extra: { rotated?: Rotated; error?: string; status?: number } = {}) => {
    const app = await appOf(request);
    const contents = (await registry.contents(app.appId)) ?? { objects: 0, users: 0, installations: 0, roles: 0, classes: 0, leaderboards: 0 };
    const settings = visibleSettings(mergeSettings(app.settings), session(request));
    return appPage(reply, session(request), { app, settings, contents, now: clock.now(), notice: notice(request, notices), ...extra }, extra.status);
  };

  const rotate = async (request: FastifyRequest<Params>): Promise<Rotated> => {
    const kind = field(request.body, 'kind');
    if (kind !== 'appKey' && kind !== 'masterKey') throw new ApiError('incorrectType', 'kind must be appKey or masterKey.');
    const grace = field(request.body, 'grace').trim() || '0';
    const graceMs = parseGrace(grace);
    if (graceMs === null) throw new ApiError('incorrectType', `The grace period must be a duration like 7d, 12h, 30m or 0, not "${grace.slice(0, 20)}".`);
    const app = await registry.rotate((await appOf(request)).appId, kind, graceMs);
    if (!app) throw new ApiError('objectNotFound', `No application with id ${request.params.appId}.`);
    const until = graceMs > 0 ? clock.now() + graceMs : null;
    await operators.record(session(request).operator.name, 'app.rotate', app.appId, { kind, grace, acceptedUntil: until ? new Date(until).toISOString() : null });
    return { kind, key: app[kind], until };
  };

  const updateSettings = async (request: FastifyRequest<Params>, patch: Record<string, unknown>) => {
    const app = await appOf(request);
    const settings = await registry.updateSettings(app.appId, patch);
    if (!settings) throw new ApiError('objectNotFound', `No application with id ${app.appId}.`);
    await operators.record(session(request).operator.name, 'app.settings', app.appId, { changed: changedKeys(patch) });
    return settings;
  };

  const remove = async (request: FastifyRequest<Params>) => {
    const app = await appOf(request);
    if (field(request.body, 'confirm').trim() !== app.appId) {
      throw new ApiError('incorrectType', 'Not deleted: type the application id exactly to confirm.');
    }
    const contents = await registry.contents(app.appId);
    await registry.delete(app.appId);
    await operators.record(session(request).operator.name, 'app.delete', app.appId, { name: app.name, ...contents });
  };

  scope.get<Params>('/console/apps/:appId', { ...operatorOnly, ...declared({ params, querystring: queryParams('done') }) }, async (request, reply) => render(request, reply));
  /** A form's change: its refusal is shown on the application's page (a 404 stays the plain refusal). */
  const onPage = async (request: FastifyRequest<Params>, reply: FastifyReply, work: () => Promise<FastifyReply>) => {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 404 || !wantsHtml(request)) throw error;
      return render(request, reply, { error: error.message, status: error.status });
    }
  };
  const appPath = (request: FastifyRequest<Params>) => `/console/apps/${encodeURIComponent(request.params.appId)}`;
  scope.post<Params>('/console/apps/:appId/rotate', rotateForm, async (request, reply) =>
    onPage(request, reply, async () => render(request, reply, { rotated: await rotate(request) })));
  // One section of the settings form: every field is text, read by settingsPatch.
  scope.post<Params>('/console/apps/:appId/settings', declared({ params, body: textForm(['section']) }), async (request, reply) =>
    onPage(request, reply, async () => {
      await updateSettings(request, settingsPatch(field(request.body, 'section'), request.body as Record<string, string>));
      return backTo(reply, appPath(request), 'saved');
    }));
  scope.post<Params>('/console/apps/:appId/delete', deleteForm, async (request, reply) =>
    onPage(request, reply, async () => {
      await remove(request);
      return backTo(reply, '/console/apps');
    }));

  scope.get<Params>('/console/api/apps/:appId', { ...operatorOnly, ...declared({ params }) }, async (request, reply) => {
    const app = await appOf(request);
    const current = session(request);
    const now = clock.now();
    return consoleHeaders(reply).send({
      appId: app.appId,
      name: app.name,
      createdAt: new Date(app.createdAt).toISOString(),
      appKey: maskedKey(app.appKey, current),
      masterKey: maskedKey(app.masterKey, current),
      rotated: app.retiredKeys.filter((entry) => entry.until > now).map((entry) => ({ kind: entry.kind, key: maskedKey(entry.key, current), acceptedUntil: new Date(entry.until).toISOString() })),
      contents: await registry.contents(app.appId),
      settings: visibleSettings(mergeSettings(app.settings), current),
    });
  });
  scope.put<Params>('/console/api/apps/:appId/settings', declared({ params, body: settingsBody }), async (request, reply) =>
    consoleHeaders(reply).send(publicSettings(await updateSettings(request, request.body as Record<string, unknown>))));
  scope.post<Params>('/console/api/apps/:appId/rotate', rotateForm, async (request, reply) => {
    const rotated = await rotate(request);
    return consoleHeaders(reply).send({ kind: rotated.kind, key: rotated.key, oldKeyAcceptedUntil: rotated.until ? new Date(rotated.until).toISOString() : null });
  });
  scope.delete<Params>('/console/api/apps/:appId', deleteForm, async (request, reply) => {
    await remove(request);
    return consoleHeaders(reply).send({ deleted: request.params.appId });
  });
}
