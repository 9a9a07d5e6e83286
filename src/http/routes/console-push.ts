import { userPointer } from '../../objects/values.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import type { AppRecord } from '../../objects/types.ts';
import type { PushService } from '../../push/service.ts';
import { vendorNames } from '../../push/types.ts';
import { MasterRest, RestError, formJsonObject } from '../console/master-rest.ts';
import { installationsPage, notificationPage, pushPage, searchFields, type ComposeInput, type PushView } from '../console/push-pages.ts';
import { consoleHeaders, messagePage } from '../console/pages.ts';
import { field, session, wantsHtml } from '../console/routing.ts';
import { formBody } from '../console/input.ts';
import { declared, pathParams, queryParams } from '../schema.ts';
import type { ConsoleKit } from '../console/master-rest.ts';
import type { Clock } from '../../lib/clock.ts';
import { masterCallerOf } from '../../objects/query-reach.ts';

interface AppParams {
  appId: string;
}

const composeFields = ['target', 'channels', 'where', 'users', 'alert', 'title', 'badge', 'custom', 'pushTime', 'expiresIn', 'prod'] as const;
const maxUsers = 100;

const appParams = pathParams('appId');

function composeInput(body: unknown): ComposeInput {
  const input = Object.fromEntries(composeFields.map((name) => [name, field(body, name)])) as unknown as ComposeInput;
  if (!['all', 'channels', 'where', 'users'].includes(input.target)) input.target = 'all';
  return input;
}

const list = (raw: string) => raw.split(',').map((item) => item.trim()).filter(Boolean);

/** The users named by id, username or email: their ids, read through the REST API. */
async function userIds(rest: MasterRest, names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  const where = { $or: [{ objectId: { $in: names } }, { username: { $in: names } }, { email: { $in: names } }] };
  const found = await rest.ok('GET', '/classes/_User', { query: { where: JSON.stringify(where), keys: 'objectId', limit: String(maxUsers * 3) } });
  return (found.results as Array<{ objectId: string }>).map((user) => user.objectId);
}

/** The POST /1.1/push body of the compose form (reference §4.2); a fault is a RestError naming the field. */
async function pushBody(rest: MasterRest, input: ComposeInput, now: number): Promise<Record<string, unknown>> {
  const data: Record<string, unknown> = input.custom.trim() ? formJsonObject(input.custom, 'custom data') : {};
  if (input.alert) data.alert = input.alert;
  if (input.title) data.title = input.title;
  if (input.badge.trim()) data.badge = /^-?\d+$/.test(input.badge.trim()) ? Number(input.badge.trim()) : input.badge.trim();
  if (Object.keys(data).length === 0) throw new RestError(400, 113, 'A push needs an alert, a title, a badge or custom data.');
  const body: Record<string, unknown> = { data, prod: input.prod === 'dev' ? 'dev' : 'prod' };
  if (input.target === 'channels') {
    const channels = list(input.channels);
    if (channels.length === 0) throw new RestError(400, 113, 'Name at least one channel.');
    body.channels = channels;
  } else if (input.target === 'where') {
    body.where = formJsonObject(input.where || '{}', 'where');
  } else if (input.target === 'users') {
    const names = list(input.users);
    if (names.length === 0 || names.length > maxUsers) throw new RestError(400, 113, `Name 1 to ${maxUsers} users.`);
    const ids = await userIds(rest, names);
    if (ids.length === 0) throw new RestError(400, 211, 'None of those users exists.');
    body.where = { user: { $in: ids.map(userPointer) } };
  }
  if (input.pushTime) {
    const at = Date.parse(`${input.pushTime}Z`);
    if (!Number.isFinite(at)) throw new RestError(400, 111, 'The send time is not a date and time.');
    if (at > now) body.push_time = new Date(at).toISOString();
  }
  if (input.expiresIn.trim()) body.expiration_interval = Number(input.expiresIn.trim());
  return body;
}

/**
 * Installations (search, counts per vendor and state) and push (compose with the devices it will
 * reach, send, history with per-route counts, cancel a scheduled push), docs/console.md. Sending and
 * cancelling go through the REST API with the master key; the reach is PushService.reach, the
 * selection the fan-out makes.
 */
