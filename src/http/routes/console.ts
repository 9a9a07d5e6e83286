import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppRegistry } from '../../apps/registry.ts';
import type { Operator, OperatorService } from '../../console/operators.ts';
import { safeEqual } from '../../lib/crypto.ts';
import type { Clock } from '../../lib/clock.ts';
import { ApiError } from '../../lib/errors.ts';
import { registerConsoleAppRoutes } from './console-apps.ts';
import { registerConsoleData } from './console-data.ts';
import { registerConsolePush } from './console-push.ts';
import type { PushService } from '../../push/service.ts';
import type { Store } from '../../storage/store.ts';
import { registerConsoleUserRoutes } from './console-users.ts';
import type { UserAdmin } from '../../accounts/user-admin.ts';
import { appsPage, auditPage, consoleHeaders, messagePage, signInPage } from '../console/pages.ts';
import { registerConsoleOperatorRoutes } from './console-operators.ts';
import { registerConsoleOverview } from './console-overview.ts';
import type { TrafficStats } from '../../console/traffic.ts';
import { declared } from '../schema.ts';
import { formBody } from '../console/input.ts';
import { consoleRefusals, field, isApi, operatorOnly, refuse, session, sessionOf, setSession, wantsHtml } from '../console/routing.ts';

/** The session cookie: scoped to the console's paths, unreadable by scripts, never sent cross-site. */
const cookieName = 'roost_console';
const maxNameLength = 100;

const changes = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function cookieToken(request: FastifyRequest): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === cookieName) return part.slice(at + 1).trim();
  }
  return undefined;
}

function sessionCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${cookieName}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

/**
 * A change must come from the console's own pages: a browser names the page's origin (Origin, or
 * Sec-Fetch-Site), and one from elsewhere is refused. A client that sends neither (curl) still needs
 * the session's CSRF token for every change but sign-in.
 */
function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined) return origin === `${request.protocol}://${request.host}`;
  const site = request.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}

function csrfOf(request: FastifyRequest): string {
  const header = request.headers['x-csrf-token'];
  if (typeof header === 'string') return header;
  const body = request.body as { _csrf?: unknown } | undefined;
  return typeof body?._csrf === 'string' ? body._csrf : '';
}

function operatorView(operator: Operator) {
  return { name: operator.name, role: operator.role, createdAt: new Date(operator.createdAt).toISOString() };
}

/**
 * The console at /console: HTML pages for people, the same actions as JSON under /console/api for
 * scripts and tests. Every route but sign-in needs an operator's session; every change needs the
 * session's CSRF token and the same origin, and every change but sign-out needs the admin role.
 * Actions go through the domain services the REST API and the CLI use (AppRegistry, OperatorService).
 */
export interface ConsoleDeps {
  operators: OperatorService;
  registry: AppRegistry;
  clock: Clock;
  /** For the data browser's import (src/import) and the push page's reach. */
  store: Store;
  secret: string;
  push: PushService;
  users: UserAdmin;
  /** The overview's counts (src/console/traffic.ts). */
  traffic: TrafficStats;
}

