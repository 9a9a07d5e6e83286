import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UserAdmin } from '../../accounts/user-admin.ts';
import type { AppRegistry } from '../../apps/registry.ts';
import type { OperatorService } from '../../console/operators.ts';
import type { Clock } from '../../lib/clock.ts';
import { ApiError } from '../../lib/errors.ts';
import type { AppRecord } from '../../objects/types.ts';
import { toWire } from '../../objects/wire.ts';
import { consoleHeaders } from '../console/pages.ts';
import { backTo, field, notice, operatorOnly, session, wantsHtml } from '../console/routing.ts';
import { userPage, usersPage } from '../console/users-page.ts';
import { formBody } from '../console/input.ts';
import { declared, pathParams, queryParams } from '../schema.ts';

type AppParams = { Params: { appId: string }; Querystring: { q?: string; done?: string } };
type UserParams = { Params: { appId: string; userId: string; action?: string }; Querystring: { done?: string } };

/** Each change an operator may make to a user: its audit action and the notice the page shows after it. */
const actions = {
  'verify-email': { audit: 'user.verifyEmail', done: 'The email is marked verified.' },
  'verify-phone': { audit: 'user.verifyPhone', done: 'The phone number is marked verified.' },
  reset: { audit: 'user.resetMail', done: 'A password reset email is on its way.' },
  revoke: { audit: 'user.revokeSessions', done: 'Signed out everywhere: the old session token is refused.' },
  unlock: { audit: 'user.unlock', done: 'Sign-in is unlocked.' },
} as const;
type Action = keyof typeof actions;

const appParams = pathParams('appId');
const userParams = pathParams('appId', 'userId');
/** An action not in the list is no route (404), as an unknown path is. */
const actionParams = {
  ...userParams,
  properties: { ...userParams.properties, action: { enum: Object.keys(actions), 'x-error': 'routeNotFound' } },
  required: ['appId', 'userId', 'action'],
};
const search = { ...operatorOnly, ...declared({ params: appParams, querystring: queryParams('q', 'done') }) };
const actionForm = declared({ params: actionParams, body: formBody([]) });

const notices: Record<string, string> = {
  ...Object.fromEntries(Object.entries(actions).map(([name, entry]) => [name, entry.done])),
  deleted: 'The user is deleted.',
};

/**
 * An application's users in the console (/console/apps/:appId/users): find by username, email,
 * phone or objectId, one user's page, and the master-key changes of UserAdmin, each audited with
 * the user's id and name (never a secret).
 */
export async function registerConsoleUserRoutes(
  scope: FastifyInstance,
  deps: { registry: AppRegistry; operators: OperatorService; users: UserAdmin; clock: Clock },
): Promise<void> {
  const { registry, operators, users, clock } = deps;

  const appOf = async (appId: string): Promise<AppRecord> => {
    const app = await registry.freshApp(appId);
    if (!app) throw new ApiError('objectNotFound', `No application with id ${appId}.`);
    return app;
  };

  const change = async (request: FastifyRequest<UserParams>, name: Action | 'delete') => {
    const { appId, userId } = request.params;
    const app = await appOf(appId);
    const { user } = await users.view(app, userId);
    const detail: Record<string, unknown> = { username: user.data.username ?? null };
    if (name === 'verify-email') await users.markVerified(app, userId, 'email');
    else if (name === 'verify-phone') await users.markVerified(app, userId, 'phone');
    else if (name === 'reset') detail.email = await users.sendReset(app, userId);
    else if (name === 'revoke') await users.revokeSessions(app, userId);
    else if (name === 'unlock') await users.unlock(app, userId);
    else await users.delete(app, userId);
    await operators.record(session(request).operator.name, name === 'delete' ? 'user.delete' : actions[name].audit, `${appId}/${userId}`, detail);
  };

  const actionOf = (request: FastifyRequest<UserParams>) => request.params.action as Action;

  const renderUser = async (request: FastifyRequest<UserParams>, reply: FastifyReply, extra: { error?: string; status?: number } = {}) => {
    const app = await appOf(request.params.appId);
    const view = await users.view(app, request.params.userId);
    return userPage(reply, session(request), app, view, clock.now(), { notice: notice(request, notices), ...extra });
  };

  scope.get<AppParams>('/console/apps/:appId/users', search, async (request, reply) => {
    const app = await appOf(request.params.appId);
    const query = typeof request.query.q === 'string' ? request.query.q.trim() : '';
    return usersPage(reply, session(request), app, query, query ? await users.search(app, query) : null, { notice: notice(request, notices) });
  });
  scope.get<UserParams>('/console/apps/:appId/users/:userId', { ...operatorOnly, ...declared({ params: userParams, querystring: queryParams('done') }) }, async (request, reply) => renderUser(request, reply));
  scope.post<UserParams>('/console/apps/:appId/users/:userId/delete', declared({ params: userParams, body: formBody(['sure']) }), async (request, reply) => {
    if (field(request.body, 'sure') !== 'on') return renderUser(request, reply, { error: 'Tick the box to confirm the deletion.', status: 400 });
    await change(request, 'delete');
    return backTo(reply, `/console/apps/${encodeURIComponent(request.params.appId)}/users`, 'deleted');
  });
  scope.post<UserParams>('/console/apps/:appId/users/:userId/:action', actionForm, async (request, reply) => {
    const name = actionOf(request);
    const path = `/console/apps/${encodeURIComponent(request.params.appId)}/users/${encodeURIComponent(request.params.userId)}`;
    try {
      await change(request, name);
    } catch (error) {
      // The domain's refusal (no address, mail not sent) on the user's page.
      if (!(error instanceof ApiError) || error.status === 404 || !wantsHtml(request)) throw error;
      return renderUser(request, reply, { error: error.message, status: error.status });
    }
    return backTo(reply, path, name);
  });

  scope.get<AppParams>('/console/api/apps/:appId/users', search, async (request, reply) => {
    const app = await appOf(request.params.appId);
    const found = await users.search(app, typeof request.query.q === 'string' ? request.query.q : '');
    return consoleHeaders(reply).send({ results: found.map((user) => toWire(user)) });
  });
  scope.get<UserParams>('/console/api/apps/:appId/users/:userId', { ...operatorOnly, ...declared({ params: userParams }) }, async (request, reply) => {
    const view = await users.view(await appOf(request.params.appId), request.params.userId);
    return consoleHeaders(reply).send({ user: toWire(view.user), lockedUntil: view.lockedUntil > clock.now() ? new Date(view.lockedUntil).toISOString() : null });
  });
  scope.post<UserParams>('/console/api/apps/:appId/users/:userId/:action', actionForm, async (request, reply) => {
    await change(request, actionOf(request));
    return consoleHeaders(reply).send({});
  });
  scope.delete<UserParams>('/console/api/apps/:appId/users/:userId', declared({ params: userParams, body: formBody([]) }), async (request, reply) => {
    await change(request, 'delete');
    return consoleHeaders(reply).send({});
  });
}
