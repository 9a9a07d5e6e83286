import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../lib/errors.ts';
import { consoleHeaders, messagePage, type PageSession } from './pages.ts';

/**
 * What the console's route files share: the request's operator session, the page-or-JSON choice, and
 * the refusal in either form. The hooks that set the session live in src/http/routes/console.ts; a
 * route group registered inside its scope (registerConsoleAppRoutes, …) reads them from here.
 */
export interface ConsoleSession extends PageSession {
  token: string;
}

/** What a route needs: no session (sign-in), any operator (reads, sign-out), or an admin (every other change). */
export type Access = 'public' | 'operator' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    console?: Access;
  }
}

const sessions = new WeakMap<FastifyRequest, ConsoleSession>();

export function setSession(request: FastifyRequest, session: ConsoleSession): void {
  sessions.set(request, session);
}

export function sessionOf(request: FastifyRequest): ConsoleSession | undefined {
  return sessions.get(request);
}

/** The session of a request that passed the console's hooks (every route but `public` ones). */
export function session(request: FastifyRequest): ConsoleSession {
  const found = sessions.get(request);
  if (!found) throw new Error('console route without a session');
  return found;
}

export const operatorOnly = { config: { console: 'operator' as const } };

/** The console's own refusals, before a route's schema (src/http/routes/console.ts; listed in /openapi.json). */
export const consoleRefusals = {
  crossSite: new ApiError('forbidden', 'The request did not come from the console.'),
  signedOut: new ApiError('unauthorized', 'Sign in to the console first.'),
  csrf: new ApiError('forbidden', 'The CSRF token is missing or wrong: reload the page.'),
  viewer: new ApiError('forbidden', 'A viewer cannot change anything.'),
};

/** The refusals a console route may answer before its own, by its access and method. */
export function refusalsOf(access: Access, method: string): ApiError[] {
  const change = method !== 'GET';
  return [
    ...(change ? [consoleRefusals.crossSite] : []),
    ...(access === 'public' ? [] : [consoleRefusals.signedOut]),
    ...(change && access !== 'public' ? [consoleRefusals.csrf] : []),
    ...(change && access === 'admin' ? [consoleRefusals.viewer] : []),
  ];
}

export function isApi(request: FastifyRequest): boolean {
  return request.url.startsWith('/console/api/');
}

/**
 * A page answers a browser (it asks for HTML, or posts a form); anything else, and every /console/api
 * request, gets the API's {code, error}, as the mail pages do.
 */
export function wantsHtml(request: FastifyRequest): boolean {
  if (isApi(request)) return false;
  return (request.headers.accept ?? '').includes('text/html') || (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
}

export function refuse(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  if (!wantsHtml(request)) return consoleHeaders(reply).status(error.status).send(error.toBody());
  const title = error.status === 401 ? 'Sign in needed' : error.status === 403 ? 'Not allowed' : error.status === 404 ? 'Not found' : 'Not done';
  return messagePage(reply, error.status, title, error.message);
}

/** A field of a form the route's schema declares as text (src/http/console/input.ts); '' when left out. */
export function field(body: unknown, name: string): string {
  return (body as Record<string, string> | null | undefined)?.[name] ?? '';
}

/** After a change made by a form: back to the page (303), with a notice for it to show. */
export function backTo(reply: FastifyReply, path: string, notice?: string): FastifyReply {
  const to = notice ? `${path}${path.includes('?') ? '&' : '?'}done=${encodeURIComponent(notice)}` : path;
  return consoleHeaders(reply).redirect(to, 303);
}

/** The `done` notice a redirect carried: only known words are shown (no text from the URL reaches the page unchecked). */
export function notice(request: FastifyRequest, known: Record<string, string>): string | undefined {
  const key = (request.query as Record<string, unknown> | undefined)?.done;
  return typeof key === 'string' ? known[key] : undefined;
}