export async function registerConsoleRoutes(app: FastifyInstance, options: ConsoleDeps): Promise<void> {
  const { operators, registry } = options;
  const maxAge = Math.floor(operators.sessionMs / 1000);

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );

    scope.addHook('onRequest', async (request, reply) => {
      const access = request.routeOptions.config.console ?? 'admin';
      if (changes.has(request.method) && !sameOrigin(request)) {
        return refuse(request, reply, consoleRefusals.crossSite);
      }
      if (access === 'public') return;
      const token = cookieToken(request);
      const operator = token ? await operators.resolve(token) : null;
      if (!operator || !token) {
        if (!isApi(request) && request.method === 'GET') return consoleHeaders(reply).redirect('/console/sign-in', 303);
        return refuse(request, reply, consoleRefusals.signedOut);
      }
      setSession(request, { operator, token, csrf: operators.csrfToken(token) });
    });

    // After the body is read (a form carries its CSRF token as a field), before the route's schema:
    // who may change anything is answered before what the change says.
    scope.addHook('preValidation', async (request, reply) => {
      const current = sessionOf(request);
      if (!current || !changes.has(request.method)) return;
      if (!safeEqual(csrfOf(request), current.csrf)) {
        return refuse(request, reply, consoleRefusals.csrf);
      }
      if ((request.routeOptions.config.console ?? 'admin') === 'admin' && current.operator.role !== 'admin') {
        return refuse(request, reply, consoleRefusals.viewer);
      }
    });

    // A refusal of the domain (ApiError) answers as a page for a browser and as {code, error} otherwise;
    // anything else goes on to the server's handler.
    scope.setErrorHandler(async (error, request, reply) => {
      if (error instanceof ApiError) return refuse(request, reply, error);
      throw error;
    });
    // The page groups in files of their own (docs/console.md, "Adding a page").
    await registerConsoleAppRoutes(scope, options);
    // The data browser and push act through the REST API (the root instance) with the app's master key.
    await registerConsoleData(scope, { ...options, root: app });
    await registerConsolePush(scope, { ...options, root: app });
    await registerConsoleUserRoutes(scope, options);
    await registerConsoleOperatorRoutes(scope, options);
    registerConsoleOverview(scope, options);

    const open = { config: { console: 'public' as const } };
    const signInForm = declared({ body: formBody(['name', 'password', 'code']) });
    const nameForm = declared({ body: formBody(['name']) });
    const emptyForm = declared({ body: formBody([]) });

    const signIn = async (request: FastifyRequest, reply: FastifyReply) => {
      const name = field(request.body, 'name');
      const outcome = await operators.signIn(name, field(request.body, 'password'), field(request.body, 'code'));
      if (!outcome.ok) {
        const error = outcome.reason === 'locked'
          ? new ApiError('rateLimited', 'Too many failed sign-ins: this operator is locked for a while.')
          : outcome.reason === 'codeNeeded'
            ? new ApiError('unauthorized', 'This operator uses TOTP: enter the password and the code from the authenticator app (or a recovery code).')
            : outcome.reason === 'wrongCode'
              ? new ApiError('unauthorized', 'The code is wrong, expired or used already.')
              : new ApiError('unauthorized', 'The name or the password is wrong.');
        if (!wantsHtml(request)) return refuse(request, reply, error);
        return signInPage(reply, error.status, { name: name.slice(0, maxNameLength), error: error.message });
      }
      reply.header('Set-Cookie', sessionCookie(request, outcome.token, maxAge));
      if (isApi(request)) {
        return consoleHeaders(reply).send({ operator: operatorView(outcome.operator), csrfToken: operators.csrfToken(outcome.token) });
      }
      return consoleHeaders(reply).redirect('/console/apps', 303);
    };
    const signOut = async (request: FastifyRequest, reply: FastifyReply) => {
      const { token, operator } = session(request);
      await operators.signOut(token, operator);
      reply.header('Set-Cookie', sessionCookie(request, '', 0));
      if (isApi(request)) return consoleHeaders(reply).send({});
      return consoleHeaders(reply).redirect('/console/sign-in', 303);
    };
    /** Creates an application as `roost app create --name` does; its keys are answered this once. */
    const createApp = async (request: FastifyRequest) => {
      const name = field(request.body, 'name').trim();
      if (!name || name.length > maxNameLength) return new ApiError('missingRequired', `An application needs a name of 1 to ${maxNameLength} characters.`);
      const keys = await registry.create(name);
      await operators.record(session(request).operator.name, 'app.create', keys.appId, { name });
      return { ...keys, name };
    };
    const appList = async () => (await registry.list()).sort((a, b) => b.createdAt - a.createdAt);

    scope.get('/console', operatorOnly, async (_request, reply) => consoleHeaders(reply).redirect('/console/apps', 303));
    scope.get('/console/sign-in', open, async (request, reply) => {
      if (await operators.resolve(cookieToken(request))) return consoleHeaders(reply).redirect('/console/apps', 303);
      return signInPage(reply, 200);
    });
    scope.post('/console/sign-in', { ...open, ...signInForm }, signIn);
    scope.post('/console/sign-out', { ...operatorOnly, ...emptyForm }, signOut);
    scope.get('/console/apps', operatorOnly, async (request, reply) => appsPage(reply, session(request), await appList()));
    scope.post('/console/apps', nameForm, async (request, reply) => {
      const created = await createApp(request);
      if (created instanceof ApiError) return wantsHtml(request) ? messagePage(reply, created.status, 'Not created', created.message) : refuse(request, reply, created);
      return appsPage(reply, session(request), await appList(), created);
    });
    scope.get('/console/audit', operatorOnly, async (request, reply) => auditPage(reply, session(request), await operators.listAudit(200)));

    scope.post('/console/api/sign-in', { ...open, ...signInForm }, signIn);
    scope.post('/console/api/sign-out', { ...operatorOnly, ...emptyForm }, signOut);
    scope.get('/console/api/session', operatorOnly, async (request, reply) => {
      const { operator, csrf } = session(request);
      return consoleHeaders(reply).send({ operator: operatorView(operator), csrfToken: csrf });
    });
    // The list shows no key to anyone: keys are read (and later rotated) one application at a time, by an admin.
    scope.get('/console/api/apps', operatorOnly, async (_request, reply) => {
      const apps = await appList();
      return consoleHeaders(reply).send({ results: apps.map((a) => ({ appId: a.appId, name: a.name, createdAt: new Date(a.createdAt).toISOString() })) });
    });
    scope.post('/console/api/apps', nameForm, async (request, reply) => {
      const created = await createApp(request);
      if (created instanceof ApiError) return refuse(request, reply, created);
      return consoleHeaders(reply).status(201).send(created);
    });
    scope.get('/console/api/audit', operatorOnly, async (_request, reply) => {
      const entries = await operators.listAudit(200);
      return consoleHeaders(reply).send({ results: entries.map((e) => ({ ...e, at: new Date(e.at).toISOString() })) });
    });
  });
}