export async function registerConsolePush(scope: FastifyInstance, kit: ConsoleKit & { push: PushService; clock: Clock }): Promise<void> {
  const { operators, registry } = kit;
  const operatorOnly = { config: { console: 'operator' as const } };

  const withApp = (
    handler: (request: FastifyRequest<{ Params: AppParams }>, reply: FastifyReply, app: AppRecord, rest: MasterRest) => Promise<unknown>,
    onError?: (request: FastifyRequest<{ Params: AppParams }>, reply: FastifyReply, app: AppRecord, rest: MasterRest, error: RestError) => Promise<unknown>,
  ) => async (request: FastifyRequest<{ Params: AppParams }>, reply: FastifyReply) => {
    const app = await registry.get(request.params.appId);
    if (!app) {
      if (!wantsHtml(request)) return consoleHeaders(reply).status(404).send({ code: 101, error: 'No application with that id.' });
      return messagePage(reply, 404, 'Not found', 'No application with that id.');
    }
    const rest = new MasterRest(kit.root, app);
    try {
      return await handler(request, reply, app, rest);
    } catch (caught) {
      const error = caught instanceof ApiError ? new RestError(caught.status, caught.code, caught.message) : caught;
      if (!(error instanceof RestError)) throw caught;
      if (!wantsHtml(request)) return consoleHeaders(reply).status(error.status).send(error.toBody());
      if (onError) return onError(request, reply, app, rest, error);
      return messagePage(reply, error.status, 'Not done', error.message);
    }
  };
  const audit = (request: FastifyRequest, action: string, target: string, detail: Record<string, unknown>) =>
    operators.record(session(request).operator.name, action, target, detail);

  const count = async (rest: MasterRest, where: unknown) =>
    Number((await rest.ok('GET', '/installations', { query: { where: JSON.stringify(where), count: '1', limit: '0' } })).count);

  const searchWhere = async (rest: MasterRest, by: string, q: string): Promise<unknown> => {
    switch (by) {
      case 'installationId':
        return { installationId: q };
      case 'deviceToken':
        return { $or: [{ deviceToken: q }, { registrationId: q }] };
      case 'vendor':
        return { vendor: q };
      case 'channel':
        return { channels: q };
      default:
        return { user: { $in: (await userIds(rest, [q])).map(userPointer) } };
    }
  };

  scope.get<{ Params: AppParams; Querystring: { by?: string; q?: string } }>('/console/apps/:appId/installations', { ...operatorOnly, ...declared({ params: appParams, querystring: queryParams('by', 'q') }) }, withApp(async (request, reply, app, rest) => {
    const query = request.query as { by?: string; q?: string };
    const by = searchFields[String(query.by)] ? String(query.by) : 'installationId';
    const q = String(query.q ?? '').trim().slice(0, 256);
    const [vendorCounts, own, invalid, all] = await Promise.all([
      Promise.all(vendorNames.map(async (name) => ({ name, count: await count(rest, { vendor: name }) }))),
      count(rest, { vendor: { $exists: false } }),
      count(rest, { valid: false }),
      count(rest, {}),
    ]);
    const where = q ? await searchWhere(rest, by, q) : {};
    const found = await rest.ok('GET', '/installations', { query: { where: JSON.stringify(where), order: '-updatedAt', limit: '50' } });
    const view = { by, q, vendors: [{ name: 'own channel', count: own }, ...vendorCounts.filter((v) => v.count > 0)], valid: all - invalid, invalid, rows: found.results };
    if (!wantsHtml(request)) return consoleHeaders(reply).send({ ...view, results: view.rows, rows: undefined });
    return installationsPage(reply, session(request), app, view);
  }));

  const pushView = async (rest: MasterRest, input: ComposeInput, extra: Partial<PushView> = {}): Promise<PushView> => {
    const [notifications, scheduled] = await Promise.all([rest.ok('GET', '/notifications', { query: { limit: '50' } }), rest.ok('GET', '/scheduledPushMessages')]);
    return { input, notifications: notifications.results, scheduled: scheduled.results, ...extra };
  };
  const blank = composeInput({});

  scope.get<{ Params: AppParams; Querystring: { sent?: string; cancelled?: string } }>('/console/apps/:appId/push', { ...operatorOnly, ...declared({ params: appParams, querystring: queryParams('sent', 'cancelled') }) }, withApp(async (request, reply, app, rest) => {
    const { sent, cancelled } = request.query as { sent?: string; cancelled?: string };
    const message = sent ? `Push ${sent} accepted.` : cancelled ? `Scheduled push ${cancelled} cancelled.` : undefined;
    const view = await pushView(rest, blank, { message });
    if (!wantsHtml(request)) return consoleHeaders(reply).send({ notifications: view.notifications, scheduled: view.scheduled });
    return pushPage(reply, session(request), app, view);
  }));

  // Compose → review (the devices it will reach) → send: nothing leaves before the operator saw the count.
  scope.post<{ Params: AppParams }>('/console/apps/:appId/push/review', declared({ params: appParams, body: formBody(composeFields) }), withApp(
    async (request, reply, app, rest) => {
      const input = composeInput(request.body);
      const body = await pushBody(rest, input, kit.clock.now());
      const devices = await kit.push.reach(masterCallerOf(app), body, null);
      if (!wantsHtml(request)) return consoleHeaders(reply).send({ devices, body });
      return pushPage(reply, session(request), app, await pushView(rest, input, { review: { devices, body } }));
    },
    async (request, reply, app, rest, error) =>
      pushPage(reply, session(request), app, await pushView(rest, composeInput(request.body), { error: error.message }), error.status),
  ));

  scope.post<{ Params: AppParams }>('/console/apps/:appId/push/send', declared({ params: appParams, body: formBody(['body']) }), withApp(
    async (request, reply, app, rest) => {
      const body = JSON.parse(field(request.body, 'body') || 'null');
      if (body === null || typeof body !== 'object') throw new RestError(400, 107, 'Nothing to send: compose the push again.');
      const sent = await rest.ok('POST', '/push', { body });
      await audit(request, 'push.send', `${app.appId}/${sent.objectId}`, { target: body.channels ? 'channels' : body.where ? 'where' : 'all', scheduled: body.push_time !== undefined });
      if (!wantsHtml(request)) return consoleHeaders(reply).status(201).send(sent);
      return consoleHeaders(reply).redirect(`/console/apps/${encodeURIComponent(app.appId)}/push?sent=${encodeURIComponent(sent.objectId)}`, 303);
    },
    async (request, reply, app, rest, error) => pushPage(reply, session(request), app, await pushView(rest, blank, { error: error.message }), error.status),
  ));

  scope.post<{ Params: AppParams & { id: string } }>('/console/apps/:appId/push/scheduled/:id/cancel', declared({ params: pathParams('appId', 'id'), body: formBody([]) }), withApp(async (request, reply, app, rest) => {
    const { id } = request.params as AppParams & { id: string };
    await rest.ok('DELETE', `/scheduledPushMessages/${encodeURIComponent(id)}`);
    await audit(request, 'push.cancel', `${app.appId}/scheduled/${id}`, {});
    if (!wantsHtml(request)) return consoleHeaders(reply).send({});
    return consoleHeaders(reply).redirect(`/console/apps/${encodeURIComponent(app.appId)}/push?cancelled=${encodeURIComponent(id)}`, 303);
  }));

  scope.get<{ Params: AppParams & { objectId: string } }>('/console/apps/:appId/push/:objectId', { ...operatorOnly, ...declared({ params: pathParams('appId', 'objectId') }) }, withApp(async (request, reply, app, rest) => {
    const { objectId } = request.params as AppParams & { objectId: string };
    const record = await rest.ok('GET', `/notifications/${encodeURIComponent(objectId)}`);
    if (!wantsHtml(request)) return consoleHeaders(reply).send(record);
    return notificationPage(reply, session(request), app, record);
  }));
}
